// MCP eras (issue 10): each server negotiates its revision. `auto` probes
// with `server/discover` (2026-07-28, stateless) and falls back to the
// 2025-era `initialize`; `protocol: '2026-07-28' | 'legacy'` pins one. The
// negotiated revision and what the server said about itself are in
// `host.serverInfo(id)`, in the customization's `_meta` and `icons`, and in
// a `host.connect` log record. Real servers: the official TypeScript SDK v2
// server (stdio and Streamable HTTP), the v1 SDK's server-everything, and
// raw stdio fixtures for odd answers.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import {
  newHost, fixtureEntry, everythingEntry, waitState, waitFor, startHttpFixture, callText,
  findCustomization, rejectsWith, tmpDir,
} from './helpers/host.mjs'

const MODERN_META_KEY = 'ahp-mcp-host/serverInfo'

function connectLog(logs, id) {
  return logs.find((l) => l.serverId === id && l.target === 'host.connect')
}

async function assertModern(t, host, logs, id) {
  await waitState(host, id, 'ready')
  const info = host.serverInfo(id)
  assert.equal(info.protocolVersion, '2026-07-28')
  assert.equal(info.handshake, 'discover')
  assert.equal(info.name, 'modern-fixture')
  assert.equal(info.title, 'Modern Fixture')
  assert.equal(info.version, '2.4.0-test')
  assert.equal(info.websiteUrl, 'https://example.test/modern')
  assert.equal(info.instructions, 'Call echo to repeat text. Keys keep their order.')
  assert.deepEqual(info.icons, [{ src: 'https://example.test/modern.png', mimeType: 'image/png', sizes: ['48x48'] }])
  assert.ok(info.capabilities && 'tools' in info.capabilities, JSON.stringify(info.capabilities))
  // The call carries the per-request _meta of 2026-07-28 (the fixture echoes it).
  const text = await callText(host, id, 'echo', { text: 'hi' })
  const [said, envelope] = [text.slice(0, text.indexOf(' ')), JSON.parse(text.slice(text.indexOf(' ') + 1))]
  assert.equal(said, 'hi')
  assert.equal(envelope['io.modelcontextprotocol/protocolVersion'], '2026-07-28', `per-request _meta: ${text}`)
  assert.ok(envelope['io.modelcontextprotocol/clientInfo']?.name, `client info in _meta: ${text}`)
  // Published on the customization: icons and _meta.
  const c = findCustomization(host.getState(), id)
  assert.deepEqual(c._meta[MODERN_META_KEY], info)
  assert.deepEqual(c.icons, [{ src: 'https://example.test/modern.png', contentType: 'image/png', sizes: ['48x48'] }])
  await waitFor(() => connectLog(logs, id), { what: 'the host.connect log' })
  assert.match(connectLog(logs, id).message, /MCP 2026-07-28 \(server\/discover\)/)
}

test('auto: a 2026-07-28 stdio server (TypeScript SDK v2) is spoken to statelessly, with its identity', async (t) => {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'modern', config: fixtureEntry('modern-server.mjs', ['stdio']) })
  await assertModern(t, host, logs, id)
})

test('auto: a 2026-07-28 Streamable HTTP server (TypeScript SDK v2) is spoken to statelessly', async (t) => {
  const server = await startHttpFixture(t, 'modern-server.mjs', {}, ['http'])
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'modern-http', config: { type: 'streamable-http', url: server.url } })
  await assertModern(t, host, logs, id)
})

test('auto: a 2025-era server falls back to initialize at once; protocol legacy skips the probe', async (t) => {
  const { host, logs } = newHost(t)
  const auto = await host.addServer({ name: 'auto', config: fixtureEntry('version-server.mjs') })
  const legacy = await host.addServer({ name: 'legacy', config: fixtureEntry('version-server.mjs'), protocol: 'legacy' })
  for (const id of [auto, legacy]) {
    await waitState(host, id, 'ready')
    const info = host.serverInfo(id)
    assert.equal(info.protocolVersion, '2025-11-25')
    assert.equal(info.handshake, 'initialize')
  }
  assert.equal(await callText(host, auto, 'methods'), 'server/discover,initialize,notifications/initialized')
  assert.equal(await callText(host, legacy, 'methods'), 'initialize,notifications/initialized')
  await waitFor(() => connectLog(logs, auto), { what: 'the host.connect log' })
  assert.match(connectLog(logs, auto).message, /MCP 2025-11-25 \(initialize\)/)
})

