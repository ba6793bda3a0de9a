// A lazy server's idle stop waits for every request in flight (issue 29
// review; this failed before the fix): it counted only tools/call as activity (src/host/lazy.rs `before_send` is
// the only `Activity::begin` caller), so a resources/read or prompts/get
// still in flight after `idleStopMs` is cut off: the server is stopped under
// it and the request fails `server_exited`. index.d.ts promises the idle stop
// comes only after "no request in flight and none begun for this long".

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { NODE, FIXTURES, newHost, tmpDir, waitState } from './helpers/host.mjs'

const SERVER = { type: 'stdio', command: NODE, args: [join(FIXTURES, 'slow-answers-server.cjs')] }

test('RED TEAM: an idle stop never cuts off a resources/read in flight on a lazy server', async (t) => {
  const { host } = newHost(t, { dataDir: tmpDir(t), start: 'lazy' })
  await host.addServer({ name: 'slow', config: SERVER, idleStopMs: 300 })
  await waitState(host, 'slow', 'ready')
  const read = await host.readResource('slow', 'slow://1000')
  assert.equal(read.contents[0].text, 'read ok')
})

test('RED TEAM: an idle stop never cuts off a prompts/get in flight on a lazy server', async (t) => {
  const { host } = newHost(t, { dataDir: tmpDir(t), start: 'lazy' })
  await host.addServer({ name: 'slow', config: SERVER, idleStopMs: 300 })
  await waitState(host, 'slow', 'ready')
  const prompt = await host.getPrompt('slow', 'p')
  assert.equal(prompt.messages.length, 1)
})
