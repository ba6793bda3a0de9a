// The legacy HTTP+SSE transport (issue 31 item 1; MCP 2024-11-05
// "Transports › HTTP with SSE", MCP 2025-11-25 "Transports › Backwards
// Compatibility") against the TypeScript SDK v1 `SSEServerTransport`
// (fixtures/sse-server.mjs) and the Python SDK's FastMCP with
// `transport="sse"` (fixtures/python/mcp1_sse_server.py), all on 127.0.0.1:
// `type: "sse"` entries, the fallback of a `streamable-http` entry whose POST
// is refused, an `endpoint` event on another origin, an event over the size
// limit, a stream the server drops (reconnect and a new session), and the
// secret canary (a header value and the URL's query never appear in actions,
// logs, errors, snapshots or files).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, fixtureEntry, waitState, waitFor, callText, startHttpFixture, rejectsWith, stateHistory, freePort, waitAccepting } from './helpers/host.mjs'
import { PY_FIXTURES, pythonWith, MCP_1 } from './helpers/python.mjs'
import { startOAuthWorld, signIn } from './fixtures/oauth-world.mjs'

const HEADER_CANARY = 'canary-sse-header-8c1f'
const QUERY_CANARY = 'canary-sse-query-3b7a'

/** The TS SDK v1 SSE fixture; `sse` is its event stream URL (with a canary query). */
async function sseFixture(t, env = {}) {
  const fixture = await startHttpFixture(t, 'sse-server.mjs', env)
  return { ...fixture, sse: `${fixture.base}/sse?key=${QUERY_CANARY}` }
}

/** Every file under `dir`, as text. */
function dataDirText(dir) {
  const files = []
  const walk = (at) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name)
      if (statSync(path).isDirectory()) walk(path)
      else files.push(readFileSync(path, 'utf8'))
    }
  }
  walk(dir)
  return files.join('\n')
}

function sseConfig(url, type = 'sse') {
  return { type, url, headers: { 'X-Api-Key': HEADER_CANARY } }
}

test('type "sse" against the TS SDK v1 SSEServerTransport: tools listed and called, headers on the GET and every POST', async (t) => {
  const fixture = await sseFixture(t)
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'legacy', config: sseConfig(fixture.sse) })
  await waitState(host, id, 'ready')
  const info = host.serverInfo(id)
  assert.equal(info.transport, 'sse')
  assert.equal(info.handshake, 'initialize')
  assert.equal(info.name, 'sse-fixture')
  const names = host.listTools().filter((tl) => tl.customizationId === id).map((tl) => tl.toolName).sort()
  assert.deepEqual(names, ['ask_roots', 'big', 'echo', 'hang', 'session'])
  assert.equal(await callText(host, id, 'echo', { message: 'over sse' }), 'echo:over sse')
  const stats = await fixture.stats()
  assert.equal(stats.gets, 1)
  assert.deepEqual(stats.methods.slice(0, 3), ['initialize', 'notifications/initialized', 'tools/list'])
  assert.ok(stats.requests.length >= 4)
  for (const r of stats.requests) {
    assert.equal(r.headers['x-api-key'], HEADER_CANARY, `${r.method} ${r.path}`)
    if (r.method === 'GET') assert.match(r.headers.accept, /text\/event-stream/)
  }
  assert.deepEqual(logs.filter((l) => l.level === 'warn' && l.serverId === id).map((l) => l.message), [])
})

test('a server request (roots/list) comes as an event and its answer goes back in a POST', async (t) => {
  const fixture = await sseFixture(t)
  const { host } = newHost(t, { handlers: { roots: async () => ({ roots: [{ uri: 'file:///workspace', name: 'ws' }] }) } })
  const id = await host.addServer({ name: 'asks', config: sseConfig(fixture.sse) })
  await waitState(host, id, 'ready')
  assert.deepEqual(JSON.parse(await callText(host, id, 'ask_roots')), { roots: [{ uri: 'file:///workspace', name: 'ws' }] })
  assert.ok((await fixture.stats()).methods.includes('response'), 'the answer was not POSTed')
})

test('fallback: a streamable-http entry whose POST is refused 404 connects over legacy SSE, with a warn log and serverInfo.transport', async (t) => {
  const fixture = await sseFixture(t)
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'fallback', config: sseConfig(fixture.sse, 'streamable-http') })
  await waitState(host, id, 'ready')
  assert.equal(host.serverInfo(id).transport, 'sse')
  assert.equal(await callText(host, id, 'echo', { message: 'fell back' }), 'echo:fell back')
  const warned = logs.filter((l) => l.level === 'warn' && l.target === 'host.connect' && l.serverId === id)
  assert.equal(warned.length, 1, JSON.stringify(logs))
  assert.match(warned[0].message, /POST was answered with HTTP 404: connecting with the legacy HTTP\+SSE transport/)
  // The server/discover probe and initialize were POSTed (both refused), then the GET.
  const stats = await fixture.stats()
  assert.deepEqual(stats.requests.slice(0, 3).map((r) => [r.method, r.path]), [['POST', '/sse'], ['POST', '/sse'], ['GET', '/sse']])
})

