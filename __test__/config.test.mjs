// Configuration handling: invalid entries, broken mcp.json, degraded
// plugins, non-loopback http and cross-origin redirects with secret headers.
// Nothing here connects anywhere but 127.0.0.1.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { join } from 'node:path'
import {
  newHost, tmpDir, writePlugin, fixtureEntry, waitState, waitFor, callText, findCustomization, sleep, freePort,
  HostError,
} from './helpers/host.mjs'

test('addServer with an invalid config rejects with invalid_entry naming the field', async (t) => {
  const { host } = newHost(t)
  const cases = [
    [{ type: 'stdio' }, /field "command" is required/],
    [{ type: 'stdio', command: 'node', bogus: 1 }, /field "bogus": unknown field/],
    [{ type: 'stdio', command: 'node', args: 'not-an-array' }, /field "args"/],
    [{ type: 'stdio', command: 'node', env: { A: 1 } }, /field "env/],
    [{ type: 'streamable-http' }, /field "url" is required/],
    [{ type: 'streamable-http', url: 'not a url' }, /field "url"/],
    [{ type: 'carrier-pigeon', command: 'x' }, /field "type": unknown transport/],
    [{ command: 'node' }, /field "type" is required/],
    [{ type: 'sse' }, /field "url" is required for type "sse"/],
    [{ type: 'sse', url: 'http://example.com/sse' }, /field "url": must use https/],
    [{ type: 'SSE', url: 'https://127.0.0.1:1/sse' }, /did you mean "sse"/],
  ]
  for (const [config, pattern] of cases) {
    await assert.rejects(host.addServer({ name: 'bad', config }), (e) => {
      assert.ok(e instanceof HostError, String(e))
      assert.equal(e.code, 'invalid_entry', `${JSON.stringify(config)}: ${e.message}`)
      assert.match(e.message, /^server "bad": /)
      assert.match(e.message, pattern, JSON.stringify(config))
      return true
    })
  }
  // Nothing was added or started.
  assert.equal(findCustomization(host.getState(), 'bad'), undefined)
  assert.equal(host.processCount, 0)
  // The name is still free for a valid entry.
  const id = await host.addServer({ name: 'bad', config: fixtureEntry('tools-server.mjs') })
  await waitState(host, id, 'ready')
})

test('non-loopback http URL is rejected before any connection', async (t) => {
  const { host, actions } = newHost(t)
  for (const url of ['http://example.com/mcp', 'http://10.0.0.1/mcp', 'http://user:pw@127.0.0.1:1/mcp']) {
    await assert.rejects(host.addServer({ name: 'remote', config: { type: 'streamable-http', url } }), (e) => {
      assert.equal(e.code, 'invalid_entry', e.message)
      assert.match(e.message, /field "url"/)
      // Messages never carry URL values.
      assert.ok(!e.message.includes('example.com') && !e.message.includes('pw@'), e.message)
      return true
    })
  }
  await sleep(100)
  assert.equal(actions.length, 0)
  assert.equal(findCustomization(host.getState(), 'remote'), undefined)

  // In a plugin the same entry makes only that entry invalid.
  const root = writePlugin(join(tmpDir(t), 'webby'), {
    mcpServers: { web: { type: 'streamable-http', url: 'http://example.com/mcp' }, local: fixtureEntry('tools-server.mjs') },
  })
  const added = await host.addPlugin({ root })
  assert.equal(added.load.kind, 'degraded')
  assert.match(added.load.message, /server "web": field "url"/)
  assert.deepEqual(added.servers, ['webby/local'])
  await waitState(host, 'webby/local', 'ready')
})

test('broken mcp.json: plugin load error with line:col, other plugins keep working', async (t) => {
  const dir = tmpDir(t)
  const broken = writePlugin(join(dir, 'broken'), '{\n  "mcpServers": {\n    "x": { "type": "stdio" "command": "node" }\n  }\n}\n')
  const good = writePlugin(join(dir, 'good'), { mcpServers: { tools: fixtureEntry('tools-server.mjs') } })
  const { host, logs } = newHost(t)

  const bad = await host.addPlugin({ root: broken })
  assert.equal(bad.id, 'broken')
  assert.deepEqual(bad.servers, [])
  assert.equal(bad.load.kind, 'error')
  assert.match(bad.load.message, /mcp\.json:3:\d+: invalid JSON/)
  const entry = findCustomization(host.getState(), 'broken')
  assert.equal(entry.type, 'plugin')
  assert.equal(entry.load.kind, 'error')
  assert.equal(entry.load.message, bad.load.message)
  assert.deepEqual(entry.children ?? [], [])
  await waitFor(() => logs.some((l) => l.target === 'host.config' && l.level === 'error' && l.message.includes('mcp.json:3:')), {
    what: 'host.config error log',
  })

  // Other top-level failures are reported the same way.
  const unknownTop = writePlugin(join(dir, 'unknown-top'), { servers: {} })
  const r2 = await host.addPlugin({ root: unknownTop })
  assert.equal(r2.load.kind, 'error')
  // JSON.stringify(…, null, 2) puts "servers" on line 2, column 3.
  assert.match(r2.load.message, /mcp\.json:2:3: unknown top-level field "servers"/)
  const noFile = join(dir, 'no-file')
  writePlugin(noFile, '{}')
  const r3 = await host.addPlugin({ root: noFile })
  assert.equal(r3.load.kind, 'error')
  assert.match(r3.load.message, /mcp\.json:1:1: "mcpServers" is required/)

  const ok = await host.addPlugin({ root: good })
  assert.equal(ok.load.kind, 'loaded')
  await waitState(host, 'good/tools', 'ready')
  assert.equal(await callText(host, 'good/tools', 'echo', { message: 'fine' }), 'echo:fine')
  assert.equal(findCustomization(host.getState(), 'broken').load.kind, 'error')
})

test('plugin with one invalid entry is degraded and its valid sibling runs', async (t) => {
  const root = writePlugin(join(tmpDir(t), 'mixed'), {
    mcpServers: {
      broken: { type: 'stdio', command: 'node', surprise: true },
      fine: fixtureEntry('tools-server.mjs'),
    },
  })
  const { host } = newHost(t)
  const added = await host.addPlugin({ root })
  assert.equal(added.load.kind, 'degraded')
  assert.match(added.load.message, /server "broken": field "surprise"/)
  assert.deepEqual(added.servers, ['mixed/fine'])
  await waitState(host, 'mixed/fine', 'ready')
  assert.equal(await callText(host, 'mixed/fine', 'echo', { message: 'sibling' }), 'echo:sibling')
  const plugin = findCustomization(host.getState(), 'mixed')
  assert.equal(plugin.load.kind, 'degraded')
  assert.deepEqual(plugin.children.map((c) => c.id), ['mixed/fine'])
  assert.ok(host.listTools().every((t) => t.customizationId === 'mixed/fine'))
})

/** A 127.0.0.1 HTTP server that records requests; `handler` answers them. */
async function recordingServer(t, handler) {
  const requests = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (d) => { body += d })
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body })
      handler(req, res)
    })
  })
  const port = await freePort()
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }))
  return { server, port, requests }
}

