// What `npm run bench` runs on, built when missing or stale: the RELEASE
// addon (scripts/build-addon.js, which records the profile it built in
// target/ahp-addon-build.json) and the floor client Bt (bench/floor, `cargo
// build --release -p ahp-bench-floor`, in the workspace target dir).

import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const TARGET = process.env.CARGO_TARGET_DIR || join(ROOT, 'target')
export const FLOOR = join(TARGET, 'release', process.platform === 'win32' ? 'ahp-bench-floor.exe' : 'ahp-bench-floor')
/** Where scripts/build-addon.js records what it last built into this clone (target/ of the clone, whatever CARGO_TARGET_DIR says). */
export const STAMP = join(ROOT, 'target', 'ahp-addon-build.json')

/** The newest modification time (ms) of the files under `paths` (recursively). */
function newest(paths) {
  let max = 0
  const walk = (p) => {
    let st
    try { st = statSync(p) } catch { return }
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e))
    else max = Math.max(max, st.mtimeMs)
  }
  for (const p of paths) walk(join(ROOT, p))
  return max
}

const mtime = (file) => { try { return statSync(file).mtimeMs } catch { return 0 } }

/** The addon binary of this platform in the package root, if any. */
export function addonFile() {
  const hit = readdirSync(ROOT).find((f) => /^ahp-mcp-host\..+\.node$/.test(f))
  return hit ? join(ROOT, hit) : undefined
}

/** What target/ahp-addon-build.json says about the addon (`profile`: release, release-symbols, debug). */
export function addonStamp() {
  try { return JSON.parse(readFileSync(STAMP, 'utf8')) } catch { return undefined }
}

function run(cmd, args) {
  process.stderr.write(`bench: ${cmd} ${args.join(' ')}\n`)
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`)
}

/**
 * Builds the release addon when it is missing, not a release build (per the
 * stamp), or older than the Rust sources; then the floor crate (cargo
 * decides what is stale). Throws when a build fails.
 */
export function ensureBuilt() {
  const src = newest(['src', 'reducers/src', 'binding/src', 'binding/Cargo.toml', 'build.rs', 'Cargo.toml', 'Cargo.lock'])
  const file = addonFile()
  const stamp = addonStamp()
  const release = stamp && stamp.profile !== 'debug'
  if (!file || !release || mtime(file) < src) {
    const why = !file ? 'no addon' : !release ? `addon is a ${stamp?.profile ?? 'unrecorded'} build` : 'addon older than the sources'
    process.stderr.write(`bench: ${why}: building the release addon\n`)
    run(process.execPath, ['scripts/build-addon.js'])
  }
  run('cargo', ['build', '--release', '--quiet', '-p', 'ahp-bench-floor'])
  return { file: addonFile(), stamp: addonStamp() }
}