test('a Streamable HTTP server keeps transport "streamable-http"; a stdio one is "stdio"', async (t) => {
  const fixture = await startHttpFixture(t, 'modern-server.mjs', {}, ['http'])
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'modern', config: { type: 'streamable-http', url: fixture.url } })
  await waitState(host, id, 'ready')
  assert.equal(host.serverInfo(id).transport, 'streamable-http')
  assert.deepEqual(logs.filter((l) => /legacy HTTP\+SSE/.test(l.message)), [])
  const local = await host.addServer({ name: 'local', config: fixtureEntry('tools-server.mjs') })
  await waitState(host, local, 'ready')
  assert.equal(host.serverInfo(local).transport, 'stdio')
})

test('an endpoint event on another origin is refused (redirect_refused); nothing reaches that origin', async (t) => {
  const fixture = await sseFixture(t, { HOSTILE: 'other-origin' })
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'hostile', config: sseConfig(fixture.sse) })
  const state = await waitState(host, id, 'error')
  assert.equal(state.error.errorType, 'redirect_refused', JSON.stringify(state))
  assert.match(state.error.message, /endpoint event of http:\/\/127\.0\.0\.1:\d+ names another origin \(http:\/\/127\.0\.0\.1:\d+\); configured headers and tokens are never sent to another origin/)
  const stats = await fixture.stats()
  assert.deepEqual(stats.hostile, [], 'a request reached the other origin')
  assert.equal(stats.posts, 0)
})

test('an event over 16 MiB fails the call with limit_exceeded; the host opens a new session and serves on', async (t) => {
  const fixture = await sseFixture(t)
  const { host, actions } = newHost(t)
  const id = await host.addServer({ name: 'big', config: sseConfig(fixture.sse) })
  await waitState(host, id, 'ready')
  assert.equal((await callText(host, id, 'big', { bytes: 1000 })).length, 1000)
  const err = await rejectsWith(() => host.callTool({ serverId: id, name: 'big', arguments: { bytes: 16 * 1024 * 1024 } }), 'limit_exceeded')
  assert.match(err.message, /an SSE event over the legacy HTTP\+SSE event limit \(16777216 bytes\)/)
  assert.equal(await callText(host, id, 'echo', { message: 'after' }), 'echo:after')
  const stats = await fixture.stats()
  assert.equal(stats.gets, 2)
  assert.equal(stats.methods.filter((m) => m === 'initialize').length, 2)
  assert.deepEqual(stateHistory(actions, id).map((s) => s.kind).filter((k) => k !== 'starting'), ['ready'])
})

test('a stream the server drops: the waiting call fails server_exited, a new session is initialized, the server stays ready', async (t) => {
  const fixture = await sseFixture(t)
  const { host, actions } = newHost(t)
  const id = await host.addServer({ name: 'drop', config: sseConfig(fixture.sse) })
  await waitState(host, id, 'ready')
  const first = await callText(host, id, 'session')
  const hanging = host.callTool({ serverId: id, name: 'hang', arguments: {} }).then(() => assert.fail('answered'), (e) => e)
  await waitFor(async () => (await fixture.stats()).methods.includes('tools/call'), { what: 'the hang call to reach the server' })
  await fetch(`${fixture.base}/__drop`)
  const err = await hanging
  assert.equal(err.code, 'server_exited', err.message)
  assert.match(err.message, /the SSE stream ended before the answer; the host opens a new session/)
  const second = await callText(host, id, 'session')
  assert.notEqual(second, first, 'the same session after the stream was dropped')
  const stats = await fixture.stats()
  assert.equal(stats.gets, 2)
  const init = stats.methods.filter((m) => m === 'initialize' || m === 'notifications/initialized')
  assert.deepEqual(init, ['initialize', 'notifications/initialized', 'initialize', 'notifications/initialized'])
  assert.deepEqual(stateHistory(actions, id).map((s) => s.kind).filter((k) => k !== 'starting'), ['ready'])
})