test('auto: a server answering server/discover with {} is connected again with initialize, with a warning', async (t) => {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'empty', config: fixtureEntry('version-server.mjs', ['--discover=empty']) })
  await waitState(host, id, 'ready')
  assert.equal(host.serverInfo(id).handshake, 'initialize')
  // A new process: the first one only saw the probe.
  assert.equal(await callText(host, id, 'methods'), 'initialize,notifications/initialized')
  const warn = logs.find((l) => l.serverId === id && l.level === 'warn' && l.target === 'host.connect')
  assert.ok(warn, JSON.stringify(logs.filter((l) => l.serverId === id)))
  assert.match(warn.message, /not a discover result/)
  assert.match(warn.message, /protocol: "legacy"/)
})

test('auto: server-everything (TypeScript SDK v1) keeps working, and a v2 server pinned to legacy uses initialize', async (t) => {
  const { host } = newHost(t)
  const everything = await host.addServer({ name: 'everything', config: everythingEntry() })
  const pinned = await host.addServer({ name: 'pinned', config: fixtureEntry('modern-server.mjs', ['stdio']), protocol: 'legacy' })
  await waitState(host, everything, 'ready')
  await waitState(host, pinned, 'ready')
  assert.equal(host.serverInfo(everything).handshake, 'initialize')
  assert.ok((host.serverInfo(everything).instructions ?? '').length > 100, 'server-everything sends instructions')
  assert.equal(host.serverInfo(pinned).handshake, 'initialize')
  assert.equal(host.serverInfo(pinned).protocolVersion, '2025-11-25')
  assert.equal(await callText(host, pinned, 'echo', { text: 'old' }), 'old {}', 'no per-request envelope in the 2025 era')
})

test('protocol 2026-07-28 against a 2025-era server: protocol_error, siblings unaffected', async (t) => {
  const { host } = newHost(t)
  const strict = await host.addServer({ name: 'strict', config: fixtureEntry('version-server.mjs'), protocol: '2026-07-28' })
  const sibling = await host.addServer({ name: 'sibling', config: fixtureEntry('version-server.mjs') })
  const state = await waitState(host, strict, 'error')
  assert.equal(state.error.errorType, 'protocol_error', state.error.message)
  // Only server/discover was sent: the message names it, not initialize.
  assert.match(state.error.message, /answered server\/discover with JSON-RPC error -32601/)
  await waitState(host, sibling, 'ready')
})

test('an initialize answer naming a revision the host never offered is an error naming it', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'odd', config: fixtureEntry('version-server.mjs', ['--version=1999-01-01']) })
  const state = await waitState(host, id, 'error')
  assert.equal(state.error.errorType, 'protocol_error')
  assert.match(state.error.message, /1999-01-01/)
  assert.match(state.error.message, /"odd"/)
  await waitFor(() => host.processCount === 0, { what: 'the process is stopped' })
})

test('serverInfo: null before the first connection, not_found for an unknown id, typed errors', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'slow', config: fixtureEntry('version-server.mjs', ['--discover=silent']), protocol: 'legacy' })
  assert.equal(host.serverInfo(id), null)
  await rejectsWith(async () => host.serverInfo('nope'), 'not_found')
  await rejectsWith(async () => host.serverInfo(''), 'invalid_argument')
  await waitState(host, id, 'ready')
  assert.equal(host.serverInfo(id).name, 'version-server')
})

test('Streamable HTTP session: ready waits for the standalone GET stream, so a server request sent on it right away arrives', async (t) => {
  const server = await startHttpFixture(t, 'late-get-server.mjs', { GET_DELAY_MS: '600' })
  const asked = []
  const { host } = newHost(t, { handlers: { elicitation: async (params) => (asked.push(params.message), { action: 'accept', content: { name: 'Ada' } }) } })
  const id = await host.addServer({ name: 'late-get', config: { type: 'streamable-http', url: server.url } })
  await waitState(host, id, 'ready')
  // Called at once: without the wait, the elicitation goes out before the GET
  // stream is registered, is dropped, and the call times out.
  const text = await callText(host, id, 'ask', {}, { timeoutMs: 5_000, maxTotalTimeoutMs: 5_000 })
  assert.equal(text, 'accept:Ada')
  assert.deepEqual(asked, ['Your name?'])
})

