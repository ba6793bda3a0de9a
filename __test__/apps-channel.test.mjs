// The MCP Apps `mcp://` side channel (issue 11, items 3 and 5):
// `host.sendChannelMessage(message)`, answers and forwarded server
// notifications as `channelMessage` events, and `host.readAppResource`.
//
// Servers: the real MCP Apps example `@modelcontextprotocol/server-basic-vanillajs`
// (stdio), fixtures/apps-channel-server.mjs (SDK v1, 2025-11-25; it records
// every message it receives, so a test proves what reached it) and
// fixtures/apps-channel-modern.mjs (SDK v2, 2026-07-28).
//
// The channel URI is read from the server's customization (`channel`), as
// an AHP client reads it.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import {
  newHost, fixtureEntry, waitState, waitFor, findCustomization, tmpDir, rejectsWith, stateHistory,
  HostError, NODE, ROOT, readJsonLines } from './helpers/host.mjs'

const APP_MIME = 'text/html;profile=mcp-app'
const BASIC = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'index.js')

/** The server's open channel URI, once its customization carries one. */
async function channelOf(host, id) {
  return waitFor(() => findCustomization(host.getState(), id)?.channel, { what: `the channel of ${id}` })
}

/**
 * A host with `mcpApps` and one server (`entry`); resolves once it is ready:
 * `{host, id, channel, messages, logs, actions, received()}` where
 * `received()` lists what the fixture recorded.
 */
async function start(t, entry, { options = {}, record = true } = {}) {
  const dir = tmpDir(t, 'ahp-apps-channel-')
  const file = join(dir, 'received.jsonl')
  const config = record ? { ...entry, env: { ...(entry.env ?? {}), APPS_CHANNEL_RECORD: file } } : entry
  const { host, logs, actions } = newHost(t, { mcpApps: true, ...options })
  const messages = []
  host.on('channelMessage', (m) => messages.push(m))
  const id = await host.addServer({ name: 'app', config })
  await waitState(host, id, 'ready')
  const channel = await channelOf(host, id)
  const received = () => readJsonLines(file)
  return { host, id, channel, messages, logs, actions, received }
}

const fixture = (args = [], env = {}) => ({ ...fixtureEntry('apps-channel-server.mjs', args), env })

/** Sends request `id` and resolves its response. */
async function request(ctx, id, method, params, channel = ctx.channel) {
  const message = { jsonrpc: '2.0', id, method, channel }
  if (params !== undefined) message.params = params
  ctx.host.sendChannelMessage(message)
  return answer(ctx, id)
}

/** The response to request `id` (of the same JSON type), once it arrived. */
function answer(ctx, id) {
  return waitFor(() => ctx.messages.find((m) => m.id === id && ('result' in m || 'error' in m)), {
    what: `the response to ${JSON.stringify(id)}`,
    describe: () => JSON.stringify(ctx.messages),
  })
}

/** Methods the fixture received (requests and notifications), in order. */
const methods = (ctx) => ctx.received().map((m) => m.method)

function assertError(response, rpcCode, hostCode) {
  assert.ok(response.error, JSON.stringify(response))
  assert.equal(response.error.code, rpcCode, JSON.stringify(response))
  assert.equal(response.error.data?.code, hostCode, JSON.stringify(response))
}

test('the real MCP Apps example: tools/list and tools/call through the channel; its View through readAppResource and resources/read', async (t) => {
  const ctx = await start(t, { type: 'stdio', command: NODE, args: [BASIC, '--stdio'] }, { record: false })
  const listed = await request(ctx, 1, 'tools/list', {})
  assert.equal(listed.channel, ctx.channel)
  const getTime = listed.result.tools.find((tool) => tool.name === 'get-time')
  assert.equal(getTime?._meta?.ui?.resourceUri, 'ui://get-time/mcp-app.html', JSON.stringify(listed))
  const called = await request(ctx, 'call-1', 'tools/call', { name: 'get-time', arguments: {} })
  assert.match(called.result.structuredContent.time, /^\d{4}-\d\d-\d\dT/, JSON.stringify(called))
  assert.deepEqual(Object.keys(called).sort(), ['channel', 'id', 'jsonrpc', 'result'])
  const view = await ctx.host.readAppResource({ serverId: ctx.id, uri: 'ui://get-time/mcp-app.html' })
  assert.equal(view.contents.length, 1)
  assert.equal(view.contents[0].mimeType, APP_MIME)
  assert.ok(view.contents[0].text.length > 200_000, `${view.contents[0].text.length} bytes`)
  const read = await request(ctx, 2, 'resources/read', { uri: 'ui://get-time/mcp-app.html' })
  assert.deepEqual(read.result, view)
  // A tools/call through the channel is not an AHP chat tool call.
  assert.ok(!ctx.actions.some((a) => a.action.type.startsWith('chat/')), JSON.stringify(ctx.actions.map((a) => a.action.type)))
})

