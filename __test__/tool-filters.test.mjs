// Issue 29, items 1 and 4: per-server tool filters (includeTools,
// excludeTools, setToolEnabled) and per-server call limits (callTimeoutMs,
// callMaxTotalMs). Against real servers: the MCP reference server
// (@modelcontextprotocol/server-everything) and an SDK server whose tools
// change at run time (fixtures/tools-server.mjs: add_tool sends
// notifications/tools/list_changed; sleep answers after `ms`). The AHP
// side is checked on the replayed envelopes (the `ahp` reducers).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, everythingEntry, fixtureEntry, waitState, waitFor, rejectsWith, tmpDir, writePlugin } from './helpers/host.mjs'
import { replaySession } from './helpers/replay.mjs'

const namesOf = (host, id) => host.listTools().filter((x) => x.customizationId === id).map((x) => x.toolName)
const filteredOf = (host, id) => host.toolDiagnostics().filter((d) => d.serverId === id && d.action === 'filtered')
const published = (actions) => actions.filter((e) => e.action.type === 'session/serverToolsChanged')
/** The original names of server `id`'s tools in the session state replayed from `actions`. */
/**
 * The tool names of server `id` in the session state replayed from the
 * envelopes, once that state equals `getState()` (read at once, while the
 * envelopes reach the listener in a later batch: a busy machine delays it;
 * a difference that stays fails with the diff).
 */
async function replayedNames(host, actions, id) {
  const channel = actions.find((e) => e.action.type.startsWith('session/')).channel
  const same = () => { try { assert.deepEqual(replaySession(actions, channel), host.getState()); return true } catch { return false } }
  await waitFor(same, { what: 'the replayed envelopes to equal getState()', timeout: 5_000 }).catch(() => {})
  const state = replaySession(actions, channel)
  assert.deepEqual(state, host.getState(), 'the replayed envelopes give the host state')
  return (state.serverTools ?? []).map((d) => d._meta['ahp-mcp-host/source']).filter((s) => s.customizationId === id).map((s) => s.toolName)
}

test('includeTools and excludeTools on server-everything: left out of listTools and AHP state, refused with tool_disabled, diagnosed as filtered', async (t) => {
  const { host, actions } = newHost(t)
  const all = await host.addServer({ name: 'all', config: everythingEntry() })
  const id = await host.addServer({
    name: 'some',
    config: everythingEntry(),
    includeTools: ['echo', 'get-*'],
    excludeTools: ['get-env', 'get-tiny-?mage'],
  })
  await Promise.all([waitState(host, all, 'ready', { timeout: 60_000 }), waitState(host, id, 'ready', { timeout: 60_000 })])
  const everything = namesOf(host, all)
  assert.ok(everything.includes('get-env') && everything.includes('toggle-simulated-logging'), everything.join())
  const expected = everything.filter((n) => (n === 'echo' || n.startsWith('get-')) && n !== 'get-env' && n !== 'get-tiny-image')
  assert.ok(expected.includes('get-sum') && expected.length >= 5, expected.join())
  await waitFor(() => namesOf(host, id).join() === expected.join(), { what: 'the filtered catalogue', describe: () => namesOf(host, id).join() })

  // AHP: session/serverToolsChanged (replayed through the reducer) carries the same tools.
  assert.deepEqual(await replayedNames(host, actions, id), expected)
  const last = published(actions).at(-1).action.tools
  assert.ok(!last.some((d) => d.name === 'mcp__some__get-env'), 'get-env is not published')

  // Every tool left out has a filtered diagnostic saying which list did it (a
  // task-required tool, never in the catalogue, may have one beside its `omitted`).
  const diagnostics = filteredOf(host, id)
  const omitted = new Set(host.toolDiagnostics().filter((d) => d.serverId === id && d.action === 'omitted').map((d) => d.tool))
  assert.deepEqual(diagnostics.map((d) => d.tool).filter((n) => !omitted.has(n)).sort(), everything.filter((n) => !expected.includes(n)).sort())
  const reason = (tool) => diagnostics.find((d) => d.tool === tool)?.reason
  assert.equal(reason('get-env'), 'matches excludeTools pattern "get-env"')
  assert.equal(reason('get-tiny-image'), 'matches excludeTools pattern "get-tiny-?mage"')
  assert.equal(reason('toggle-simulated-logging'), 'matches no includeTools pattern')
  assert.deepEqual(filteredOf(host, all), [])

  // callTool refuses a filtered tool by its original name; the others are called.
  const e = await rejectsWith(() => host.callTool({ serverId: id, name: 'get-env', arguments: {} }), 'tool_disabled')
  assert.deepEqual(e.data, { serverId: id, toolName: 'get-env', reason: 'matches excludeTools pattern "get-env"' })
  assert.match(e.message, /get-env/)
  await rejectsWith(() => host.callTool({ serverId: id, name: 'toggle-simulated-logging' }), 'tool_disabled')
  const echoed = await host.callTool({ serverId: id, name: 'echo', arguments: { message: 'kept' } })
  assert.match(echoed.content[0].text, /kept/)
  assert.match((await host.callTool({ serverId: all, name: 'get-env', arguments: {} })).content[0].text, /PATH/)
})