test('2026-07-28 over HTTP: a tool with an invalid x-mcp-header costs only that tool, with a diagnostic (SEP-2243)', async (t) => {
  const server = await startHttpFixture(t, 'modern-server.mjs', {}, ['http'])
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'headers', config: { type: 'streamable-http', url: server.url } })
  await waitState(host, id, 'ready')
  const names = host.listTools().filter((x) => x.customizationId === id).map((x) => x.toolName)
  assert.ok(!names.includes('bad_header'), names.join())
  assert.ok(names.includes('echo') && names.includes('survey'), names.join())
  const d = host.toolDiagnostics().find((x) => x.serverId === id && x.tool === 'bad_header')
  assert.ok(d, JSON.stringify(host.toolDiagnostics()))
  assert.equal(d.action, 'omitted')
  assert.match(d.reason, /x-mcp-header/)
  assert.ok(logs.some((l) => l.serverId === id && l.level === 'warn' && /bad_header/.test(l.message)))
  // Over stdio there are no headers: the same tool is listed.
  const stdio = await host.addServer({ name: 'headers-stdio', config: fixtureEntry('modern-server.mjs', ['stdio']) })
  await waitState(host, stdio, 'ready')
  assert.ok(host.listTools().some((x) => x.customizationId === stdio && x.toolName === 'bad_header'))
})

test('2026-07-28 over HTTP, tools/list answered as SSE: read raw unless it mentions x-mcp-header, whose SEP-2243 rules then still hold', async (t) => {
  const { host } = newHost(t)
  // A listing with x-mcp-header annotations, answered over SSE: the bad
  // tool is left out and the valid one's argument travels as Mcp-Param-Region.
  const headers = await startHttpFixture(t, 'modern-server.mjs', { RESPONSE_MODE: 'sse' }, ['http'])
  const id = await host.addServer({ name: 'sse-headers', config: { type: 'streamable-http', url: headers.url } })
  await waitState(host, id, 'ready')
  const names = host.listTools().filter((x) => x.customizationId === id).map((x) => x.toolName)
  assert.ok(!names.includes('bad_header') && names.includes('regional') && names.includes('echo'), names.join())
  assert.equal(host.toolDiagnostics().find((x) => x.serverId === id && x.tool === 'bad_header')?.action, 'omitted')
  assert.equal(await callText(host, id, 'regional', { region: 'eu-west' }), 'region eu-west')
  assert.deepEqual((await headers.stats()).lastCallParams, { 'mcp-param-region': 'eu-west' })
  // A listing without them, over SSE (the raw path): every definition whole.
  const plain = await startHttpFixture(t, 'modern-server.mjs', { RESPONSE_MODE: 'sse', HEADER_TOOLS: '0' }, ['http'])
  const raw = await host.addServer({ name: 'sse-plain', config: { type: 'streamable-http', url: plain.url } })
  await waitState(host, raw, 'ready')
  const tools = host.listTools().filter((x) => x.customizationId === raw)
  assert.deepEqual(tools.map((x) => x.toolName).sort(), ['echo', 'forever', 'survey', 'where'])
  const echo = tools.find((x) => x.toolName === 'echo')
  assert.equal(echo.title, 'Echo')
  assert.deepEqual(echo.inputSchema.required, ['text'])
  assert.equal(echo.inputSchema.properties.text.type, 'string')
  assert.match(await callText(host, raw, 'echo', { text: 'hi' }), /^hi /)
})

test('auto: a 2025-era server slower to start than the probe time (11 s) is connected again with initialize, not failed', async (t) => {
  const marker = join(tmpDir(t), 'booted')
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'slowboot', config: fixtureEntry('version-server.mjs', [`--boot-once=${marker}`]), startupTimeoutMs: 60_000 })
  await waitState(host, id, 'ready', { timeout: 60_000 })
  assert.equal(host.serverInfo(id).handshake, 'initialize')
  const warn = logs.find((l) => l.serverId === id && l.level === 'warn' && l.target === 'host.connect')
  assert.ok(warn, JSON.stringify(logs.filter((l) => l.serverId === id)))
  assert.match(warn.message, /slow to start/)
})
