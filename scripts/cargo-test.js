#!/usr/bin/env node
'use strict'
// The Rust tests of `npm test`: `cargo test --workspace --target <host
// triple>` (extra arguments are passed on). With `--target`, cargo builds
// into target/<triple>/debug, where `node scripts/build-addon.js --debug`
// (napi build, which always passes `--target`) has already compiled the
// same dependencies: the two share them instead of compiling them twice.
// The triple comes from `rustc -vV` (scripts/build-addon.js `hostTriple`).

const { spawnSync } = require('node:child_process')
const path = require('node:path')
const { hostTriple } = require('./build-addon.js')

const args = ['test', '--workspace', '--target', hostTriple(), ...process.argv.slice(2)]
const r = spawnSync('cargo', args, { cwd: path.join(__dirname, '..'), stdio: 'inherit' })
if (r.error) {
  console.error(`cargo-test: cannot run cargo: ${r.error.message}`)
  process.exit(1)
}
process.exit(r.status ?? 1)
