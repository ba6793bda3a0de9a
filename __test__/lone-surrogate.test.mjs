// A lone UTF-16 surrogate in a server's JSON text (issue 29 red team F7): a
// JS server that cut a string mid-emoji sends "ab\ud83d" (TypeScript SDK:
// JSON.stringify). JSON.parse reads it; the host reads each lone surrogate
// escape as U+FFFD and the call settles at once with the result, over stdio
// and Streamable HTTP SSE events. Before, the stdio line was discarded and
// the call waited for its timeout. A Streamable HTTP JSON body is decoded by
// rmcp before the host sees it: such a call fails at once (protocol_error).
// Fixture: lone-surrogate-server.mjs (TypeScript SDK v1).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, fixtureEntry, startHttpFixture } from './helpers/host.mjs'

/** Long enough that a call waiting for it fails the test's own timeout. */
const TIMEOUT = 60_000
/** A call that settles "at once" does so well within this (ms). */
const AT_ONCE = 10_000

const EXPECTED = { cut: 'ab\uFFFD rest', cut_end: 'ab\uFFFD', low: 'x\uFFFD', good: 'ok' }

async function callAll(t, config) {
  const { host, logs } = newHost(t, { limits: { callTimeoutMs: TIMEOUT } })
  const id = await host.addServer({ name: 'cut', config })
  await waitState(host, id, 'ready')
  for (const [name, text] of Object.entries(EXPECTED)) {
    const started = Date.now()
    const result = await host.callTool({ serverId: id, name, timeoutMs: TIMEOUT })
    assert.ok(Date.now() - started < AT_ONCE, `${name} took ${Date.now() - started} ms`)
    assert.equal(result.content[0].text, text, name)
  }
  const warned = logs.filter((l) => l.level === 'warn' && l.serverId === id)
  assert.deepEqual(warned.map((l) => l.message), [], 'a repaired message is no discarded line')
}

test('stdio: a lone surrogate escape in a tool result is read as U+FFFD; the call settles at once', async (t) => {
  await callAll(t, fixtureEntry('lone-surrogate-server.mjs', ['stdio']))
})

test('Streamable HTTP (SSE answers): a lone surrogate escape is read as U+FFFD; the call settles at once', async (t) => {
  const { url } = await startHttpFixture(t, 'lone-surrogate-server.mjs', {}, ['http'])
  await callAll(t, { type: 'streamable-http', url })
})

test('Streamable HTTP (JSON answers): a lone surrogate escape fails the call at once with protocol_error naming the server', async (t) => {
  // rmcp decodes a JSON body itself, before the host sees it: the call
  // fails (documented in docs/guide/tools.md), it does not wait.
  const { url } = await startHttpFixture(t, 'lone-surrogate-server.mjs', {}, ['http-json'])
  const { host } = newHost(t, { limits: { callTimeoutMs: TIMEOUT } })
  const id = await host.addServer({ name: 'cut', config: { type: 'streamable-http', url } })
  await waitState(host, id, 'ready')
  const started = Date.now()
  await assert.rejects(host.callTool({ serverId: id, name: 'cut', timeoutMs: TIMEOUT }), (e) => {
    assert.equal(e.code, 'protocol_error', e.message)
    assert.match(e.message, /hex escape/)
    assert.ok(e.message.includes(`on ${id}`), e.message)
    return true
  })
  assert.ok(Date.now() - started < AT_ONCE)
  assert.equal((await host.callTool({ serverId: id, name: 'good', timeoutMs: TIMEOUT })).content[0].text, 'ok')
})
