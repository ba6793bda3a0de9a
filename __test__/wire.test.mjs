// The wire (issue 13): a stdio line that cannot be decoded as a JSON-RPC
// message fails the request whose id it carries at once (`protocol_error`,
// saying what was wrong), is logged (`host.stdio` warning naming the
// server), and the connection goes on; a Streamable HTTP response stream
// that closes before its response is not an exited server.
// Fixtures: bad-lines-server.mjs (raw stdio), stream-close-server.mjs (raw
// Streamable HTTP on 127.0.0.1).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, fixtureEntry, serverState, startHttpFixture } from './helpers/host.mjs'

/** What each kind of bad line must be reported as (message pattern). */
const KINDS = {
  utf8: /not valid UTF-8/,
  utf8_last: /not valid UTF-8/,
  not_json: /not JSON/,
  not_json_last: /not JSON/,
  lone_not_json: /not JSON/,
  no_result: /neither `result` nor `error`/,
  error_code: /`code` is not an integer/,
  batch: /batch/,
  both: /both `result` and `error`/,
  version: /`jsonrpc` is not "2\.0"/,
}

const TIMEOUT = 30_000

async function badServer(t, { protocol, env } = {}) {
  const { host, logs } = newHost(t, { limits: { callTimeoutMs: TIMEOUT } })
  const config = { ...fixtureEntry('bad-lines-server.mjs'), ...(env ? { env } : {}) }
  // Far longer than any wait here: an error state proves the cause was seen, not the timeout.
  const id = await host.addServer({ name: 'bad', config, startupTimeoutMs: 600_000, ...(protocol ? { protocol } : {}) })
  return { host, logs, id }
}

/** The `host.stdio` warnings about server `id`. */
const stdioWarnings = (logs, id) => logs.filter((l) => l.target === 'host.stdio' && l.level === 'warn' && l.serverId === id)

for (const [kind, pattern] of Object.entries(KINDS)) {
  test(`tools/call answered with an undecodable line (${kind}) fails at once with protocol_error; the next call succeeds`, async (t) => {
    const { host, logs, id } = await badServer(t)
    await waitState(host, id, 'ready')
    await assert.rejects(host.callTool({ serverId: id, name: 'bad', arguments: { kind }, timeoutMs: TIMEOUT }), (e) => {
      assert.equal(e.code, 'protocol_error', e.message)
      assert.match(e.message, pattern)
      assert.ok(e.message.includes(id), e.message)
      return true
    })
    const warned = stdioWarnings(logs, id)
    assert.ok(warned.some((l) => pattern.test(l.message)), JSON.stringify(warned))
    assert.equal((await host.callTool({ serverId: id, name: 'good', timeoutMs: TIMEOUT })).content[0].text, 'ok')
    assert.equal(serverState(host, id).kind, 'ready')
  })
}

test('an undecodable line without an id is logged; the call it preceded is answered', async (t) => {
  const { host, logs, id } = await badServer(t)
  await waitState(host, id, 'ready')
  const result = await host.callTool({ serverId: id, name: 'bad', arguments: { kind: 'no_id' }, timeoutMs: TIMEOUT })
  assert.equal(result.content[0].text, 'ok')
  const warned = stdioWarnings(logs, id)
  assert.ok(warned.some((l) => /discarded a message: `jsonrpc` is not "2\.0"/.test(l.message) && l.message.includes('{"ok":1}')), JSON.stringify(warned))
})

test('resources/read and prompts/get answered with an undecodable line fail at once; the connection goes on', async (t) => {
  const { host, id } = await badServer(t)
  await waitState(host, id, 'ready')
  await assert.rejects(host.readResource(id, 'bad://utf8'), (e) => e.code === 'protocol_error' && /not valid UTF-8/.test(e.message) && e.message.includes('resources/read'))
  assert.equal((await host.readResource(id, 'file:///fine')).contents[0].text, 'fine')
  await assert.rejects(host.getPrompt(id, 'error_code'), (e) => e.code === 'protocol_error' && /`code` is not an integer/.test(e.message))
  assert.equal((await host.getPrompt(id, 'fine')).messages[0].content.text, 'fine')
})

test('the second round of an input_required tool call answered with an undecodable line fails at once', async (t) => {
  const { host, id } = await badServer(t)
  await waitState(host, id, 'ready')
  await assert.rejects(host.callTool({ serverId: id, name: 'mrtr_bad', arguments: { kind: 'no_result' }, timeoutMs: TIMEOUT }),
    (e) => e.code === 'protocol_error' && /neither `result` nor `error`/.test(e.message))
  assert.equal((await host.callTool({ serverId: id, name: 'good', timeoutMs: TIMEOUT })).content[0].text, 'ok')
})

for (const protocol of ['legacy', 'auto']) {
  test(`an initialize answered with an undecodable line fails the start with protocol_error (${protocol})`, async (t) => {
    const { host, logs, id } = await badServer(t, { protocol, env: { BAD_INIT: 'utf8' } })
    const state = await waitState(host, id, 'error', { timeout: 20_000 })
    assert.equal(state.error.errorType, 'protocol_error', JSON.stringify(state))
    assert.match(state.error.message, /not valid UTF-8/)
    assert.ok(stdioWarnings(logs, id).some((l) => /not valid UTF-8/.test(l.message)))
  })
}

for (const tool of ['close_stream', 'close_primed']) {
  test(`a Streamable HTTP response stream that closes before its response (${tool}) is protocol_error, not server_exited; the server stays ready`, async (t) => {
    const server = await startHttpFixture(t, 'stream-close-server.mjs')
    const { host } = newHost(t)
    const id = await host.addServer({ name: 'remote', config: { type: 'streamable-http', url: server.url }, protocol: 'legacy' })
    await waitState(host, id, 'ready')
    await assert.rejects(host.callTool({ serverId: id, name: tool, timeoutMs: TIMEOUT }), (e) => {
      assert.equal(e.code, 'protocol_error', e.message)
      assert.match(e.message, /response stream closed before the response/)
      assert.ok(e.message.includes(id), e.message)
      return true
    })
    assert.equal(serverState(host, id).kind, 'ready')
    assert.equal((await host.callTool({ serverId: id, name: 'good', timeoutMs: TIMEOUT })).content[0].text, 'ok')
    // No answer can come any more: the server is told the request is given up.
    const { closedCalls, cancelled } = await server.stats()
    assert.equal(closedCalls.length, 1)
    assert.deepEqual(cancelled.map((c) => c.requestId), closedCalls)
  })
}

test('a Streamable HTTP request whose connection is reset says "connection reset"; the server stays ready', async (t) => {
  const server = await startHttpFixture(t, 'stream-close-server.mjs')
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'remote', config: { type: 'streamable-http', url: server.url }, protocol: 'legacy' })
  await waitState(host, id, 'ready')
  await assert.rejects(host.callTool({ serverId: id, name: 'reset', timeoutMs: TIMEOUT }), (e) => {
    assert.equal(e.code, 'protocol_error', e.message)
    assert.match(e.message, /failed: connection reset; /)
    assert.ok(e.message.includes(id), e.message)
    return true
  })
  assert.equal(serverState(host, id).kind, 'ready')
  assert.equal((await host.callTool({ serverId: id, name: 'good', timeoutMs: TIMEOUT })).content[0].text, 'ok')
})