test('cross-origin redirect is refused and the configured secret header goes nowhere else', async (t) => {
  const CANARY = 'canary-secret-123'
  // The other origin: must never see a request.
  const other = await recordingServer(t, (req, res) => { res.writeHead(500); res.end() })
  // The configured origin answers every request with a 307 to the other origin.
  const target = `http://localhost:${other.port}/mcp`
  const origin = await recordingServer(t, (req, res) => {
    res.writeHead(307, { Location: target })
    res.end()
  })

  const { host, actions, logs } = newHost(t)
  const id = await host.addServer({
    name: 'redirected',
    config: { type: 'streamable-http', url: `http://127.0.0.1:${origin.port}/mcp`, headers: { 'X-Api-Key': CANARY } },
    startupTimeoutMs: 20_000,
  })
  const state = await waitState(host, id, 'error')

  // The configured origin got the header (that is its purpose) ...
  assert.ok(origin.requests.length >= 1)
  assert.equal(origin.requests[0].headers['x-api-key'], CANARY)
  // ... the other origin got nothing at all.
  await sleep(200)
  assert.equal(other.requests.length, 0, JSON.stringify(other.requests))

  // The secret appears in no action, log, state or error message.
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  assert.ok(!everything.includes(CANARY), 'canary leaked into actions/logs/state')
  assert.ok(!state.error.message.includes(CANARY))
  await assert.rejects(host.callTool({ serverId: id, name: 'echo', arguments: {} }), (e) => {
    assert.equal(e.code, 'server_not_ready')
    assert.ok(!e.message.includes(CANARY))
    return true
  })
  assert.ok(!JSON.stringify({ actions, logs }).includes(CANARY))
  // A failed connect is not retried on its own.
  const count = origin.requests.length
  await sleep(300)
  assert.equal(origin.requests.length, count)

  // The refusal is reported as such.
  assert.equal(state.error.errorType, 'redirect_refused', state.error.message)
  assert.match(state.error.message, /redirect to another origin refused/)
})

test('same-origin redirect is followed', async (t) => {
  // Contrast case for the test above: a 307 within the origin is fine; the
  // target answers with a non-MCP 404, so the server ends in a connect error
  // (not redirect_refused) after the redirected request arrived.
  let redirected = 0
  const origin = await recordingServer(t, (req, res) => {
    if (req.url === '/mcp') {
      res.writeHead(307, { Location: '/moved' })
      res.end()
    } else {
      redirected++
      res.writeHead(404)
      res.end()
    }
  })
  const { host } = newHost(t)
  const id = await host.addServer({
    name: 'same-origin',
    config: { type: 'streamable-http', url: `http://127.0.0.1:${origin.port}/mcp`, headers: { 'X-Api-Key': 'k' } },
  })
  const state = await waitState(host, id, 'error')
  assert.notEqual(state.error.errorType, 'redirect_refused', state.error.message)
  assert.ok(redirected >= 1, 'the redirect target was requested')
  assert.equal(origin.requests.find((r) => r.url === '/moved').headers['x-api-key'], 'k')
})
