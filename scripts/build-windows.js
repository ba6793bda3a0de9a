#!/usr/bin/env node
'use strict'
// Builds the Windows x64 addon (the binding crate, binding/) on Linux
// (`npm run build:windows`): Rust target x86_64-pc-windows-gnu, linked by
// mingw-w64, written to ahp-mcp-host.win32-x64-msvc.node at the package
// root with binding.js / binding.d.ts beside it.
//
// Why that name: Node for Windows is an MSVC build, so binding.js (napi's
// loader) requires `ahp-mcp-host.win32-x64-msvc.node` there (the `-gnu`
// name only under a MinGW-built Node). The addon is a plain DLL whose
// Node-API calls are resolved from node.exe when it loads (napi-sys
// `dyn-symbols`): the mingw build loads in MSVC Node the same way. The
// package published for Windows is built with MSVC by the release workflow
// (.github/workflows/release.yml); this build is the one tested here
// (`npm run test:windows`, Node for Windows under Wine).
//
// napi's build script on windows-gnu panics unless it finds a libnode.dll:
// a placeholder is built from scripts/windows/libnode-placeholder.c into
// target/windows-tools/ (the addon imports nothing from it).
//
// Profiles:
//   (default) release, as it ships ([profile.release]: stripped, thin LTO);
//   --debug   the `windows-test` profile (Cargo.toml: the dev profile
//             without debug info), faster to build, what .ci/run tests.
// Records what it built in <target dir>/ahp-windows-build.json ({profile,
// triple, file, seconds, bytes}); the target dir is AHP_WINDOWS_TARGET_DIR
// when set (.ci/run: a cache outside the clone, keyed by toolchain and
// Cargo.lock, so later runs reuse the compiled dependencies).
//
// Needs: `x86_64-w64-mingw32-gcc` and `nasm` (Debian: apt-get install
// gcc-mingw-w64-x86-64 nasm) and `rustup target add x86_64-pc-windows-gnu`.
//
// `--stage <dir>`: the .node, binding.js and binding.d.ts go to <dir>, the
// clone is left alone (.ci/run builds it that way while the Linux JS tests
// run, then copies the .node in for `npm run test:windows`).
//
//   node scripts/build-windows.js [--debug] [--stage <dir>]

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const { CRATE, spawnLocked } = require('./build-addon.js')

const ROOT = path.join(__dirname, '..')
const TRIPLE = 'x86_64-pc-windows-gnu'
const CC = 'x86_64-w64-mingw32-gcc'
/** The file binding.js loads in Node for Windows x64 (see above). */
const OUTPUT = 'ahp-mcp-host.win32-x64-msvc.node'
/** The file `napi build --platform` writes for x86_64-pc-windows-gnu. */
const NAPI_OUTPUT = 'ahp-mcp-host.win32-x64-gnu.node'

function fail(message) {
  console.error(`build-windows: ${message}`)
  process.exit(1)
}

/** AHP_WINDOWS_TARGET_DIR (a cache .ci/run keeps outside the clone), else CARGO_TARGET_DIR, else target/. */
function targetDir() {
  return process.env.AHP_WINDOWS_TARGET_DIR || process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target')
}

/** Whether `cmd` runs (`cmd --version` exits 0). */
function runs(cmd) {
  const r = spawnSync(cmd, ['--version'], { stdio: 'ignore' })
  return !r.error && r.status === 0
}

/** Fails, saying what to install, when the cross tools are missing. */
function checkTools() {
  const missing = [CC, 'nasm'].filter((t) => !runs(t))
  if (missing.length) {
    fail(`${missing.join(' and ')} not found: install them (Debian/Ubuntu: apt-get install gcc-mingw-w64-x86-64 nasm)`)
  }
  const r = spawnSync('rustup', ['target', 'list', '--installed'], { encoding: 'utf8' })
  if (!r.error && r.status === 0 && !r.stdout.split('\n').includes(TRIPLE)) {
    const add = spawnSync('rustup', ['target', 'add', TRIPLE], { stdio: 'inherit' })
    if (add.status !== 0) fail(`rustup target add ${TRIPLE} failed`)
  }
}

/** Builds target/windows-tools/libnode.dll (once per source change); returns its folder. */
function placeholderLibnode() {
  const dir = path.join(targetDir(), 'windows-tools')
  const source = path.join(__dirname, 'windows', 'libnode-placeholder.c')
  const dll = path.join(dir, 'libnode.dll')
  if (fs.existsSync(dll) && fs.statSync(dll).mtimeMs >= fs.statSync(source).mtimeMs) return dir
  fs.mkdirSync(dir, { recursive: true })
  const r = spawnSync(CC, ['-shared', '-O2', '-o', dll, source], { stdio: 'inherit' })
  if (r.error || r.status !== 0) fail(`${CC} could not build the placeholder ${dll}`)
  return dir
}

/** The value after `flag` in argv, or undefined. */
function option(flag) {
  const at = process.argv.indexOf(flag)
  if (at < 0) return undefined
  const value = process.argv[at + 1]
  if (!value || value.startsWith('--')) fail(`${flag} needs a value`)
  return value
}

function main() {
  const debug = process.argv.includes('--debug')
  const stage = option('--stage')
  const outDir = stage ? path.resolve(stage) : ROOT
  checkTools()
  const env = { ...process.env, LIBNODE_PATH: placeholderLibnode() }
  const [manifestFlag, manifest] = CRATE
  const args = ['build', manifestFlag, manifest, '--output-dir', outDir, '--platform', '--target', TRIPLE, '--target-dir', targetDir(), '--js', 'binding.js', '--dts', 'binding.d.ts']
  args.push(...(debug ? ['--profile', 'windows-test'] : ['--release']))
  const stamp = path.join(targetDir(), 'ahp-windows-build.json')
  fs.rmSync(stamp, { force: true })
  fs.mkdirSync(outDir, { recursive: true })
  const napi = path.join(ROOT, 'node_modules', '.bin', 'napi')
  const started = Date.now()
  // Under the target dir's build lock (scripts/build-addon.js `spawnLocked`).
  const r = spawnLocked(targetDir(), napi, args, { cwd: ROOT, stdio: 'inherit', env })
  if (r.error) fail(`cannot run ${napi}: ${r.error.message}`)
  if (r.status !== 0) fail(`napi ${args.join(' ')} exited with ${r.status}`)
  fs.renameSync(path.join(outDir, NAPI_OUTPUT), path.join(outDir, OUTPUT))
  const seconds = Math.round((Date.now() - started) / 100) / 10
  const bytes = fs.statSync(path.join(outDir, OUTPUT)).size
  const profile = debug ? 'windows-test' : 'release'
  fs.writeFileSync(stamp, JSON.stringify({ profile, triple: TRIPLE, file: OUTPUT, seconds, bytes }) + '\n')
  console.error(`build-windows: ${OUTPUT} (${profile}, ${(bytes / 1e6).toFixed(1)} MB) in ${seconds} s`)
}

module.exports = { OUTPUT, TRIPLE }

if (require.main === module) main()
