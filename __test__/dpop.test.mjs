// DPoP (RFC 9449; the MCP DPoP extension, SEP-1932) end to end against a
// real authorization server (oidc-provider with `features.dPoP`) and a
// resource server that takes only DPoP-bound tokens with valid proofs
// (fixtures/oauth-world.mjs, `dpop`), all on 127.0.0.1: the host proves
// possession at the token endpoint (code exchange and refresh), presents
// the token with the DPoP scheme and a fresh proof on every MCP request, and
// answers the nonces of both servers (§8, §9) once.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, serverState, waitFor } from './helpers/host.mjs'
import { startOAuthWorld, signIn } from './fixtures/oauth-world.mjs'

/** Short access-token lifetime for the refresh case (rmcp refreshes once < min(30 s, TTL/2) remain). */
const SHORT_TTL = 6

async function oauthWorld(t, options) {
  const world = await startOAuthWorld(options)
  t.after(() => world.close())
  return world
}

async function whoami(host, id, note) {
  const result = await host.callTool({ serverId: id, name: 'whoami', arguments: note ? { note } : {} })
  assert.equal(result.isError, undefined, JSON.stringify(result))
  return JSON.parse(result.content[0].text)
}

async function connect(t, world) {
  const { host, actions, logs } = newHost(t)
  const id = await host.addServer({ name: 'dpop', config: { type: 'streamable-http', url: world.resource } })
  await waitState(host, id, 'authRequired')
  await signIn(host, id)
  assert.equal(serverState(host, id).kind, 'ready')
  return { host, id, actions, logs }
}

test('DPoP: a sign-in at an AS advertising ES256 gets a DPoP-bound token; every MCP request carries a fresh proof; a refresh keeps the binding', async (t) => {
  const world = await oauthWorld(t, { dpop: true, accessTokenTTL: SHORT_TTL })
  const { host, id } = await connect(t, world)
  const first = await whoami(host, id, 'first')
  assert.equal(first.aud, world.resource)
  assert.match(first.jkt ?? '', /^[A-Za-z0-9_-]{43}$/, 'the access token is not bound to a key (no cnf.jkt)')

  // RFC 9449 §5: the code exchange carried a proof and returned a DPoP token.
  assert.deepEqual(world.codeGrants().map((r) => [r.status, r.dpopProof, r.tokenType]), [[200, true, 'DPoP']])
  // §7.1: only the DPoP scheme, every proof valid (htm, htu, ath, jkt, iat) and fresh (distinct jti).
  assert.ok(world.rs.accepted.length >= 2, 'the resource server served fewer requests than expected')
  assert.deepEqual([...new Set(world.rs.dpop.schemes)], ['DPoP'])
  assert.deepEqual(world.rs.dpop.invalid, [])
  assert.equal(new Set(world.rs.dpop.jtis).size, world.rs.dpop.jtis.length)
  assert.equal(world.rs.dpop.jtis.length, world.rs.accepted.length)

  // The refresh before expiry proves possession of the same key.
  const { exp } = world.rs.accepted.at(-1)
  await waitFor(() => Date.now() / 1000 > exp + 0.5, { timeout: (SHORT_TTL + 10) * 1000, interval: 100, what: 'the access token to expire' })
  const after = await whoami(host, id, 'after expiry')
  assert.equal(after.note, 'after expiry')
  assert.equal(after.jkt, first.jkt, 'the refreshed token is bound to another key')
  const refreshes = world.refreshGrants()
  assert.ok(refreshes.length >= 1, 'no refresh grant')
  assert.ok(refreshes.every((r) => r.status === 200 && r.dpopProof && r.tokenType === 'DPoP'), JSON.stringify(refreshes))
  assert.deepEqual(world.rs.dpop.invalid, [])
  assert.deepEqual(world.rs.rejected, [])
})

test('DPoP nonces: the AS (use_dpop_nonce at the token endpoint) and the MCP server (401 use_dpop_nonce) are each answered once with their nonce', async (t) => {
  const world = await oauthWorld(t, { dpop: 'nonce' })
  const { host, id } = await connect(t, world)
  assert.equal((await whoami(host, id, 'with nonces')).note, 'with nonces')

  // §8: the first code exchange was refused for its nonce, the retry with the AS nonce succeeded.
  const grants = world.codeGrants()
  assert.deepEqual(grants.map((r) => [r.status, r.error ?? null, r.dpopProof]), [[400, 'use_dpop_nonce', true], [200, null, true]])
  assert.equal(grants[1].tokenType, 'DPoP')
  // §9: the MCP server asked for its nonce; every request it served carried it (checked by the server).
  assert.ok(world.rs.dpop.nonceChallenges >= 1, 'the resource server never asked for a nonce')
  assert.ok(world.rs.dpop.nonceChallenges <= 2, `the host kept hitting nonce challenges: ${world.rs.dpop.nonceChallenges}`)
  assert.deepEqual(world.rs.dpop.invalid, [])
  assert.ok(world.rs.accepted.length >= 2)
  const before = world.rs.dpop.nonceChallenges
  await whoami(host, id, 'again')
  assert.equal(world.rs.dpop.nonceChallenges, before, 'a known nonce was not reused')
})

test('an AS without DPoP support: bearer tokens, no proofs', async (t) => {
  const world = await oauthWorld(t)
  const { host, id } = await connect(t, world)
  assert.equal((await whoami(host, id)).jkt, null)
  assert.deepEqual(world.codeGrants().map((r) => [r.status, r.dpopProof, r.tokenType]), [[200, false, 'Bearer']])
  assert.deepEqual([...new Set(world.rs.dpop.schemes)], ['Bearer'])
})
