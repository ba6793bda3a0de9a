// callTool with an AbortSignal: aborting rejects with code `cancelled` (the
// signal's reason as `cause`) and
// cancels the MCP request; a long-lived signal shared by many calls keeps no
// listeners once they settle; the server stays ready.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { getEventListeners } from 'node:events'
import { newHost, waitState, everythingEntry } from './helpers/host.mjs'

test('a shared AbortSignal collects no listeners; abort rejects with code cancelled and its reason', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'ev', config: everythingEntry() })
  await waitState(host, id, 'ready')
  const controller = new AbortController()
  for (let i = 0; i < 30; i++) {
    const r = await host.callTool({ serverId: id, name: 'echo', arguments: { message: `m${i}` }, signal: controller.signal })
    assert.equal(r.content[0].text, `Echo: m${i}`)
  }
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
  const slow = host.callTool({ serverId: id, name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 5 }, signal: controller.signal })
  setTimeout(() => controller.abort(new Error('user pressed stop')), 100)
  await assert.rejects(slow, (e) => e.code === 'cancelled' && e.cause?.message === 'user pressed stop' && /user pressed stop/.test(e.message))
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
  // An already-aborted signal rejects at once; the server keeps answering.
  await assert.rejects(host.callTool({ serverId: id, name: 'echo', arguments: { message: 'x' }, signal: controller.signal }), (e) => e.code === 'cancelled' && /user pressed stop/.test(e.message))
  assert.equal((await host.callTool({ serverId: id, name: 'echo', arguments: { message: 'after' } })).content[0].text, 'Echo: after')
})