test('an app-only tool is listed and callable through the channel; the model catalogue still leaves it out', async (t) => {
  const ctx = await start(t, fixture())
  const listed = await request(ctx, 1, 'tools/list')
  assert.ok(listed.result.tools.some((tool) => tool.name === 'app-only'), JSON.stringify(listed))
  const called = await request(ctx, 'c1', 'tools/call', { name: 'app-only', arguments: { x: 1 } })
  assert.deepEqual(called.result, { content: [{ type: 'text', text: 'app-only {"x":1}' }] })
  assert.deepEqual(called, { jsonrpc: '2.0', id: 'c1', result: called.result, channel: ctx.channel })
  const catalogue = ctx.host.listTools().map((tool) => tool.toolName)
  assert.ok(!catalogue.includes('app-only'), JSON.stringify(catalogue))
  assert.ok(catalogue.includes('show') && catalogue.includes('model-only'), JSON.stringify(catalogue))
  assert.ok(!ctx.actions.some((a) => a.action.type.startsWith('chat/')))
})

test('a tool whose visibility lacks "app" is refused with -32602 and never called', async (t) => {
  const ctx = await start(t, fixture())
  const refused = await request(ctx, 1, 'tools/call', { name: 'model-only', arguments: {} })
  assertError(refused, -32602, 'invalid_argument')
  assert.match(refused.error.message, /model-only/)
  assert.ok(!ctx.received().some((m) => m.method === 'tools/call'), JSON.stringify(ctx.received()))
})

test('a tool switched off by setToolEnabled is refused on the channel with -32602 tool_disabled and never called', async (t) => {
  const ctx = await start(t, fixture())
  assert.equal(ctx.host.setToolEnabled({ serverId: ctx.id, tool: 'app-only', enabled: false }), false, 'app-only: not in the model catalogue')
  const refused = await request(ctx, 1, 'tools/call', { name: 'app-only', arguments: { x: 1 } })
  assertError(refused, -32602, 'tool_disabled')
  assert.match(refused.error.message, /app-only.*switched off by setToolEnabled/)
  assert.ok(!ctx.received().some((m) => m.method === 'tools/call'), JSON.stringify(ctx.received()))
  ctx.host.setToolEnabled({ serverId: ctx.id, tool: 'app-only', enabled: true })
  const called = await request(ctx, 2, 'tools/call', { name: 'app-only', arguments: { x: 2 } })
  assert.deepEqual(called.result, { content: [{ type: 'text', text: 'app-only {"x":2}' }] })
})

test('methods outside the advertised union, the handshake and mirrored state are refused with -32601; nothing reaches the server', async (t) => {
  const ctx = await start(t, fixture())
  const before = ctx.received().length
  for (const [id, method] of [[1, 'prompts/get'], [2, 'initialize'], [3, 'server/discover'], [4, 'tasks/list'], [5, 'ping'], [6, 'resources/subscribe']]) {
    const refused = await request(ctx, id, method, {})
    assertError(refused, -32601, 'not_supported')
    assert.ok(refused.error.message.includes(JSON.stringify(method)), refused.error.message)
    assert.match(refused.error.message, /tools\/list, tools\/call/)
  }
  // A refused notification is not answered; it is logged.
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', method: 'notifications/initialized', channel: ctx.channel })
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 }, channel: ctx.channel })
  await waitFor(() => ctx.logs.filter((l) => l.target === 'host.mcpApp' && l.level === 'warn').length === 2, { what: 'two warn logs', describe: () => JSON.stringify(ctx.logs) })
  const warned = ctx.logs.filter((l) => l.target === 'host.mcpApp')
  assert.ok(warned.every((l) => l.serverId === ctx.id), JSON.stringify(warned))
  assert.match(warned[0].message, /notifications\/initialized/)
  // A request after them is answered first: the notifications were not.
  await request(ctx, 7, 'tools/list')
  assert.equal(ctx.messages.filter((m) => !('id' in m)).length, 0, JSON.stringify(ctx.messages))
  assert.deepEqual(ctx.received().slice(before).map((m) => m.method), ['tools/list'])
})

