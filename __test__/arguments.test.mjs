// The JS wrapper's argument checks and error shape: an id, name or URI that
// is not a non-empty string is refused with a HostError `invalid_argument`
// naming the argument (never coerced to a server id like "undefined");
// `err.code` is always a string, `rpcCode` only on AHP errors; event
// delivery is private.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, rejectsWith, HostError, McpHost } from './helpers/host.mjs'

const NOT_IDS = [undefined, null, '', 7, {}, ['a']]

test('ids, names and URIs that are not non-empty strings are refused with invalid_argument naming them', async (t) => {
  const { host } = newHost(t)
  const calls = [
    ['id', (v) => host.remove(v)],
    ['serverId', (v) => host.authorize(v)],
    ['serverId', (v) => host.listResources(v)],
    ['serverId', (v) => host.listResourceTemplates(v)],
    ['serverId', (v) => host.readResource(v, 'file:///r')],
    ['uri', (v) => host.readResource('srv', v)],
    ['serverId', (v) => host.listPrompts(v)],
    ['serverId', (v) => host.getPrompt(v, 'p')],
    ['name', (v) => host.getPrompt('srv', v)],
  ]
  for (const [name, call] of calls) {
    for (const value of NOT_IDS) {
      const err = await rejectsWith(() => call(value), 'invalid_argument')
      assert.equal(err.message, `${name}: must be a non-empty string`, `${name} = ${JSON.stringify(value)}`)
      assert.equal(err.rpcCode, undefined)
    }
  }
  // A well-formed id that names nothing still reaches the host.
  await rejectsWith(() => host.remove('nothing-here'), 'not_found')
  await rejectsWith(() => host.listResources('nothing-here'), 'not_found')
})

test('a missing options or action argument is a HostError invalid_argument, not a napi type error', async (t) => {
  const { host } = newHost(t)
  for (const call of [() => host.addPlugin(), () => host.addServer(), () => host.authenticate(), async () => host.dispatch()]) {
    const err = await rejectsWith(call, 'invalid_argument')
    assert.ok(!/StringExpected|rust type/.test(err.message), err.message)
  }
})

test('dispatch refuses a clientId that is not a non-empty string; the default is local', async (t) => {
  const { host } = newHost(t)
  const action = { type: 'session/mcpServerStopRequested', id: 'nothing-here' }
  for (const clientId of ['', 3, {}]) {
    assert.throws(() => host.dispatch(action, { clientId, clientSeq: 1 }), (err) => {
      assert.ok(err instanceof HostError)
      assert.equal(err.code, 'invalid_argument')
      assert.equal(err.message, 'origin.clientId: must be a non-empty string')
      return true
    })
  }
  const echo = host.dispatch(action)
  assert.equal(echo.origin.clientId, 'local')
  assert.match(echo.rejectionReason, /nothing-here/)
})

test('err.code is a string; rpcCode only on AHP errors; event delivery is private', async (t) => {
  const { host } = newHost(t)
  const err = await rejectsWith(() => host.listPrompts('nothing-here'), 'not_found')
  assert.equal(typeof err.code, 'string')
  assert.equal('rpcCode' in err, false)
  const plain = new HostError('internal', 'm')
  assert.equal('rpcCode' in plain, false)
  assert.equal('data' in plain, false)
  const ahp = new HostError('auth_required', 'm', { resources: [] }, -32007)
  assert.deepEqual([ahp.code, ahp.rpcCode, ahp.data], ['auth_required', -32007, { resources: [] }])
  assert.equal(host._deliver, undefined)
  assert.equal(Object.getOwnPropertyNames(McpHost.prototype).some((k) => k.includes('deliver')), false)
})
