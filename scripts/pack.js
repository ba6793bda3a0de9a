#!/usr/bin/env node
'use strict'
// Packs what `npm publish` would publish, the napi-rs way: the main package
// with `optionalDependencies` on every per-platform package at its own
// version (what `napi prepublish` adds before publishing; they are not in the
// repository's package.json, where `npm ci` would fail on the unpublished
// names), and this machine's per-platform package (npm/<platform>/ with the
// binary `npm run build` made copied in, as `napi artifacts` does).
// Nothing in the working tree changes: both are staged in a temporary folder.
//
//   node scripts/pack.js <out dir>   # prints {"main": <tgz>, "platform": <tgz>, …} as JSON

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { SUPPORTED, platformSuffix } = require('../lib/host/load.js')

const ROOT = path.join(__dirname, '..')
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** `npm pack --json` in `dir` into `outDir`: `{ filename, files: [{ path, size }], size, unpackedSize }`. */
function npmPack(dir, outDir) {
  const out = execFileSync(NPM, ['pack', '--json', '--pack-destination', outDir], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const [info] = JSON.parse(out)
  return { ...info, tarball: path.join(outDir, info.filename) }
}

/** The files `npm pack` would take from the repository (its `files`, LICENSE, README, package.json). */
function packedFiles() {
  const out = execFileSync(NPM, ['pack', '--dry-run', '--json'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  return JSON.parse(out)[0].files.map((f) => f.path)
}

/** The main package.json as published: `optionalDependencies` on each `napi.targets` package. */
function publishedManifest() {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  const suffixOf = new Map(SUPPORTED.map(([suffix, triple]) => [triple, suffix]))
  const optional = {}
  for (const triple of manifest.napi.targets) {
    const suffix = suffixOf.get(triple)
    if (!suffix) throw new Error(`pack: napi.targets has ${triple}, which lib/host/load.js SUPPORTED does not list`)
    optional[`${manifest.name}-${suffix}`] = manifest.version
  }
  manifest.optionalDependencies = { ...manifest.optionalDependencies, ...optional }
  return manifest
}

/**
 * Packs both packages into `outDir`; returns `{ main, platform }`, each
 * `npm pack --json`'s answer plus `tarball` (absolute path).
 */
function pack(outDir, { suffix = platformSuffix() } = {}) {
  fs.mkdirSync(outDir, { recursive: true })
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'ahp-pack-'))
  try {
    const main = path.join(stage, 'main')
    for (const file of packedFiles()) {
      fs.mkdirSync(path.dirname(path.join(main, file)), { recursive: true })
      fs.copyFileSync(path.join(ROOT, file), path.join(main, file))
    }
    fs.writeFileSync(path.join(main, 'package.json'), JSON.stringify(publishedManifest(), null, 2) + '\n')
    const platformDir = path.join(stage, suffix)
    fs.mkdirSync(platformDir)
    const template = path.join(ROOT, 'npm', suffix)
    const manifest = JSON.parse(fs.readFileSync(path.join(template, 'package.json'), 'utf8'))
    for (const file of fs.readdirSync(template)) fs.copyFileSync(path.join(template, file), path.join(platformDir, file))
    const binary = path.join(ROOT, manifest.main)
    if (!fs.existsSync(binary)) throw new Error(`pack: ${manifest.main} is missing; run \`npm run build\` first`)
    fs.copyFileSync(binary, path.join(platformDir, manifest.main))
    return { main: npmPack(main, outDir), platform: npmPack(platformDir, outDir) }
  } finally {
    fs.rmSync(stage, { recursive: true, force: true })
  }
}

module.exports = { pack, publishedManifest }

if (require.main === module) {
  const out = process.argv[2]
  if (!out) {
    console.error('usage: node scripts/pack.js <out dir>')
    process.exit(2)
  }
  const { main, platform } = pack(path.resolve(out))
  process.stdout.write(JSON.stringify({ main: main.tarball, platform: platform.tarball }) + '\n')
}
