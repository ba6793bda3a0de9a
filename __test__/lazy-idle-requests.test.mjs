// A lazy server's idle stop waits for every request in flight (issue 29
// review; this failed before the fix): it counted only tools/call as activity (src/host/lazy.rs `before_send` is
// the only `Activity::begin` caller), so a resources/read or prompts/get
// still in flight after `idleStopMs` is cut off: the server is stopped under
// it and the request fails `server_exited`. index.d.ts promises the idle stop
// comes only after "no request in flight and none begun for this long".

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { NODE, FIXTURES, newHost, waitState, findCustomization } from './helpers/host.mjs'

const SERVER = { type: 'stdio', command: NODE, args: [join(FIXTURES, 'slow-answers-server.cjs')] }

// The idle time (1.5 s) is longer than any gap between `ready` and the
// request on a loaded machine; each request takes twice as long.
test('an idle stop never cuts off a resources/read in flight on a lazy server', async (t) => {
  const { host } = newHost(t, { start: 'lazy' })
  await host.addServer({ name: 'slow', config: SERVER, idleStopMs: 1500 })
  await waitState(host, 'slow', 'ready')
  const read = await host.readResource('slow', 'slow://3000')
  assert.equal(read.contents[0].text, 'read ok')
})

test('an idle stop never cuts off a prompts/get in flight on a lazy server', async (t) => {
  const { host } = newHost(t, { start: 'lazy' })
  await host.addServer({ name: 'slow', config: SERVER, idleStopMs: 1500 })
  await waitState(host, 'slow', 'ready')
  const prompt = await host.getPrompt('slow', 'p3000')
  assert.equal(prompt.messages.length, 1)
})

test('a resource subscription keeps a lazy server up; once unsubscribed it is stopped when idle', async (t) => {
  const { host } = newHost(t, { start: 'lazy' })
  await host.addServer({ name: 'slow', config: SERVER, idleStopMs: 1500 })
  await waitState(host, 'slow', 'ready')
  await host.subscribeResource('slow', 'slow://1000')
  await new Promise((r) => setTimeout(r, 3000))
  assert.equal(findCustomization(host.getState(), 'slow').state.kind, 'ready', 'not stopped while subscribed')
  await host.unsubscribeResource('slow', 'slow://1000')
  await waitState(host, 'slow', 'stopped', { timeout: 15_000 })
})