test('filters hold across list_changed and restarts; setToolEnabled switches a tool at run time and publishes serverToolsChanged', async (t) => {
  const { host, actions } = newHost(t)
  const reasons = []
  host.onToolsChanged((e) => reasons.push(e.reason))
  const id = await host.addServer({ name: 'dyn', config: fixtureEntry('tools-server.mjs'), excludeTools: ['secret_*', 'sleep'] })
  await waitState(host, id, 'ready')
  assert.deepEqual(namesOf(host, id), ['echo', 'pid', 'add_tool'])

  // Tools added at run time (notifications/tools/list_changed) are filtered as well.
  await host.callTool({ serverId: id, name: 'add_tool', arguments: { name: 'secret_one' } })
  await host.callTool({ serverId: id, name: 'add_tool', arguments: { name: 'fresh' } })
  await waitFor(() => namesOf(host, id).includes('fresh'), { what: 'fresh listed after list_changed' })
  // The event follows the catalogue (read natively above) and its envelope: wait for it.
  await waitFor(() => reasons.includes('listChanged'), { what: 'toolsChanged with reason listChanged' })
  assert.deepEqual(namesOf(host, id), ['echo', 'pid', 'add_tool', 'fresh'])
  assert.deepEqual(filteredOf(host, id).map((d) => d.tool), ['sleep', 'secret_one'])
  assert.deepEqual(await replayedNames(host, actions, id), ['echo', 'pid', 'add_tool', 'fresh'])
  await rejectsWith(() => host.callTool({ serverId: id, name: 'secret_one' }), 'tool_disabled')

  // Switched on at run time: published at once, callable.
  const before = published(actions).length
  assert.equal(host.setToolEnabled({ serverId: id, tool: 'sleep', enabled: true }), true)
  await waitFor(() => published(actions).length === before + 1, { what: 'one session/serverToolsChanged' })
  assert.ok(published(actions).at(-1).action.tools.some((d) => d.name === 'mcp__dyn__sleep'))
  await waitFor(() => reasons.at(-1) === 'filter', { what: 'toolsChanged with reason filter' })
  assert.deepEqual(namesOf(host, id), ['echo', 'pid', 'sleep', 'add_tool', 'fresh'])
  assert.equal((await host.callTool({ serverId: id, name: 'sleep', arguments: { ms: 1 } })).content[0].text, 'slept')

  // Switched off: gone, and a call by the catalogue name read before is refused, not sent.
  const echo = host.listTools().find((x) => x.toolName === 'echo')
  assert.equal(host.setToolEnabled({ serverId: id, tool: 'echo', enabled: false }), true)
  assert.equal(host.setToolEnabled({ serverId: id, tool: 'echo', enabled: false }), false, 'no change')
  await waitFor(() => published(actions).length === before + 2, { what: 'a second session/serverToolsChanged' })
  const off = await rejectsWith(() => host.callTool({ name: echo.name, arguments: { message: 'x' } }), 'tool_disabled')
  assert.equal(off.data.reason, 'switched off by setToolEnabled')
  assert.equal(published(actions).length, before + 2, 'the unchanged switch published nothing')
  assert.deepEqual(await replayedNames(host, actions, id), ['pid', 'sleep', 'add_tool', 'fresh'])

  // A restart (stop, start: a new process without the added tools) keeps lists and switches.
  host.dispatch({ type: 'session/mcpServerStopRequested', id })
  await waitState(host, id, 'stopped')
  await waitFor(() => namesOf(host, id).length === 0, { what: 'the stopped server out of the catalogue' })
  host.dispatch({ type: 'session/mcpServerStartRequested', id })
  await waitState(host, id, 'ready')
  assert.deepEqual(namesOf(host, id), ['pid', 'sleep', 'add_tool'])
  assert.deepEqual(filteredOf(host, id).map((d) => [d.tool, d.reason]), [['echo', 'switched off by setToolEnabled']])
  assert.deepEqual(await replayedNames(host, actions, id), ['pid', 'sleep', 'add_tool'])
  await rejectsWith(() => host.callTool({ serverId: id, name: 'echo', arguments: { message: 'x' } }), 'tool_disabled')

  // A tool the server does not list yet can be switched (no change to publish).
  assert.equal(host.setToolEnabled({ serverId: id, tool: 'secret_two', enabled: true }), false)
  await host.callTool({ serverId: id, name: 'add_tool', arguments: { name: 'secret_two' } })
  await waitFor(() => namesOf(host, id).includes('secret_two'), { what: 'secret_two listed: switched on over excludeTools' })

  // Arguments.
  assert.throws(() => host.setToolEnabled({ serverId: 'nope', tool: 'echo', enabled: true }), (e) => e.code === 'not_found')
  assert.throws(() => host.setToolEnabled({ serverId: id, tool: '', enabled: true }), (e) => e.code === 'invalid_argument' && /options\.tool/.test(e.message))
  assert.throws(() => host.setToolEnabled({ serverId: id, tool: 'echo', enabled: 'yes' }), (e) => e.code === 'invalid_argument' && /options\.enabled/.test(e.message))
  assert.throws(() => host.setToolEnabled({ serverId: id, tool: 'x'.repeat(1025), enabled: true }), (e) => e.code === 'invalid_argument' && /1024/.test(e.message))

  // remove forgets the filter: the same id added again lists every tool.
  await host.remove(id)
  await host.addServer({ name: 'dyn', config: fixtureEntry('tools-server.mjs') })
  await waitState(host, id, 'ready')
  assert.deepEqual(namesOf(host, id), ['echo', 'pid', 'sleep', 'add_tool'])
})