test('a channel whose server hosts no Apps serves nothing', async (t) => {
  const ctx = await start(t, fixture(['--plain']))
  const refused = await request(ctx, 1, 'tools/list')
  assertError(refused, -32601, 'not_supported')
  assert.match(refused.error.message, /serves nothing/)
  const ui = await request(ctx, 2, 'resources/read', { uri: 'ui://show/view.html' })
  assertError(ui, -32601, 'not_supported')
  assert.ok(!methods(ctx).includes('resources/read'))
})

test('an unknown channel and malformed messages are answered; invalid arguments and a disposed host throw', async (t) => {
  const ctx = await start(t, fixture())
  const unknown = await request(ctx, 1, 'tools/list', {}, 'mcp:/nowhere/x/1')
  assertError(unknown, -32000, 'server_not_ready')
  assert.equal(unknown.channel, 'mcp:/nowhere/x/1')
  ctx.host.sendChannelMessage({ jsonrpc: '1.0', id: 2, method: 'tools/list', channel: ctx.channel })
  assertError(await answer(ctx, 2), -32600, 'invalid_argument')
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', id: 3, channel: ctx.channel })
  assertError(await answer(ctx, 3), -32600, 'invalid_argument')
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', id: true, method: 'tools/list', channel: ctx.channel })
  const nullId = await answer(ctx, null)
  assertError(nullId, -32600, 'invalid_argument')
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: [1], channel: ctx.channel })
  assertError(await answer(ctx, 4), -32600, 'invalid_argument')
  for (const bad of [null, 'text', [], { jsonrpc: '2.0', id: 5, method: 'tools/list' }, { channel: 7 }]) {
    assert.throws(() => ctx.host.sendChannelMessage(bad), (e) => e instanceof HostError && e.code === 'invalid_argument', JSON.stringify(bad))
  }
  ctx.host.disposeSync()
  assert.throws(() => ctx.host.sendChannelMessage({ jsonrpc: '2.0', id: 6, method: 'tools/list', channel: ctx.channel }),
    (e) => e instanceof HostError && e.code === 'disposed')
})

test('ids of both JSON types come back unchanged; an id already in flight is refused', async (t) => {
  const ctx = await start(t, fixture())
  for (const id of ['abc', 42, 0, '42', -1.5]) {
    const response = await request(ctx, id, 'tools/list')
    assert.ok(response.result, JSON.stringify(response))
    assert.ok(Object.is(response.id, id), `${JSON.stringify(response.id)} for ${JSON.stringify(id)}`)
  }
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'slow' }, channel: ctx.channel })
  await waitFor(() => ctx.received().some((m) => m.params?.name === 'slow'), { what: 'the slow call at the server' })
  const twice = await request(ctx, 'slow-1', 'tools/call', { name: 'slow' })
  assertError(twice, -32600, 'invalid_argument')
})

test('a restart makes the old channel stale; a stopped server gets nothing', async (t) => {
  const ctx = await start(t, fixture())
  const old = ctx.channel
  assert.ok((await request(ctx, 1, 'tools/list')).result)
  ctx.host.dispatch({ type: 'session/mcpServerStartRequested', id: ctx.id }, { clientId: 'c', clientSeq: 1 })
  const fresh = await waitFor(() => {
    const c = findCustomization(ctx.host.getState(), ctx.id)
    return c?.state.kind === 'ready' && c.channel && c.channel !== old && c.channel
  }, { what: 'a new channel after the restart' })
  const stale = await request(ctx, 2, 'tools/call', { name: 'app-only' }, old)
  assertError(stale, -32000, 'server_not_ready')
  assert.ok((await request(ctx, 3, 'tools/call', { name: 'app-only' }, fresh)).result)
  ctx.host.dispatch({ type: 'session/mcpServerStopRequested', id: ctx.id }, { clientId: 'c', clientSeq: 2 })
  // The host's own `stopped` (the echo of the request says so at once).
  await waitFor(() => stateHistory(ctx.actions, ctx.id).at(-1)?.kind === 'stopped', { what: 'the host\'s stopped state' })
  assert.equal(findCustomization(ctx.host.getState(), ctx.id).channel, undefined)
  const count = ctx.received().length
  const stopped = await request(ctx, 4, 'tools/call', { name: 'app-only' }, fresh)
  assertError(stopped, -32000, 'server_not_ready')
  await rejectsWith(() => ctx.host.readAppResource({ serverId: ctx.id, uri: 'ui://show/view.html' }), 'server_not_ready')
  assert.equal(ctx.received().length, count, JSON.stringify(ctx.received().slice(count)))
  assert.equal(ctx.received().filter((m) => m.method === 'tools/call').length, 1)
})

