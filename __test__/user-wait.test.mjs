// Time a server-initiated request waits on the app (here an elicitation the
// user answers slowly) does not count against the inactivity timeout of that
// server's calls; the absolute cap (`maxTotalTimeoutMs`) still holds.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import v8 from 'node:v8'
import vm from 'node:vm'
import { newHost, waitState, fixtureEntry, sleep } from './helpers/host.mjs'

test('an elicitation answered after 2.5 s inside a call with timeoutMs 1000 succeeds', async (t) => {
  const { host } = newHost(t, {
    handlers: { elicitation: async () => { await sleep(2_500); return { action: 'accept', content: { name: 'Ada' } } } },
  })
  const id = await host.addServer({ name: 'elicit', config: fixtureEntry('elicit-server.mjs') })
  await waitState(host, id, 'ready')
  const result = await host.callTool({ serverId: id, name: 'elicit', timeoutMs: 1_000 })
  assert.deepEqual(JSON.parse(result.content[0].text), { action: 'accept', content: { name: 'Ada' } })
})

test('an elicitation never answered ends at maxTotalTimeoutMs (timeout, kind total); once the server withdraws it the inactivity timeout runs again', async (t) => {
  let asked = 0
  const { host } = newHost(t, { handlers: { elicitation: () => (asked++, new Promise(() => {})) } })
  const id = await host.addServer({ name: 'elicit', config: fixtureEntry('elicit-server.mjs') })
  await waitState(host, id, 'ready')
  await assert.rejects(host.callTool({ serverId: id, name: 'elicit', timeoutMs: 500, maxTotalTimeoutMs: 2_000 }), (e) => {
    assert.equal(e.code, 'timeout')
    assert.deepEqual(e.data, { kind: 'total', ms: 2_000 })
    return true
  })
  assert.equal(asked, 1)
  // The cancelled call made the server cancel its elicitation: nothing waits on the user now.
  await assert.rejects(host.callTool({ serverId: id, name: 'never', timeoutMs: 300 }), (e) => {
    assert.equal(e.code, 'timeout')
    assert.deepEqual(e.data, { kind: 'inactivity', ms: 300 })
    return true
  })
})

test('a handler answer nothing else references is not lost to garbage collection: the request keeps waiting like any unanswered one', async (t) => {
  // A UI that dropped its resolver: the promise is reachable only through
  // the host. Before the host held it, a GC collected it with the native
  // side's continuation and the server got an error answer (the call then
  // resolved with the tool's own error result instead of timing out).
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  let asked = 0
  const { host } = newHost(t, { handlers: { elicitation: () => (asked++, setTimeout(() => { gc(); gc() }, 200), new Promise(() => {})) } })
  const id = await host.addServer({ name: 'elicit-gc', config: fixtureEntry('elicit-server.mjs') })
  await waitState(host, id, 'ready')
  await assert.rejects(host.callTool({ serverId: id, name: 'elicit', timeoutMs: 500, maxTotalTimeoutMs: 1_500 }), (e) => {
    assert.equal(e.code, 'timeout')
    assert.deepEqual(e.data, { kind: 'total', ms: 1_500 })
    return true
  })
  assert.equal(asked, 1)
})
