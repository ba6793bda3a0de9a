// Lazy start from a persisted tool cache (issue 29, item 2): a lazy server
// publishes its last known tools from `<dataDir>/.tool-cache` without
// starting; its first call starts it; a tool that changed meanwhile fails
// the call closed (`stale_tool`) and the fresh list is published; an idle
// lazy server is stopped with its tools still published; a cache written
// under one configuration digest is never used under another; no secret
// (env value, header value) ever reaches the cache. Real SDK servers
// (lazy-tools-server.mjs) over stdio and Streamable HTTP on 127.0.0.1.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, chownSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { createRequire } from 'node:module'
import {
  ROOT, NODE, FIXTURES, newHost, sharedDataDir, tmpDir, waitFor, waitState, findCustomization, rejectsWith, startHttpFixture, writePlugin, stateHistory,
} from './helpers/host.mjs'

const require = createRequire(import.meta.url)
const { AhpStateMirror } = require(`${ROOT}/index.js`)
const SCRIPT = join(FIXTURES, 'lazy-tools-server.mjs')
const ENV_CANARY = 'lazy-env-canary-7f3a9c21d4e8'
const HEADER_CANARY = 'lazy-header-canary-2b6e8d04a1f9'
const SESSION = 'ahp-session:/lazy-start'


/** A stdio entry of the fixture logging its starts to `log`. */
function entry(log, { env = {}, args = [] } = {}) {
  return { type: 'stdio', command: NODE, args: [SCRIPT, ...args], env: { START_LOG: log, SECRET_THING: ENV_CANARY, ...env } }
}

const starts = (log) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0)

function cacheFiles(dataDir) {
  const dir = join(dataDir, '.tool-cache')
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => join(dir, f)) : []
}

const toolsOf = (host, id) => host.listTools().filter((x) => x.customizationId === id)
const stateOf = (host, id) => findCustomization(host.getState(), id)?.state

/**
 * Runs a host on `dataDir` until server `name` (lazy) is ready, then
 * disposes it at once: `dispose()` waits for the cache write in flight, so
 * the listing is in the cache when it resolves.
 */
async function warm(hostOn, dataDir, name, config) {
  const { host } = hostOn({ start: 'lazy' })
  await host.addServer({ name, config })
  await waitState(host, name, 'ready')
  await host.dispose()
  assert.equal(cacheFiles(dataDir).length, 1, 'written by the time dispose resolved')
}

test('a lazy server without a cache starts at once, caches its tools without the env secret, and stops when idle with its tools still published', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-lazy-data-')
  const log = join(tmpDir(t), 'starts.log')
  const { host, logs, actions } = hostOn({ start: 'lazy', limits: { idleStopMs: 300 } })
  await host.addServer({ name: 'lazy', config: entry(log) })
  // Read from the actions, not polled: the idle stop may come before a poll would see `ready`.
  await waitFor(() => stateHistory(actions, 'lazy').some((s) => s.kind === 'ready'), { what: 'ready' })
  await waitFor(() => cacheFiles(dataDir).length === 1, { what: 'the cache file' })
  const [file] = cacheFiles(dataDir)
  const text = readFileSync(file, 'utf8')
  assert.ok(!text.includes(ENV_CANARY), 'the env value is not in the cache')
  assert.match(text, /env=\[redacted\]/)
  if (process.platform !== 'win32') {
    assert.equal(statSync(file).mode & 0o777, 0o600)
    assert.equal(statSync(join(dataDir, '.tool-cache')).mode & 0o777, 0o700)
  }
  await waitState(host, 'lazy', 'stopped', { timeout: 10_000 })
  // getState() leads the delivery of actions to listeners: wait for the delivered one.
  await waitFor(() => stateHistory(actions, 'lazy').some((s) => s.kind === 'stopped'), { what: 'the stopped action delivered' })
  assert.deepEqual(stateHistory(actions, 'lazy').map((s) => s.kind), ['ready', 'stopped'])
  assert.deepEqual(toolsOf(host, 'lazy').map((x) => x.toolName).sort(), ['echo', 'probe', 'whoami'])
  await waitFor(() => host.processCount === 0, { what: 'the idle server gone' })
  assert.ok(logs.some((l) => l.serverId === 'lazy' && /idle: stopped/.test(l.message)), 'the idle stop is logged')
  assert.equal(starts(log), 1)
})