test('a message over maxChannelMessageBytes is refused with -32600 limit_exceeded and not sent', async (t) => {
  const ctx = await start(t, fixture(), { options: { limits: { maxChannelMessageBytes: 512 } } })
  const refused = await request(ctx, 1, 'tools/call', { name: 'app-only', arguments: { pad: 'p'.repeat(1024) } })
  assertError(refused, -32600, 'limit_exceeded')
  assert.match(refused.error.message, /maxChannelMessageBytes \(512\)/)
  assert.ok((await request(ctx, 2, 'tools/call', { name: 'app-only', arguments: { pad: 'p' } })).result)
  assert.deepEqual(ctx.received().filter((m) => m.method === 'tools/call').map((m) => m.params.arguments), [{ pad: 'p' }])
})

test('at most maxChannelRequests requests are in flight on a channel; cancelling frees their slots', async (t) => {
  const ctx = await start(t, fixture(), { options: { limits: { maxChannelRequests: 2 } } })
  for (const id of ['s1', 's2']) {
    ctx.host.sendChannelMessage({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow' }, channel: ctx.channel })
  }
  await waitFor(() => ctx.received().filter((m) => m.params?.name === 'slow').length === 2, { what: 'both slow calls at the server' })
  const third = await request(ctx, 's3', 'tools/list')
  assertError(third, -32600, 'limit_exceeded')
  assert.match(third.error.message, /maxChannelRequests/)
  for (const id of ['s1', 's2']) {
    ctx.host.sendChannelMessage({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id }, channel: ctx.channel })
  }
  await waitFor(() => ctx.received().filter((m) => m.method === 'slow cancelled').length === 2, { what: 'both slow calls cancelled at the server' })
  await waitFor(async () => (await request(ctx, `again-${Date.now()}`, 'tools/list')).result, { what: 'a free slot' })
  assert.ok(!ctx.messages.some((m) => m.id === 's1' || m.id === 's2'), JSON.stringify(ctx.messages))
})

test('notifications/cancelled cancels the request upstream and its response is not sent', async (t) => {
  const ctx = await start(t, fixture())
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'slow' }, channel: ctx.channel })
  const sent = await waitFor(() => ctx.received().find((m) => m.params?.name === 'slow'), { what: 'the slow call at the server' })
  // A cancellation of an id of the other type, or of another channel, cancels nothing.
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: '77' }, channel: ctx.channel })
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'closed' }, channel: ctx.channel })
  const cancelled = await waitFor(() => ctx.received().find((m) => m.method === 'notifications/cancelled'), { what: 'notifications/cancelled at the server' })
  // The server's own id for the request (rmcp's), not the client's.
  assert.equal(cancelled.params.requestId, sent.id)
  await waitFor(() => ctx.received().some((m) => m.method === 'slow cancelled'), { what: 'the slow call to end' })
  assert.equal(ctx.received().filter((m) => m.method === 'notifications/cancelled').length, 1)
  await request(ctx, 78, 'tools/list')
  assert.ok(!ctx.messages.some((m) => m.id === 77), JSON.stringify(ctx.messages))
})

test('a request over channelRequestTimeoutMs is answered -32001 timeout and cancelled upstream', async (t) => {
  const ctx = await start(t, fixture(), { options: { limits: { channelRequestTimeoutMs: 300 } } })
  const timedOut = await request(ctx, 1, 'tools/call', { name: 'slow' })
  assertError(timedOut, -32001, 'timeout')
  await waitFor(() => ctx.received().some((m) => m.method === 'slow cancelled'), { what: 'the slow call cancelled at the server' })
})

