#!/usr/bin/env node
'use strict'
// Builds the AHP reducers for WebAssembly (`npm run build:wasm`, and the
// tail of `npm run build`): the `ahp-reducers-json` crate (reducers/) for
// `wasm32-unknown-unknown` with the workspace's `wasm` profile (release,
// size-optimized; Cargo.toml), copied to lib/ahp-reducers.wasm, which
// lib/reducers-wasm.js loads by default in Node (gitignored: a build output).
//
// Adds the target with `rustup target add wasm32-unknown-unknown` when
// rustup is there and the target is missing. Exits non-zero, saying why,
// when a step fails.

const { spawnSync } = require('node:child_process')
const { copyFileSync, statSync } = require('node:fs')
const { join } = require('node:path')
const { spawnLocked, targetDir } = require('./build-addon.js')

const ROOT = join(__dirname, '..')
const TARGET = 'wasm32-unknown-unknown'
const PROFILE = 'wasm'
const OUTPUT = join(ROOT, 'lib', 'ahp-reducers.wasm')

/** Runs `cmd args` in the repository (output shown); returns the exit status, or null if it cannot start. */
function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', ...options })
  return r.error ? null : r.status
}

function fail(message) {
  console.error(`build-wasm: ${message}`)
  process.exit(1)
}

/** Adds the wasm32 target through rustup when rustup exists and the target is missing. */
function ensureTarget() {
  const listed = spawnSync('rustup', ['target', 'list', '--installed'], { cwd: ROOT, encoding: 'utf8' })
  if (listed.error || listed.status !== 0) {
    // No rustup (a distribution's Rust, say): cargo says below whether the target is there.
    return
  }
  if (listed.stdout.split('\n').some((l) => l.trim() === TARGET)) return
  console.error(`build-wasm: adding the ${TARGET} target (rustup target add ${TARGET})`)
  if (run('rustup', ['target', 'add', TARGET]) !== 0) fail(`rustup target add ${TARGET} failed`)
}

/** The `.wasm` file cargo reports for the crate (from `--message-format=json-render-diagnostics`). */
function artifactOf(stdout) {
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    const m = JSON.parse(line)
    if (m.reason === 'compiler-artifact' && m.target?.name === 'ahp_reducers_json') {
      const wasm = m.filenames.find((f) => f.endsWith('.wasm'))
      if (wasm) return wasm
    }
  }
  return undefined
}

function main() {
  // The whole build and copy under the target dir's build lock
  // (scripts/build-addon.js `spawnLocked`): the .wasm is copied out of a
  // target dir other clones may share, from a file name they all write.
  if (!process.env.AHP_WASM_LOCKED) {
    const r = spawnLocked(targetDir(), process.execPath, [__filename, ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, AHP_WASM_LOCKED: '1' } })
    if (r.error) fail(`cannot run ${process.execPath}: ${r.error.message}`)
    process.exit(r.status ?? 1)
  }
  ensureTarget()
  const started = Date.now()
  const args = ['build', '-p', 'ahp-reducers-json', '--target', TARGET, '--profile', PROFILE, '--message-format=json-render-diagnostics']
  const r = spawnSync('cargo', args, { cwd: ROOT, stdio: ['inherit', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 64 << 20 })
  if (r.error) fail(`cargo did not start (is Rust installed?): ${r.error.message}`)
  if (r.status !== 0) fail(`cargo build for ${TARGET} failed (exit ${r.status})`)
  const built = artifactOf(r.stdout)
  if (!built) fail('cargo reported no .wasm artifact for ahp-reducers-json')
  try {
    copyFileSync(built, OUTPUT)
  } catch (err) {
    fail(`cannot copy ${built} to ${OUTPUT}: ${err.message}`)
  }
  const kib = (statSync(OUTPUT).size / 1024).toFixed(0)
  console.error(`build-wasm: lib/ahp-reducers.wasm (${kib} KiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

main()
