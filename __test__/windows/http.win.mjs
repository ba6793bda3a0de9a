// Windows: a Streamable HTTP server on 127.0.0.1 (the protected fixture,
// run by Node for Windows): 401 → authRequired with its RFC 9728 metadata,
// a bearer token given through `authenticate` → ready and a tool call; the
// token (the canary) appears in no action, log, state or error.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, callText, startHttpFixture } from './helpers.mjs'

const CANARY = 'canary-win-access-token-7f3a9c'

test('Streamable HTTP on 127.0.0.1: authRequired, authenticate, a call; the token never appears', async (t) => {
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: CANARY })
  const { host, actions, logs } = newHost(t)
  const id = await host.addServer({ name: 'prot', config: { type: 'streamable-http', url: server.url } })
  const state = await waitState(host, id, 'authRequired')
  assert.equal(state.resource.resource, server.url)
  await host.authenticate({ resource: server.url, token: CANARY })
  await waitState(host, id, 'ready')
  assert.equal(await callText(host, id, 'whoami', { name: 'windows' }), 'hello windows')
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  assert.equal(everything.includes(CANARY), false, 'the token appears in actions, logs or state')
})

test('a wrong token is refused without echoing it', async (t) => {
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: CANARY })
  const { host, actions, logs } = newHost(t)
  const id = await host.addServer({ name: 'prot', config: { type: 'streamable-http', url: server.url } })
  await waitState(host, id, 'authRequired')
  const wrong = `${CANARY}-wrong`
  await assert.rejects(host.authenticate({ resource: server.url, token: wrong }), (e) => {
    assert.equal(e.code, 'auth_required')
    assert.equal(JSON.stringify({ message: e.message, data: e.data }).includes(wrong), false, e.message)
    return true
  })
  assert.equal((await waitState(host, id, 'authRequired')).reason, 'expired')
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  assert.equal(everything.includes(wrong), false, 'the token appears in actions, logs or state')
})