test('a result over maxResultBytes becomes an error with data.code limit_exceeded; the server\'s own errors pass through', async (t) => {
  const ctx = await start(t, fixture(), { options: { limits: { maxResultBytes: 2000 } } })
  const small = await request(ctx, 1, 'tools/call', { name: 'big-result', arguments: { bytes: 100 } })
  assert.equal(small.result.content[0].text.length, 100)
  const big = await request(ctx, 2, 'tools/call', { name: 'big-result', arguments: { bytes: 5000 } })
  assertError(big, -32603, 'limit_exceeded')
  assert.match(big.error.message, /maxResultBytes/)
  const failed = await request(ctx, 3, 'tools/call', { name: 'fail' })
  assert.equal(failed.error.code, -32042)
  assert.match(failed.error.message, /custom failure/)
  assert.deepEqual(failed.error.data, { why: 'test' })
})

test('the ui:// gate: linked App resources pass untouched; unlinked, wrong MIME type and over the bound are refused', async (t) => {
  const ctx = await start(t, fixture(), { options: { limits: { maxUiResourceBytes: 1000 } } })
  const view = await ctx.host.readAppResource({ serverId: ctx.id, uri: 'ui://show/view.html' })
  assert.deepEqual(view.contents[0]._meta, {
    ui: {
      csp: { connectDomains: ['https://api.example.test'], resourceDomains: ['https://cdn.example.test'] },
      permissions: { clipboardWrite: {} },
      domain: 'view.example.test',
      prefersBorder: true,
    },
  })
  assert.equal(view.contents[0].mimeType, APP_MIME)
  assert.deepEqual((await request(ctx, 1, 'resources/read', { uri: 'ui://show/view.html' })).result, view)
  const before = ctx.received().filter((m) => m.method === 'resources/read').length
  const unlinked = await request(ctx, 2, 'resources/read', { uri: 'ui://unlinked/view.html' })
  assertError(unlinked, -32602, 'not_found')
  assert.equal(unlinked.error.data.uri, 'ui://unlinked/view.html')
  await rejectsWith(() => ctx.host.readAppResource({ serverId: ctx.id, uri: 'ui://unlinked/view.html' }), 'not_found')
  // Not linked: nothing was sent.
  assert.equal(ctx.received().filter((m) => m.method === 'resources/read').length, before)
  const wrong = await request(ctx, 3, 'resources/read', { uri: 'ui://wrong/view.html' })
  assertError(wrong, -32603, 'protocol_error')
  assert.match(wrong.error.message, /"text\/html"/)
  const e = await rejectsWith(() => ctx.host.readAppResource({ serverId: ctx.id, uri: 'ui://wrong/view.html' }), 'protocol_error')
  assert.match(e.message, /MIME type "text\/html"/)
  const big = await request(ctx, 4, 'resources/read', { uri: 'ui://big/view.html' })
  assertError(big, -32603, 'limit_exceeded')
  assert.match(big.error.message, /maxUiResourceBytes \(1000\)/)
  await rejectsWith(() => ctx.host.readAppResource({ serverId: ctx.id, uri: 'ui://big/view.html' }), 'limit_exceeded')
  // A plain resource is served as usual (serverResources).
  const plain = await request(ctx, 5, 'resources/read', { uri: 'note://plain' })
  assert.equal(plain.result.contents[0].text, 'plain note')
  await rejectsWith(() => ctx.host.readAppResource({ serverId: ctx.id, uri: 'note://plain' }), 'invalid_argument')
  await rejectsWith(() => ctx.host.readAppResource({ serverId: 'nope', uri: 'ui://show/view.html' }), 'not_found')
})

test('readAppResource is not_supported without mcpApps; such a host opens no channel', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'app', config: fixture() })
  await waitState(host, id, 'ready')
  assert.equal(findCustomization(host.getState(), id).channel, undefined)
  await rejectsWith(() => host.readAppResource({ serverId: id, uri: 'ui://show/view.html' }), 'not_supported')
})