test('a lazy server with a warm cache is not started: its tools are published from the cache, its first call starts it, and the replayed state equals the host state', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-lazy-data-')
  const log = join(tmpDir(t), 'starts.log')
  await warm(hostOn, dataDir, 'lazy', entry(log))
  assert.equal(starts(log), 1)

  const { host, actions } = hostOn({ session: SESSION, start: 'lazy' })
  const mirror = new AhpStateMirror({ session: SESSION, clientId: 'lazy-ui' })
  host.on('action', (e) => mirror.receive(e))
  const changes = []
  host.on('toolsChanged', (e) => changes.push(e))
  await host.addServer({ name: 'lazy', config: entry(log) })
  // The event follows the envelope of the publication: both have reached JS then.
  await waitFor(() => changes.length > 0, { what: 'the cached tools published' })
  assert.equal(toolsOf(host, 'lazy').length, 3)
  assert.deepEqual(changes.map((c) => [c.serverId, c.reason, c.tools]), [['lazy', 'cached', 3]])
  assert.deepEqual(stateOf(host, 'lazy'), { kind: 'stopped' })
  assert.equal(host.processCount, 0)
  assert.equal(starts(log), 1, 'not started')
  // Created `stopped` (never `starting`), its tools in one serverToolsChanged.
  const types = actions.map((e) => e.action.type)
  assert.deepEqual(types, ['session/customizationUpdated', 'session/serverToolsChanged'])
  assert.deepEqual(actions[0].action.customization.state, { kind: 'stopped' })
  // The AHP state of a lazy server not running, and its tools, replay through the ahp reducers.
  await waitFor(() => isDeepStrictEqual(mirror.session, host.getState()), { what: 'mirror = host state (stopped, cached tools)' })
  assert.deepEqual((host.getState().serverTools ?? []).map((x) => x.name).sort(), toolsOf(host, 'lazy').map((x) => x.name).sort())

  const result = await host.callTool({ serverId: 'lazy', name: 'echo', arguments: { text: 'hello lazy' } })
  assert.deepEqual(result.content, [{ type: 'text', text: 'hello lazy' }])
  assert.equal(starts(log), 2, 'the call started it')
  assert.deepEqual(stateOf(host, 'lazy'), { kind: 'ready' })
  await waitFor(() => isDeepStrictEqual(mirror.session, host.getState()), { what: 'mirror = host state (ready)' })
})

test('a cached tool that changed by the start fails the call closed with stale_tool, and the fresh list is published', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-lazy-data-')
  const log = join(tmpDir(t), 'starts.log')
  const description = join(tmpDir(t), 'description.txt')
  writeFileSync(description, 'version one')
  const config = entry(log, { env: { DESCRIPTION_FILE: description } })
  await warm(hostOn, dataDir, 'lazy', config)
  const { host } = hostOn({ start: 'lazy' })
  // The same configuration (digest), another tool list once started.
  writeFileSync(description, 'version two')
  await host.addServer({ name: 'lazy', config })
  await waitFor(() => toolsOf(host, 'lazy').length === 3, { what: 'the cached tools' })
  const cached = toolsOf(host, 'lazy').find((x) => x.toolName === 'echo')
  assert.equal(cached.description, 'version one')
  const err = await rejectsWith(() => host.callTool({ name: cached.name, arguments: { text: 'x' } }), 'stale_tool')
  assert.equal(err.data.reason, 'changed')
  assert.equal(stateOf(host, 'lazy').kind, 'ready', 'the server started')
  assert.equal(toolsOf(host, 'lazy').find((x) => x.toolName === 'echo').description, 'version two')
  // Read again, the call goes through.
  const again = await host.callTool({ name: cached.name, arguments: { text: 'second' } })
  assert.deepEqual(again.content, [{ type: 'text', text: 'second' }])
  // An unchanged tool of the cached list was callable as it was.
  assert.match((await host.callTool({ serverId: 'lazy', name: 'whoami', arguments: {} })).content[0].text, /^pid \d+$/)
})

test('a cache written under one configuration digest is never used under another; an eager server never uses it', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-lazy-data-')
  const log = join(tmpDir(t), 'starts.log')
  await warm(hostOn, dataDir, 'lazy', entry(log))
  const { host } = hostOn({ start: 'lazy' })
  const reasons = []
  host.on('toolsChanged', (e) => reasons.push([e.serverId, e.reason]))
  // Another argument: another digest, so no cache: it starts at once.
  await host.addServer({ name: 'lazy', config: entry(log, { args: ['another-configuration'] }) })
  await waitState(host, 'lazy', 'ready')
  // The same configuration as the cache, but eager by its own setting.
  await host.addServer({ name: 'lazy2', config: entry(log), start: 'eager' })
  await waitState(host, 'lazy2', 'ready')
  assert.deepEqual(reasons.filter(([, r]) => r === 'cached'), [])
  assert.equal(starts(log), 3)
})

test('Streamable HTTP: a header value the server leaks into its tool list never reaches the cache', async (t) => {
  const server = await startHttpFixture(t, 'lazy-tools-server.mjs', { SECRET_THING: 'not-configured-here' }, ['http'])
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-lazy-data-')
  const { host } = hostOn()
  const config = { type: 'streamable-http', url: server.url, headers: { 'x-api-key': HEADER_CANARY } }
  await host.addServer({ name: 'remote', config, start: 'lazy', idleStopMs: 0 })
  await waitState(host, 'remote', 'ready')
  const probe = toolsOf(host, 'remote').find((x) => x.toolName === 'probe')
  assert.match(probe.description, /header=\[redacted\]/, 'redacted in the catalogue too')
  await waitFor(() => cacheFiles(dataDir).length === 1, { what: 'the cache file' })
  const text = readFileSync(cacheFiles(dataDir)[0], 'utf8')
  assert.ok(!text.includes(HEADER_CANARY), 'the header value is not in the cache')
  assert.match(text, /header=\[redacted\]/)
  // idleStopMs 0: never stopped for idleness.
  await new Promise((r) => setTimeout(r, 300))
  assert.equal(stateOf(host, 'remote').kind, 'ready')
})