test('canary: a header value and the URL query never appear in actions, logs, errors, state snapshots or dataDir files', async (t) => {
  const fixture = await sseFixture(t)
  const hostile = await sseFixture(t, { HOSTILE: 'other-origin' })
  const { host, actions, logs, dataDir } = newHost(t)
  const seen = { errors: [], snapshots: [], results: [] }
  const keep = async (promise) => {
    try {
      seen.results.push(await promise)
    } catch (e) {
      seen.errors.push({ code: e.code, message: e.message, data: e.data, stack: e.stack })
    }
  }
  const id = await host.addServer({ name: 'canary', config: sseConfig(fixture.sse) })
  const fell = await host.addServer({ name: 'canary-fallback', config: sseConfig(fixture.sse, 'streamable-http') })
  const bad = await host.addServer({ name: 'canary-hostile', config: sseConfig(hostile.sse) })
  await waitState(host, id, 'ready')
  await waitState(host, fell, 'ready')
  await waitState(host, bad, 'error')
  seen.snapshots.push(host.getState(), host.serverInfo(id), host.serverInfo(fell))
  await keep(host.callTool({ serverId: id, name: 'echo', arguments: { message: 'x' } }))
  const hanging = keep(host.callTool({ serverId: id, name: 'hang', arguments: {} }))
  await waitFor(async () => (await fixture.stats()).methods.includes('tools/call'), { what: 'the hang call' })
  await fetch(`${fixture.base}/__drop`)
  await hanging
  await keep(host.callTool({ serverId: fell, name: 'big', arguments: { bytes: 16 * 1024 * 1024 + 1 } }))
  await keep(host.callTool({ serverId: bad, name: 'echo', arguments: { message: 'x' } }))
  seen.snapshots.push(host.getState())
  assert.ok(seen.errors.length >= 3, JSON.stringify(seen.errors))
  const places = {
    actions: JSON.stringify(actions),
    logs: JSON.stringify(logs),
    errors: JSON.stringify(seen.errors),
    snapshots: JSON.stringify(seen.snapshots),
    results: JSON.stringify(seen.results),
    files: dataDirText(dataDir),
  }
  for (const canary of [HEADER_CANARY, QUERY_CANARY]) {
    for (const [where, text] of Object.entries(places)) {
      assert.equal(text.includes(canary), false, `${canary} appears in ${where}`)
    }
  }
  assert.ok(logs.some((l) => l.serverId === fell && l.level === 'warn'), 'no fallback warning')
})

test('Python FastMCP (mcp 1.x) with transport="sse": type "sse", and the fallback of a streamable-http entry (POST refused 405)', async (t) => {
  const python = pythonWith(MCP_1)
  const port = await freePort()
  const server = spawn(python, [join(PY_FIXTURES, 'mcp1_sse_server.py'), String(port)], { stdio: 'ignore' })
  t.after(() => server.kill('SIGTERM'))
  await waitAccepting(port, 60_000)
  const { host, logs } = newHost(t)
  const url = `http://127.0.0.1:${port}/sse`
  const id = await host.addServer({ name: 'pysse', config: { type: 'sse', url } })
  const fell = await host.addServer({ name: 'pyfallback', config: { type: 'streamable-http', url } })
  await waitState(host, id, 'ready', { timeout: 60_000 })
  await waitState(host, fell, 'ready', { timeout: 60_000 })
  for (const server of [id, fell]) {
    assert.equal(host.serverInfo(server).transport, 'sse')
    assert.equal(host.serverInfo(server).name, 'py-sse')
    assert.equal(await callText(host, server, 'hello', { name: server }), `hello ${server}`)
  }
  const warned = logs.filter((l) => l.level === 'warn' && l.target === 'host.connect')
  assert.deepEqual(warned.map((l) => l.serverId), [fell])
  assert.match(warned[0].message, /HTTP 405/)
})

test('OAuth on legacy SSE: a 401 on the GET leads to authRequired; after the host-run sign-in the token is on the GET and every POST', async (t) => {
  const world = await startOAuthWorld({ sse: true })
  t.after(() => world.close())
  const { host, actions, logs, dataDir } = newHost(t)
  const id = await host.addServer({ name: 'oauth-sse', config: { type: 'sse', url: world.resource } })
  const required = await waitState(host, id, 'authRequired')
  const unauthenticated = world.rs.unauthenticated
  assert.equal(required.resource.resource, world.resource)
  assert.deepEqual(required.resource.authorization_servers, [world.issuer])
  await signIn(host, id)
  await waitState(host, id, 'ready')
  assert.equal(host.serverInfo(id).transport, 'sse')
  const claims = JSON.parse(await callText(host, id, 'whoami', { note: 'sse' }))
  assert.equal(claims.aud, world.resource)
  assert.equal(claims.note, 'sse')
  const methods = world.rs.accepted.map((r) => r.method)
  assert.equal(methods[0], 'GET')
  assert.ok(methods.filter((m) => m === 'POST').length >= 4, methods.join(' '))
  assert.deepEqual(world.rs.rejected, [])
  assert.equal(world.rs.unauthenticated, unauthenticated, 'a request after the sign-in went without the token')
  // Canary: the tokens never appear in actions, logs, state or dataDir files.
  const places = [JSON.stringify(actions), JSON.stringify(logs), JSON.stringify(host.getState()), dataDirText(dataDir)]
  const tokens = [...world.issued.accessTokens, ...world.issued.refreshTokens]
  assert.ok(tokens.length >= 2)
  for (const token of tokens) assert.ok(places.every((text) => !text.includes(token)), 'a token appears')
})

test('OAuth and the fallback together: a streamable-http entry on a protected SSE-only server signs in, then falls back to SSE', async (t) => {
  const world = await startOAuthWorld({ sse: true })
  t.after(() => world.close())
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'oauth-fallback', config: { type: 'streamable-http', url: world.resource } })
  await waitState(host, id, 'authRequired')
  await signIn(host, id)
  await waitState(host, id, 'ready')
  assert.equal(host.serverInfo(id).transport, 'sse')
  assert.equal(JSON.parse(await callText(host, id, 'whoami')).aud, world.resource)
  assert.ok(logs.some((l) => l.serverId === id && l.level === 'warn' && /HTTP 404/.test(l.message)), JSON.stringify(logs))
})
