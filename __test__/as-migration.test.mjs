// Authorization-server migration (MCP 2026-07-28 "Authorization", SEP-2352):
// when the protected resource metadata names a new authorization server,
// the next sign-in registers with it and never presents the client of the
// old one there; stored credentials are keyed by issuer
// (fixtures/oauth/mini-world.mjs, on 127.0.0.1).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, serverState, waitFor } from './helpers/host.mjs'
import { startMiniWorld } from './fixtures/oauth/mini-world.mjs'
import { signIn } from './fixtures/oauth-world.mjs'

test('SEP-2352: after the resource metadata moves to a new authorization server, the next sign-in registers there and reuses nothing of the old one', async (t) => {
  const world = await startMiniWorld({ names: ['as1', 'as2'] })
  t.after(() => world.close())
  const stored = new Map()
  const credentials = {
    get: async (key) => stored.get(key),
    set: async (key, value) => { stored.set(key, value) },
    delete: async (key) => { stored.delete(key) },
  }
  const { host } = newHost(t, { credentials })
  const id = await host.addServer({ name: 'moving', config: { type: 'streamable-http', url: world.resource } })
  const first = await waitState(host, id, 'authRequired')
  assert.deepEqual(first.resource.authorization_servers, [world.as.as1.issuer])
  const { url: url1 } = await signIn(host, id)
  assert.equal(new URL(url1).origin, world.as.as1.issuer)
  assert.equal((await host.callTool({ serverId: id, name: 'whoami' })).content[0].text, 'token from as1')
  const as1Client = world.as.as1.registrations[0].clientId

  world.moveTo('as2')
  await assert.rejects(host.callTool({ serverId: id, name: 'whoami' }), (err) => err.code === 'auth_required' || err.code === 'server_not_ready')
  const moved = await waitFor(() => {
    const s = serverState(host, id)
    return s?.kind === 'authRequired' && s.resource.authorization_servers[0] === world.as.as2.issuer ? s : undefined
  }, { timeout: 15_000, what: 'authRequired naming the new authorization server' })
  assert.equal(moved.reason, 'expired')

  const { url: url2 } = await signIn(host, id)
  assert.equal(new URL(url2).origin, world.as.as2.issuer)
  assert.equal(serverState(host, id).kind, 'ready')
  assert.equal((await host.callTool({ serverId: id, name: 'whoami' })).content[0].text, 'token from as2')
  // Registered anew at the new issuer; the old client id never reached it.
  assert.equal(world.as.as2.registrations.length, 1)
  const as2Client = world.as.as2.registrations[0].clientId
  assert.equal(new URL(url2).searchParams.get('client_id'), as2Client)
  const seenAtAs2 = [...world.as.as2.authorizationRequests, ...world.as.as2.tokenRequests].map((r) => r.clientId)
  assert.ok(seenAtAs2.length >= 2 && seenAtAs2.every((c) => c === as2Client), JSON.stringify(seenAtAs2))
  assert.notEqual(as2Client, as1Client)
  // Credentials are stored per (issuer, resource).
  const keys = [...stored.keys()].sort()
  assert.deepEqual(keys, [
    `ahp-mcp-host/oauth/v1 ${world.as.as1.issuer} ${world.resource}`,
    `ahp-mcp-host/oauth/v1 ${world.as.as2.issuer} ${world.resource}`,
  ].sort())
})
