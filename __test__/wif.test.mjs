// Workload identity federation (SEP-1933, `grant: 'jwtBearer'`): the app
// hands the host a workload JWT with `authorize(serverId, {assertion})` and
// the host redeems it at the MCP server's authorization server with the RFC
// 7523 §2.1 JWT-bearer grant (fixtures/oauth/mini-world.mjs, on 127.0.0.1).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, serverState } from './helpers/host.mjs'
import { startMiniWorld, JWT_BEARER } from './fixtures/oauth/mini-world.mjs'

async function miniWorld(t, options) {
  const world = await startMiniWorld(options)
  t.after(() => world.close())
  return world
}

async function addWorkload(host, world) {
  const id = await host.addServer({
    name: 'wif',
    config: { type: 'streamable-http', url: world.resource },
    oauth: { clientId: 'ci-workload', grant: 'jwtBearer' },
  })
  await waitState(host, id, 'authRequired')
  return id
}

test('jwtBearer: authorize({assertion}) redeems the workload JWT with the RFC 7523 JWT-bearer grant; no browser, no registration', async (t) => {
  const world = await miniWorld(t)
  const { host } = newHost(t)
  const urls = []
  host.on('authorizationUrl', (e) => urls.push(e))
  const id = await addWorkload(host, world)
  const assertion = await world.signWorkloadJwt()
  await host.authorize(id, { assertion })
  assert.equal(serverState(host, id).kind, 'ready')
  const result = await host.callTool({ serverId: id, name: 'whoami' })
  assert.equal(result.content[0].text, 'token from as1')

  const { tokenRequests, registrations, authorizationRequests } = world.as.as1
  assert.deepEqual(tokenRequests, [{ grantType: JWT_BEARER, clientId: 'ci-workload', resource: world.resource, scope: undefined, assertionVerified: true }])
  assert.deepEqual([registrations, authorizationRequests, urls], [[], [], []])
})

test('jwtBearer: a refused assertion rejects auth_failed with the OAuth error but never the assertion; nothing is retried', async (t) => {
  const world = await miniWorld(t)
  const { host, actions, logs } = newHost(t)
  const id = await addWorkload(host, world)
  world.refuseAssertions = true
  const assertion = await world.signWorkloadJwt()
  let error
  await assert.rejects(host.authorize(id, { assertion }), (err) => {
    error = err
    assert.equal(err.code, 'auth_failed', err.message)
    assert.match(err.message, /invalid_grant/)
    return true
  })
  const state = serverState(host, id)
  assert.equal(state.kind, 'authRequired')
  assert.match(state.description ?? '', /invalid_grant/)
  // One JWT-bearer request: no retry, no fallback to another grant.
  assert.deepEqual(world.as.as1.tokenRequests.map((r) => [r.grantType, r.error]), [[JWT_BEARER, 'invalid_grant']])
  assert.equal(world.as.as1.registrations.length, 0)
  const everything = JSON.stringify({ error: { message: error.message, data: error.data, stack: error.stack }, actions, logs, state: host.getState() })
  assert.equal(everything.includes(assertion), false, 'the assertion leaked')
})

test('jwtBearer: authorize() without an assertion is invalid_argument and sends nothing', async (t) => {
  const world = await miniWorld(t)
  const { host } = newHost(t)
  const id = await addWorkload(host, world)
  await assert.rejects(host.authorize(id), (err) => {
    assert.equal(err.code, 'invalid_argument', err.message)
    assert.match(err.message, /assertion/)
    return true
  })
  assert.deepEqual(world.as.as1.tokenRequests, [])
})
