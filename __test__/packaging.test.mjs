// Packaging metadata and the native loader (issue 14, "Only one platform"):
// per-platform packages for every napi target, the loader's error on a
// platform without a binary, LICENSE, `repository`, `files`, the stripped
// release profile. The packed tarballs themselves are checked by
// consumer.test.mjs.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { tmpDir } from './helpers/host.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const { SUPPORTED } = require('../lib/host/load.js')

test('package.json: napi.targets are the loader\'s supported list, each with an npm/<platform>/ package (os, cpu, libc, main)', () => {
  assert.deepEqual(pkg.napi.targets, SUPPORTED.map(([, triple]) => triple))
  assert.ok(pkg.napi.targets.length > 1, 'more than one platform')
  const dirs = readdirSync(join(ROOT, 'npm')).sort()
  assert.deepEqual(dirs, SUPPORTED.map(([suffix]) => suffix).sort())
  for (const [suffix, triple] of SUPPORTED) {
    const sub = JSON.parse(readFileSync(join(ROOT, 'npm', suffix, 'package.json'), 'utf8'))
    const [platform, arch, abi] = suffix.split('-')
    assert.equal(sub.name, `${pkg.name}-${suffix}`)
    assert.equal(sub.version, pkg.version, `${suffix}: same version as the main package`)
    assert.deepEqual(sub.os, [platform])
    assert.deepEqual(sub.cpu, [arch])
    if (platform === 'linux') assert.deepEqual(sub.libc, [abi === 'musl' ? 'musl' : 'glibc'])
    else assert.equal(sub.libc, undefined)
    assert.equal(sub.main, `${pkg.napi.binaryName}.${suffix}.node`)
    assert.deepEqual(sub.files, [sub.main])
    assert.equal(sub.license, pkg.license)
    assert.deepEqual(sub.repository, pkg.repository)
    assert.match(readFileSync(join(ROOT, 'npm', suffix, 'README.md'), 'utf8'), new RegExp(triple))
  }
})

test('package.json: LICENSE (MIT) and repository; `files` packs no stray .node and ships the docs the README names', () => {
  assert.equal(pkg.license, 'MIT')
  const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8')
  assert.match(license, /^MIT License/)
  assert.match(license, /Permission is hereby granted, free of charge/)
  assert.equal(pkg.repository?.type, 'git')
  assert.match(pkg.repository?.url ?? '', /^git\+https:\/\/github\.com\/[^/]+\/[^/]+\.git$/)
  assert.ok(pkg.files.includes('LICENSE'))
  assert.ok(!pkg.files.some((f) => f.includes('.node')), `files: ${pkg.files.join(', ')}`)
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const named = [...readme.matchAll(/`(docs\/[\w./-]+\.md)`|\]\((docs\/[\w./-]+\.md)(?:#[\w-]*)?\)/g)].map((m) => m[1] ?? m[2])
  assert.ok(named.some((doc) => doc.startsWith('docs/guide/')), 'the README names the guides')
  for (const doc of named) assert.ok(existsSync(join(ROOT, doc)), doc)
  assert.ok(pkg.files.includes('docs/'), 'docs/ ships, so the README\'s docs/*.md references work from the tarball')
})

test('Cargo.toml: the release profile the addon ships with strips symbols and debug info', () => {
  const cargo = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8')
  const release = /\[profile\.release\]\n([\s\S]*?)(?:\n\[|$)/.exec(cargo)?.[1] ?? ''
  assert.match(release, /^strip = true$/m)
  assert.match(pkg.scripts.build, /scripts\/build-addon\.js/)
  assert.doesNotMatch(pkg.scripts.build, /--debug/)
})

test('npm test and the demo build the debug addon; .ci/run checks the release build after npm test; bench uses release', () => {
  assert.match(pkg.scripts.test, /^npm run build:test && /)
  assert.match(pkg.scripts['build:test'], /scripts\/build-addon\.js --debug/)
  // The demo builds (the `quick` profile, quicker from nothing than the
  // release build) before it runs: never a stale or missing addon.
  assert.match(pkg.scripts.demo, /^npm run build:debug && /)
  assert.match(pkg.scripts['build:debug'], /^node scripts\/build-addon\.js --debug$/)
  const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8')
  const at = ci.indexOf('\nnpm test\n')
  assert.ok(at >= 0, '.ci/run runs npm test')
  const afterTest = ci.slice(at)
  // The release addon built beside `npm test` (--stage; without PGO, for
  // time: the same code), put into the clone; the PGO training run checked on it.
  assert.match(ci, /\nbg release-build \d+ node scripts\/build-addon\.js --no-pgo --stage "\$stage\/release"\n/)
  assert.match(afterTest, /\nnode scripts\/pgo-train\.mjs --check --addon /)
  assert.match(afterTest, /\nnode scripts\/build-addon\.js --unstage "\$stage\/release"\n/)
  assert.match(afterTest, /AHP_REQUIRE_RELEASE=1 node --test [^\n]*__test__\/consumer\.test\.mjs/)
  // bench/build.mjs rebuilds anything but a release build before measuring.
  assert.match(readFileSync(join(ROOT, 'bench', 'build.mjs'), 'utf8'), /stamp\.profile !== 'debug'/)
})

/** Runs `require(<repo>)` in a Node whose process.platform / arch are faked by a preload. */
function requireAs(t, platform, arch) {
  const dir = tmpDir(t)
  const preload = join(dir, 'fake-platform.cjs')
  writeFileSync(
    preload,
    `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} })\n` +
      `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} })\n`,
  )
  const script = `try { require(${JSON.stringify(ROOT)}); console.log('loaded') } catch (e) { console.log(JSON.stringify({ message: e.message, code: e.code, cause: String(e.cause && e.cause.message) })) }`
  const r = spawnSync(process.execPath, ['--require', preload, '-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout.trim())
}

test('loader: on a platform without a binary, require() names the platform and the supported list (not napi\'s "npm has a bug")', (t) => {
  for (const [platform, arch] of [['win32', 'ia32'], ['freebsd', 'x64'], ['linux', 'riscv64']]) {
    const e = requireAs(t, platform, arch)
    assert.equal(e.code, 'ERR_AHP_UNSUPPORTED_PLATFORM', JSON.stringify(e))
    assert.match(e.message, /has no native binary for this platform/)
    assert.ok(e.message.includes(`platform ${platform}, arch ${arch}`), e.message)
    for (const [suffix] of SUPPORTED) assert.ok(e.message.includes(suffix), `${suffix} in: ${e.message}`)
    assert.doesNotMatch(e.message.split('(Cannot find')[0], /npm has a bug/)
    assert.match(e.cause, /Cannot find native binding/)
  }
})

test('loader: on a supported platform whose optional package is missing, require() names the package to reinstall', (t) => {
  const e = requireAs(t, 'darwin', 'arm64')
  assert.equal(e.code, 'ERR_AHP_UNSUPPORTED_PLATFORM')
  assert.match(e.message, /platform darwin, arch arm64/)
  assert.match(e.message, /optional package ahp-mcp-host-darwin-arm64 is missing or failed to load/)
  assert.match(e.message, /Supported: linux-x64-gnu/)
  const win = requireAs(t, 'win32', 'x64')
  assert.equal(win.code, 'ERR_AHP_UNSUPPORTED_PLATFORM')
  assert.match(win.message, /optional package ahp-mcp-host-win32-x64-msvc is missing or failed to load/)
})