test('a stop request keeps a lazy server\'s tools (a call starts it again); toggling it off removes them', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-lazy-data-')
  const log = join(tmpDir(t), 'starts.log')
  const { host } = hostOn()
  await host.addServer({ name: 'lazy', config: entry(log), start: 'lazy', idleStopMs: 0 })
  await waitState(host, 'lazy', 'ready')
  host.dispatch({ type: 'session/mcpServerStopRequested', id: 'lazy' }, { clientId: 'c', clientSeq: 1 })
  await waitState(host, 'lazy', 'stopped')
  await waitFor(() => host.processCount === 0, { what: 'stopped' })
  assert.equal(toolsOf(host, 'lazy').length, 3)
  const echo = await host.callTool({ serverId: 'lazy', name: 'echo', arguments: { text: 'back' } })
  assert.deepEqual(echo.content, [{ type: 'text', text: 'back' }])
  assert.equal(starts(log), 2)
  host.dispatch({ type: 'session/customizationToggled', id: 'lazy', enablement: [{ kind: 'session', enabled: false }] }, { clientId: 'c', clientSeq: 2 })
  await waitState(host, 'lazy', 'stopped')
  await waitFor(() => toolsOf(host, 'lazy').length === 0, { what: 'the tools of a disabled server gone' })
  // Named by server and original name: refused, and the server is not started.
  await rejectsWith(() => host.callTool({ serverId: 'lazy', name: 'echo', arguments: { text: 'x' } }), 'server_disabled')
  assert.equal(starts(log), 2)
  assert.equal(stateOf(host, 'lazy').kind, 'stopped')
})

test('a plugin\'s lazy servers with warm caches are published together: one serverToolsChanged, each server stopped', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-lazy-data-')
  const log = join(tmpDir(t), 'starts.log')
  const root = tmpDir(t)
  writePlugin(root, { mcpServers: { a: entry(log, { args: ['a'] }), b: entry(log, { args: ['b'] }), c: entry(log, { args: ['c'] }) } })
  const lazy = { start: 'lazy', idleStopMs: 0 }
  const options = { root, name: 'p', servers: { a: lazy, b: lazy } }
  {
    const { host } = hostOn()
    await host.addPlugin(options)
    await host.whenReady(['p/a', 'p/b', 'p/c'])
    await waitFor(() => cacheFiles(dataDir).length === 2, { what: 'two cache files (c is eager)' })
    await host.dispose()
  }
  const { host, actions } = hostOn()
  const plugin = await host.addPlugin(options)
  assert.deepEqual(plugin.servers, ['p/a', 'p/b', 'p/c'])
  const children = () => findCustomization(host.getState(), 'p').children.map((c) => [c.id, c.state.kind])
  assert.deepEqual(children().slice(0, 2), [['p/a', 'stopped'], ['p/b', 'stopped']])
  await waitState(host, 'p/c', 'ready')
  const published = () => actions.filter((e) => e.action.type === 'session/serverToolsChanged')
  await waitFor(() => published().length > 0, { what: 'the cached publication delivered' })
  assert.equal(published()[0].action.tools.length, 6, 'a and b together, from the cache')
  assert.equal(starts(log), 3 + 1, 'only the eager c started again')
})

test('a loose cache folder is made private and a cache file others may write (or another user owns) is not used: the lazy server starts to list its tools', { skip: process.platform === 'win32' && 'POSIX modes and owners' }, async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-lazy-data-')
  const log = join(tmpDir(t), 'starts.log')
  await warm(hostOn, dataDir, 'lazy', entry(log))
  const [file] = cacheFiles(dataDir)
  const forged = JSON.parse(readFileSync(file, 'utf8'))
  for (const tool of forged.tools) tool.description = 'FORGED by another user'
  writeFileSync(file, JSON.stringify(forged))
  const folder = join(dataDir, '.tool-cache')
  chmodSync(folder, 0o777)
  chmodSync(file, 0o644)
  // Root (CI containers): the file is another user's too, as in the red team's repro.
  if (process.getuid?.() === 0) chownSync(file, 65534, 65534)
  const { host } = hostOn({ start: 'lazy' })
  await host.addServer({ name: 'lazy', config: entry(log) })
  await waitState(host, 'lazy', 'ready')
  assert.equal(starts(log), 2, 'started: the planted cache was not used')
  const descriptions = toolsOf(host, 'lazy').map((x) => x.description)
  assert.ok(descriptions.length > 0 && !descriptions.some((d) => /FORGED/.test(d)), JSON.stringify(descriptions))
  assert.equal(statSync(folder).mode & 0o777, 0o700, 'the loose folder is made private')
})