for (const listChanged of [true, false]) {
  test(`list changes reach the channel only when the capability has listChanged: true (${listChanged})`, async (t) => {
    const ctx = await start(t, fixture(listChanged ? ['--list-changed'] : []))
    const events = []
    ctx.host.on('listChanged', (e) => events.push(e))
    assert.ok((await request(ctx, 1, 'tools/call', { name: 'change-lists' })).result)
    // The resources listChanged event follows the forwarded notifications (one queue).
    await waitFor(() => events.some((e) => e.list === 'resources'), { what: 'the listChanged event' })
    // rmcp hands each server notification to the client handler in a task
    // of its own, so the two may be forwarded in either order.
    const byMethod = (a, b) => a.method.localeCompare(b.method)
    const forwarded = ctx.messages.filter((m) => !('id' in m)).sort(byMethod)
    const expected = listChanged
      ? [
          { jsonrpc: '2.0', method: 'notifications/resources/list_changed', channel: ctx.channel },
          { jsonrpc: '2.0', method: 'notifications/tools/list_changed', channel: ctx.channel },
        ]
      : []
    assert.deepEqual(forwarded, expected)
  })
}

test('notifications/message of the App becomes a log event; logging/setLevel is forwarded', async (t) => {
  const ctx = await start(t, fixture())
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', logger: 'view', data: 'hello' }, channel: ctx.channel })
  ctx.host.sendChannelMessage({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'debug', data: { n: 1 } }, channel: ctx.channel })
  await waitFor(() => ctx.logs.filter((l) => l.target === 'host.mcpApp').length === 2, { what: 'two App logs' })
  assert.deepEqual(ctx.logs.filter((l) => l.target === 'host.mcpApp'), [
    { level: 'warn', target: 'host.mcpApp', message: '[view] hello', serverId: ctx.id },
    { level: 'debug', target: 'host.mcpApp', message: '{"n":1}', serverId: ctx.id },
  ])
  const set = await request(ctx, 1, 'logging/setLevel', { level: 'error' })
  assert.deepEqual(set.result, {})
  assert.deepEqual(ctx.received().filter((m) => m.method === 'logging/setLevel').map((m) => m.params.level), ['error'])
  assert.ok(!methods(ctx).includes('notifications/message'))
})

test('sampling/createMessage of the App is answered by the sampling handler, not sent to the server', async (t) => {
  const asked = []
  const sampling = async (params, context) => {
    asked.push({ params, serverId: context.serverId })
    return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test-model' }
  }
  const ctx = await start(t, fixture(), { options: { handlers: { sampling } } })
  const params = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }
  const sampled = await request(ctx, 1, 'sampling/createMessage', params)
  assert.deepEqual(sampled.result, { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test-model' })
  assert.deepEqual(asked, [{ params, serverId: ctx.id }])
  assert.ok(!methods(ctx).includes('sampling/createMessage'))
})

test('MCP 2026-07-28 (SDK v2): app-only tools through the channel, list changes from the listen stream, the View', async (t) => {
  const ctx = await start(t, { type: 'stdio', command: NODE, args: [join(ROOT, '__test__', 'fixtures', 'apps-channel-modern.mjs')] }, { record: false })
  assert.equal(ctx.host.serverInfo(ctx.id).protocolVersion, '2026-07-28')
  const called = await request(ctx, 'm1', 'tools/call', { name: 'app-only', arguments: { n: 2 } })
  assert.equal(called.result.content[0].text, 'app-only modern {"n":2}')
  assert.ok(!ctx.host.listTools().some((tool) => tool.toolName === 'app-only'))
  assertError(await request(ctx, 'm2', 'tools/call', { name: 'model-only' }), -32602, 'invalid_argument')
  assert.ok((await request(ctx, 'm3', 'tools/call', { name: 'change-lists' })).result)
  await waitFor(() => ctx.messages.filter((m) => !('id' in m)).length === 2, { what: 'two forwarded notifications', describe: () => JSON.stringify(ctx.messages) })
  assert.deepEqual(ctx.messages.filter((m) => !('id' in m)).map((m) => m.method).sort(),
    ['notifications/resources/list_changed', 'notifications/tools/list_changed'])
  const view = await ctx.host.readAppResource({ serverId: ctx.id, uri: 'ui://modern/view.html' })
  assert.deepEqual(view.contents[0]._meta, { ui: { prefersBorder: false } })
})