test('a plugin server override filters that server only; a wrong pattern is refused naming the field', async (t) => {
  const { host } = newHost(t)
  const root = writePlugin(tmpDir(t), { mcpServers: { a: fixtureEntry('tools-server.mjs'), b: fixtureEntry('tools-server.mjs') } })
  const plugin = await host.addPlugin({ root, name: 'p', servers: { a: { includeTools: ['echo'] } } })
  await Promise.all(plugin.servers.map((sid) => waitState(host, sid, 'ready')))
  assert.deepEqual(namesOf(host, 'p/a'), ['echo'])
  assert.deepEqual(namesOf(host, 'p/b'), ['echo', 'pid', 'sleep', 'add_tool'])
  await rejectsWith(() => host.callTool({ serverId: 'p/a', name: 'pid' }), 'tool_disabled')
  assert.equal(host.setToolEnabled({ serverId: 'p/a', tool: 'pid', enabled: true }), true)
  assert.deepEqual(namesOf(host, 'p/a'), ['echo', 'pid'])

  const bad = await rejectsWith(() => host.addPlugin({ root, name: 'q', servers: { a: { excludeTools: ['ok', ''] } } }), 'invalid_argument')
  assert.equal(bad.message, 'options.servers.a.excludeTools[1]: must not be empty')
  const badServer = await rejectsWith(() => host.addServer({ name: 'x', config: fixtureEntry('tools-server.mjs'), includeTools: [''] }), 'invalid_argument')
  assert.equal(badServer.message, 'options.includeTools[0]: must not be empty')
  await rejectsWith(() => host.addServer({ name: 'y', config: fixtureEntry('tools-server.mjs'), includeTools: 'echo' }), 'invalid_argument')
  assert.equal(host.getState().customizations.some((c) => c.id === 'q' || c.id === 'x' || c.id === 'y'), false, 'nothing was added')
})

test('call limits per call, then per server, then the host: a slow tool on a real server', async (t) => {
  const { host } = newHost(t, { limits: { callTimeoutMs: 500 } })
  const hostLimit = await host.addServer({ name: 'host-limit', config: fixtureEntry('tools-server.mjs') })
  const own = await host.addServer({ name: 'own', config: fixtureEntry('tools-server.mjs'), callTimeoutMs: 3_000 })
  const total = await host.addServer({ name: 'total', config: fixtureEntry('tools-server.mjs'), callTimeoutMs: 5_000, callMaxTotalMs: 700 })
  await Promise.all([hostLimit, own, total].map((sid) => waitState(host, sid, 'ready')))
  const sleep = (serverId, ms, extra = {}) => host.callTool({ serverId, name: 'sleep', arguments: { ms }, ...extra })
  const timedOut = async (call, data) => assert.deepEqual((await rejectsWith(call, 'timeout')).data, data)

  // The host's limit: 500 ms.
  await timedOut(() => sleep(hostLimit, 2_000), { kind: 'inactivity', ms: 500 })
  // The server's beats the host's: 1.2 s passes within its 3 s, 6 s does not.
  assert.equal((await sleep(own, 1_200)).content[0].text, 'slept')
  await timedOut(() => sleep(own, 6_000), { kind: 'inactivity', ms: 3_000 })
  // The call's own beats the server's, both ways.
  await timedOut(() => sleep(own, 2_000, { timeoutMs: 300 }), { kind: 'inactivity', ms: 300 })
  assert.equal((await sleep(hostLimit, 1_200, { timeoutMs: 4_000 })).content[0].text, 'slept')
  // callMaxTotalMs: the server's absolute limit, and the call's own over it.
  await timedOut(() => sleep(total, 2_000), { kind: 'total', ms: 700 })
  assert.equal((await sleep(total, 1_000, { maxTotalTimeoutMs: 4_000 })).content[0].text, 'slept')
  // Every server stays ready after its timeouts.
  for (const sid of [hostLimit, own, total]) await waitState(host, sid, 'ready')
})
