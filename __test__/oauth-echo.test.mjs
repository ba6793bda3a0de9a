// A token response with a wrongly typed member (issue 24, item 7, the
// token-response part): the sign-in fails `auth_failed` naming what was
// wrong, and the member's value (here the access token itself, sent as
// `expires_in`, and a canary as `token_type`) never reaches the error,
// `authRequired.description`, `getState()`, actions or logs. And (item 15)
// `authorize({timeoutMs})` bounds the whole sign-in, a token response that
// trickles too.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, serverState, waitFor } from './helpers/host.mjs'
import { startOAuthWorld, startAuthorize, browse } from './fixtures/oauth-world.mjs'

const CANARY = 'canary-token-type-9b2e'

test('a wrongly typed token response member is not echoed into the error, the description or the state', async (t) => {
  const world = await startOAuthWorld()
  t.after(() => world.close())
  const { host, actions, logs } = newHost(t)
  const id = await host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  await waitState(host, id, 'authRequired')
  world.tamperTokenResponse = (body) => ({ ...body, expires_in: body.access_token, token_type: { kind: CANARY } })
  const { url, done } = await startAuthorize(host, id)
  await browse(url)
  const error = await done.then(() => assert.fail('authorize resolved'), (e) => e)
  assert.equal(error.code, 'auth_failed', error.message)
  assert.match(error.message, /invalid type/)
  await waitFor(() => serverState(host, id)?.description, { what: 'the description of the failure' })
  const [token] = world.issued.accessTokens
  assert.ok(token && token.length > 20, 'the AS issued a token')
  const seen = JSON.stringify({ message: error.message, state: host.getState(), actions, logs })
  for (const secret of [token, CANARY]) {
    assert.ok(!seen.includes(secret), `${secret === CANARY ? 'the canary' : 'the access token'} was echoed: ${error.message}`)
  }
})

test('authorize({timeoutMs}) covers a token response that trickles: timeout, authRequired kept', async (t) => {
  const world = await startOAuthWorld()
  t.after(() => world.close())
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  await waitState(host, id, 'authRequired')
  world.trickleTokenResponse = true
  const { url, done } = await startAuthorize(host, id, { timeoutMs: 3_000 })
  await browse(url)
  const error = await done.then(() => assert.fail('authorize resolved'), (e) => e)
  assert.equal(error.code, 'timeout', error.message)
  assert.match(error.message, /3000 ms/)
  assert.equal(serverState(host, id)?.kind, 'authRequired')
  // It timed out in the token exchange, after the redirect came.
  assert.equal(world.codeGrants().length, 1)
})
