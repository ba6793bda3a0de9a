#!/usr/bin/env node
'use strict'
// The Rust tests of `npm test`: `cargo test --workspace --profile quick
// --target <host triple>` (extra arguments are passed on). With that
// profile and `--target`, cargo builds into <target dir>/<triple>/quick,
// where `node scripts/build-addon.js --debug` (napi build, which always
// passes `--target`) has already compiled the same dependencies with the
// same profile: the two share them instead of compiling them twice (the
// crates a dev-dependency's features reach, tokio's `test-util`, excepted).
// The triple comes from `rustc -vV` (scripts/build-addon.js `hostTriple`).

const { spawnSync } = require('node:child_process')
const path = require('node:path')
const { QUICK_PROFILE, hostTriple } = require('./build-addon.js')

const args = ['test', '--workspace', '--profile', QUICK_PROFILE, '--target', hostTriple(), ...process.argv.slice(2)]
const started = Date.now()
const r = spawnSync('cargo', args, { cwd: path.join(__dirname, '..'), stdio: 'inherit' })
if (r.error) {
  console.error(`cargo-test: cannot run cargo: ${r.error.message}`)
  process.exit(1)
}
console.error(`cargo-test: cargo ${args.join(' ')} exited with ${r.status} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
process.exit(r.status ?? 1)
