// Host-run OAuth sign-in end to end against a real authorization server
// (oidc-provider) and a JWT-validating MCP resource server, all on 127.0.0.1
// (fixtures/oauth-world.mjs): discovery, dynamic registration, PKCE, RFC 8707
// resource, refresh before expiry (once for parallel calls), denied consent,
// tampered state, timeout, secrets never leaking (host in a child process,
// its stderr captured), a refresh token the AS rejects, and no token on a
// cross-origin redirect.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { newHost, waitState, serverState, waitFor, stateHistory, freePort, sleep, tmpDir } from './helpers/host.mjs'
import { browse, redirectPort, startAuthorize, signIn, STEP_UP_TOOL, STEP_UP_SCOPE } from './fixtures/oauth-world.mjs'
import { RemoteHost, collect } from './fixtures/oauth/remote-host.mjs'
import { oauthWorld, addProtected, portClosed } from './fixtures/oauth/harness.mjs'

/** Short access-token lifetime for the refresh tests (rmcp refreshes once < min(30 s, TTL/2) remain). */
const SHORT_TTL = 6

function whoami(host, id, note) {
  return host.callTool({ serverId: id, name: 'whoami', arguments: note ? { note } : {} })
}

function claimsOf(result) {
  assert.equal(result.isError, undefined, JSON.stringify(result))
  return JSON.parse(result.content[0].text)
}

/** Waits until the newest access token the resource server accepted has expired. */
async function waitLatestTokenExpired(world) {
  const { exp } = world.rs.accepted.at(-1)
  await waitFor(() => Date.now() / 1000 > exp + 0.5, { timeout: (SHORT_TTL + 10) * 1000, interval: 100, what: 'the access token to expire' })
}

test('host-run sign-in: authRequired → authorize → ready; tool calls carry a JWT for the resource', async (t) => {
  const world = await oauthWorld(t)
  const { host, actions } = newHost(t)
  const { id, state } = await addProtected(host, world)
  assert.equal(state.reason, 'required')
  assert.equal(state.resource.resource, world.resource)
  assert.deepEqual(state.resource.authorization_servers, [world.issuer])
  assert.deepEqual(state.requiredScopes, ['mcp:read'])

  const opened = []
  const events = []
  host.on('authorizationUrl', (e) => events.push(e))
  const { url, page } = await signIn(host, id, { openUrl: (u) => opened.push(u) })
  assert.equal(serverState(host, id).kind, 'ready', 'authorize resolved before the server was ready')
  assert.deepEqual(opened, [url])
  assert.deepEqual(events, [{ serverId: id, url }])
  assert.equal(page.status, 200)
  assert.match(page.body, /Signed in/)

  // The authorization request: code flow, PKCE S256, RFC 8707 resource, loopback redirect.
  const params = new URL(url).searchParams
  assert.equal(`${new URL(url).origin}${new URL(url).pathname}`, `${world.issuer}/auth`)
  assert.equal(params.get('response_type'), 'code')
  assert.equal(params.get('code_challenge_method'), 'S256')
  assert.match(params.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/)
  assert.ok(params.get('state'), 'no state parameter')
  assert.equal(params.get('resource'), world.resource)
  assert.ok(params.get('scope').split(' ').includes('mcp:read'), params.get('scope'))
  assert.match(params.get('redirect_uri'), /^http:\/\/127\.0\.0\.1:\d+\/callback$/)

  // Dynamic registration of a public client for that redirect URI; one code exchange for the resource.
  assert.equal(world.as.registrations.length, 1)
  const [registration] = world.as.registrations
  assert.equal(registration.clientId, params.get('client_id'))
  assert.deepEqual(registration.redirectUris, [params.get('redirect_uri')])
  assert.equal(registration.tokenEndpointAuthMethod, 'none')
  assert.deepEqual(world.codeGrants().map((r) => [r.status, r.resource, r.clientId]), [[200, world.resource, registration.clientId]])

  const claims = claimsOf(await whoami(host, id, 'first'))
  assert.equal(claims.aud, world.resource)
  assert.ok(claims.scope.split(' ').includes('mcp:read'), claims.scope)
  assert.equal(claims.clientId, registration.clientId)
  assert.equal(claims.note, 'first')
  assert.ok(world.rs.accepted.length > 0)
  assert.ok(world.rs.accepted.every((r) => r.aud === world.resource))
  assert.deepEqual(world.rs.rejected, [])

  // authRequired goes straight to ready (no error, no starting in between); the redirect port is closed.
  const kinds = stateHistory(actions, id).map((s) => s.kind)
  assert.deepEqual(kinds.slice(kinds.indexOf('authRequired')), ['authRequired', 'ready'])
  assert.ok(await portClosed(redirectPort(url)), 'the redirect listener is still open after sign-in')
})

test('the access token is refreshed before it expires: calls after the TTL still succeed', async (t) => {
  const world = await oauthWorld(t, { accessTokenTTL: SHORT_TTL })
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  await signIn(host, id)
  claimsOf(await whoami(host, id))
  const first = world.rs.accepted.at(-1)
  assert.equal(world.refreshGrants().length, 0)

  await waitLatestTokenExpired(world)
  const claims = claimsOf(await whoami(host, id, 'after expiry'))
  assert.equal(claims.aud, world.resource)
  assert.equal(claims.note, 'after expiry')
  const refreshes = world.refreshGrants()
  assert.ok(refreshes.length >= 1, 'the AS saw no refresh_token grant')
  assert.ok(refreshes.every((r) => r.status === 200 && r.resource === world.resource), JSON.stringify(refreshes))
  const latest = world.rs.accepted.at(-1)
  assert.notEqual(latest.jti, first.jti, 'the call after expiry used the old token')
  assert.equal(latest.aud, world.resource)
  // Refreshed proactively: the resource server never saw an expired or invalid token.
  assert.deepEqual(world.rs.rejected, [])
  assert.equal(serverState(host, id).kind, 'ready')
})

test('five parallel tool calls after expiry make exactly one refresh', async (t) => {
  const world = await oauthWorld(t, { accessTokenTTL: SHORT_TTL })
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  await signIn(host, id)
  claimsOf(await whoami(host, id))
  await waitLatestTokenExpired(world)
  assert.equal(world.refreshGrants().length, 0)

  const results = await Promise.all([0, 1, 2, 3, 4].map((i) => whoami(host, id, `parallel ${i}`)))
  assert.deepEqual(results.map((r) => claimsOf(r).note), [0, 1, 2, 3, 4].map((i) => `parallel ${i}`))
  assert.equal(world.refreshGrants().length, 1, `refresh grants: ${JSON.stringify(world.refreshGrants())}`)
  assert.equal(world.refreshGrants()[0].status, 200)
  assert.deepEqual(world.rs.rejected, [])
})

test('denied consent rejects auth_denied, keeps authRequired with a description, frees the port, no retry', async (t) => {
  const world = await oauthWorld(t)
  const { host, actions } = newHost(t)
  const { id } = await addProtected(host, world)
  const urls = []
  host.on('authorizationUrl', (e) => urls.push(e.url))
  world.deny = true
  const { url, done } = await startAuthorize(host, id)
  const page = await browse(url)
  assert.equal(new URL(page.callbackUrl).searchParams.get('error'), 'access_denied')
  await assert.rejects(done, (err) => {
    assert.equal(err.code, 'auth_denied', err.message)
    assert.match(err.message, /access_denied/)
    return true
  })
  const state = serverState(host, id)
  assert.equal(state.kind, 'authRequired')
  assert.match(state.description ?? '', /access_denied/)
  assert.ok(await portClosed(redirectPort(url)), 'the redirect port is still open')

  // No retry loop: nothing more happens on its own.
  await waitFor(() => stateHistory(actions, id).at(-1)?.description, { what: 'the description action to arrive' })
  const before = {
    actions: stateHistory(actions, id).length,
    urls: urls.length,
    authorizationRequests: world.as.authorizationRequests.length,
    tokenRequests: world.as.tokenRequests.length,
    unauthenticated: world.rs.unauthenticated,
  }
  await sleep(700)
  assert.deepEqual({
    actions: stateHistory(actions, id).length,
    urls: urls.length,
    authorizationRequests: world.as.authorizationRequests.length,
    tokenRequests: world.as.tokenRequests.length,
    unauthenticated: world.rs.unauthenticated,
  }, before)
  assert.equal(before.urls, 1)
  assert.equal(world.as.tokenRequests.length, 0, 'a token was requested after a denied consent')
  assert.equal(serverState(host, id).kind, 'authRequired')
})

test('a tampered state at the callback rejects auth_failed; the code is never redeemed', async (t) => {
  const world = await oauthWorld(t)
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  const { url, done } = await startAuthorize(host, id)
  const original = new URL(url).searchParams.get('state')
  const page = await browse(url, { rewriteCallback: (cb) => cb.searchParams.set('state', `tampered-${randomBytes(8).toString('hex')}`) })
  assert.notEqual(new URL(page.callbackUrl).searchParams.get('state'), original)
  assert.ok(new URL(page.callbackUrl).searchParams.get('code'), 'the AS issued no code')
  await assert.rejects(done, (err) => {
    assert.equal(err.code, 'auth_failed', err.message)
    return true
  })
  const state = serverState(host, id)
  assert.equal(state.kind, 'authRequired')
  assert.ok(state.description, 'authRequired has no description of the failure')
  assert.deepEqual(world.codeGrants(), [], 'the code was exchanged despite the wrong state')
  assert.ok(await portClosed(redirectPort(url)), 'the redirect port is still open')
})

test('authorize times out when the URL is never followed; the port is freed', async (t) => {
  const world = await oauthWorld(t)
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  const { url, done } = await startAuthorize(host, id, { timeoutMs: 1000 })
  await assert.rejects(done, (err) => {
    assert.equal(err.code, 'timeout', err.message)
    return true
  })
  const state = serverState(host, id)
  assert.equal(state.kind, 'authRequired')
  assert.ok(state.description, 'authRequired has no description of the timeout')
  assert.ok(await portClosed(redirectPort(url)), 'the redirect port is still open')
  assert.deepEqual(world.as.tokenRequests, [])
})

test('canary: tokens and the client secret never appear in actions, logs, errors, state or the host process stderr', async (t) => {
  const clientId = 'canary-confidential-client'
  const secret = `canary-client-secret-${randomBytes(16).toString('hex')}`
  const port = await freePort()
  const world = await oauthWorld(t, {
    accessTokenTTL: SHORT_TTL,
    staticClients: [{
      client_id: clientId,
      client_secret: secret,
      application_type: 'native',
      redirect_uris: [`http://127.0.0.1:${port}/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
  })
  const host = new RemoteHost()
  t.after(() => host.close())
  const { seen, snapshot, waitRemote, failing, places: collected } = collect(host, () => id)

  await host.start({ dataDir: tmpDir(t, 'ahp-mcp-host-oauth-'), oauthRedirectPort: port })
  const id = await host.addServer({ name: 'canary', config: { type: 'streamable-http', url: world.resource }, oauth: { clientId, clientSecret: secret } })
  const required = await waitRemote('authRequired')
  assert.equal(required.oauthClient?.clientId, clientId)

  // Sign-in with the pre-registered confidential client (no dynamic registration).
  const { url } = await signIn(host, id)
  assert.equal(redirectPort(url), port)
  assert.equal(new URL(url).searchParams.get('client_id'), clientId)
  assert.equal(world.as.registrations.length, 0)
  assert.deepEqual(world.codeGrants().map((r) => [r.status, r.clientId, r.authMethod]), [[200, clientId, 'client_secret_basic']])
  assert.equal((await waitRemote('ready')).kind, 'ready')
  seen.results.push(await whoami(host, id, 'signed in'))

  // Refresh (authenticated with the client secret).
  await waitLatestTokenExpired(world)
  seen.results.push(await whoami(host, id, 'refreshed'))
  assert.ok(world.refreshGrants().length >= 1, 'no refresh grant')
  assert.ok(world.refreshGrants().every((r) => r.status === 200 && r.clientId === clientId), JSON.stringify(world.refreshGrants()))
  await snapshot()

  // Failure 1: the refresh token is revoked; once the access token expires the refresh is refused.
  await world.revokeRefreshTokens()
  await waitLatestTokenExpired(world)
  await failing(whoami(host, id, 'revoked'))
  await waitFor(() => world.refreshGrants().some((r) => r.error === 'invalid_grant'), { what: 'the revoked refresh token to be tried' })
  await snapshot()

  // Failure 2: a denied sign-in.
  world.deny = true
  const denied = await startAuthorize(host, id)
  await browse(denied.url)
  const err = await failing(denied.done)
  assert.equal(err?.code, 'auth_denied')
  await snapshot()

  await host.close()
  const secrets = [
    ['client secret', secret],
    ...world.issued.accessTokens.map((s, i) => [`access token #${i + 1}`, s]),
    ...world.issued.refreshTokens.map((s, i) => [`refresh token #${i + 1}`, s]),
  ]
  assert.ok(world.issued.accessTokens.length >= 2 && world.issued.refreshTokens.length >= 2, 'the AS issued fewer tokens than expected')
  const places = { ...collected(), authorizationUrls: JSON.stringify(seen.urls) }
  for (const [what, value] of secrets) {
    for (const [where, text] of Object.entries(places)) {
      assert.equal(text.includes(value), false, `the ${what} appears in ${where}`)
    }
  }
  // The collection really covered the flow.
  assert.ok(seen.errors.length >= 2 && seen.actions.length > 3 && seen.snapshots.length > 3 && seen.results.length >= 2,
    JSON.stringify({ errors: seen.errors.length, actions: seen.actions.length, snapshots: seen.snapshots.length, results: seen.results.length }))
})

test('a refresh token the AS rejects puts the server back into authRequired (expired); signing in again recovers', async (t) => {
  const world = await oauthWorld(t, { accessTokenTTL: SHORT_TTL })
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  await signIn(host, id)
  claimsOf(await whoami(host, id))
  await world.revokeRefreshTokens()
  await waitLatestTokenExpired(world)

  let callError
  await assert.rejects(whoami(host, id, 'revoked'), (err) => {
    callError = err
    assert.equal(err.code, 'auth_required', err.message)
    return true
  })
  assert.ok(world.refreshGrants().some((r) => r.error === 'invalid_grant'), 'the revoked refresh token was never tried')
  // AHP clients learn about it from the state: authRequired, reason expired, with the resource metadata.
  const state = await waitState(host, id, 'authRequired', {
    timeout: 15_000,
    describe: () => `current state: ${JSON.stringify(serverState(host, id))}; the call failed with ${callError.code}: ${callError.message}`,
  })
  assert.equal(state.reason, 'expired')
  assert.equal(state.resource.resource, world.resource)
  assert.deepEqual(state.requiredScopes, ['mcp:read'])

  await signIn(host, id)
  assert.equal(claimsOf(await whoami(host, id, 'again')).note, 'again')
})

test('a cross-origin redirect during an MCP request carries no token; the server ends in redirect_refused', async (t) => {
  const world = await oauthWorld(t)
  let trapConnections = 0
  const trap = net.createServer((socket) => {
    trapConnections++
    socket.destroy()
  })
  await new Promise((resolve) => trap.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => trap.close(resolve)))
  const { host } = newHost(t, { limits: { restartBackoffMs: 50 } })
  const { id } = await addProtected(host, world)
  await signIn(host, id)
  claimsOf(await whoami(host, id))

  world.redirectTo = `http://127.0.0.1:${trap.address().port}/mcp`
  let callError
  await assert.rejects(whoami(host, id, 'redirected'), (err) => {
    callError = err
    return true
  })
  const state = await waitFor(() => {
    const s = serverState(host, id)
    return s?.kind === 'error' && s.error.errorType === 'redirect_refused' ? s : undefined
  }, {
    timeout: 15_000,
    what: 'error redirect_refused',
    describe: () => `current state: ${JSON.stringify(serverState(host, id))}; the call failed with ${callError.code}: ${callError.message}`,
  })
  assert.match(state.error.message, /redirect/)
  assert.ok(world.rs.redirected >= 1)
  assert.equal(trapConnections, 0, 'the other origin received a connection')
})

test('step-up through a host-run sign-in: a paused AHP tool call resumes after authorize() with the union of scopes', async (t) => {
  const world = await oauthWorld(t)
  const { host, actions, logs } = newHost(t)
  const { id } = await addProtected(host, world)
  await signIn(host, id)
  await waitState(host, id, 'ready')
  assert.equal(claimsOf(await whoami(host, id)).scope.includes(STEP_UP_SCOPE), false, 'the first sign-in asked only for the required scope')
  const chat = 'ahp-chat:/oauth-stepup'
  const pending = host.callTool({ serverId: id, name: STEP_UP_TOOL, chat, turnId: 'turn-1', toolCallId: 'tc-1' })
  await waitFor(() => host.getState().inputNeeded?.length === 1, { what: 'the toolAuthentication entry' })
  const needed = host.getState().inputNeeded[0]
  assert.deepEqual(needed.toolCall.auth.requiredScopes, [world.requiredScope, STEP_UP_SCOPE])
  assert.equal(needed.toolCall.auth.reason, 'insufficientScope')
  assert.equal(world.rs.insufficientScope, 1)
  // The app signs in again (the challenge's scopes are requested); the call resumes on the new tokens.
  const { url } = await signIn(host, id)
  const asked = new URL(url).searchParams.get('scope').split(' ')
  assert.ok(asked.includes(world.requiredScope) && asked.includes(STEP_UP_SCOPE), `scope=${asked}`)
  const result = await pending
  assert.match(result.content[0].text, new RegExp(`written with .*${STEP_UP_SCOPE}`))
  await waitFor(() => actions.some((e) => e.channel === chat && e.action.type === 'chat/toolCallComplete'), { what: 'the completion action' })
  const chatActions = actions.filter((e) => e.channel === chat).map((e) => e.action.type)
  assert.deepEqual(chatActions, ['chat/toolCallAuthRequired', 'chat/toolCallAuthResolved', 'chat/toolCallComplete'])
  assert.equal(actions.filter((e) => e.channel === chat).at(-1).action.result.success, true)
  assert.equal(host.getState().inputNeeded, undefined)
  assert.equal(world.rs.insufficientScope, 1, 'the retry was not refused again')
  const secrets = [...world.issued.accessTokens, ...world.issued.refreshTokens]
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  for (const secret of secrets) assert.equal(everything.includes(secret), false, 'a token leaked')
})

test('step-up whose challenge names only the new scope: authorize() asks for the union with the scopes already granted (SEP-2350), and the server keeps serving', async (t) => {
  // As the conformance suite's server does: the 403 names only mcp:write, not the mcp:read already granted.
  const world = await oauthWorld(t, { stepUpScope: 'added' })
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  const first = await signIn(host, id)
  assert.deepEqual(new URL(first.url).searchParams.get('scope').split(' ').filter((s) => s.startsWith('mcp:')), [world.requiredScope])
  await assert.rejects(host.callTool({ serverId: id, name: STEP_UP_TOOL }), (err) => {
    assert.equal(err.code, 'auth_required', err.message)
    return true
  })
  // The app signs in again with no scopes of its own: granted ∪ challenged, granted first.
  const { url } = await signIn(host, id)
  const asked = new URL(url).searchParams.get('scope').split(' ').filter((s) => s.startsWith('mcp:'))
  assert.deepEqual(asked, [world.requiredScope, STEP_UP_SCOPE])
  assert.equal(serverState(host, id).kind, 'ready')
  const written = await host.callTool({ serverId: id, name: STEP_UP_TOOL })
  assert.match(written.content[0].text, new RegExp(`written with .*${STEP_UP_SCOPE}`))
  // The new token still covers what the server needs for everything else.
  assert.ok(claimsOf(await whoami(host, id, 'after step-up')).scope.split(' ').includes(world.requiredScope))
})

test('canary (DPoP): tokens, DPoP proofs and the DPoP key never appear in actions, logs, errors, state or the host process stderr', async (t) => {
  const world = await oauthWorld(t, { dpop: 'nonce', accessTokenTTL: SHORT_TTL })
  const host = new RemoteHost()
  t.after(() => host.close())
  const { seen, snapshot, waitRemote, failing, places: collected } = collect(host, () => id)

  await host.start({ dataDir: tmpDir(t, 'ahp-mcp-host-dpop-') })
  const id = await host.addServer({ name: 'dpop-canary', config: { type: 'streamable-http', url: world.resource } })
  await waitRemote('authRequired')
  await signIn(host, id)
  await waitRemote('ready')
  seen.results.push(await whoami(host, id, 'signed in'))
  await waitLatestTokenExpired(world)
  seen.results.push(await whoami(host, id, 'refreshed'))
  assert.ok(world.refreshGrants().some((r) => r.status === 200 && r.dpopProof), 'no DPoP refresh')
  // A refused refresh, then a denied sign-in.
  await world.revokeRefreshTokens()
  await waitLatestTokenExpired(world)
  await failing(whoami(host, id, 'revoked'))
  world.deny = true
  const denied = await startAuthorize(host, id)
  await browse(denied.url)
  await failing(denied.done)
  await snapshot()
  await host.close()

  assert.ok(world.rs.dpop.nonceChallenges >= 1 && world.issued.dpopProofs.length >= 3, 'the flow did not exercise DPoP')
  const secrets = [
    ...world.issued.accessTokens.map((s, i) => [`access token #${i + 1}`, s]),
    ...world.issued.refreshTokens.map((s, i) => [`refresh token #${i + 1}`, s]),
    ...world.issued.dpopProofs.map((s, i) => [`DPoP proof #${i + 1}`, s]),
  ]
  const places = { ...collected(), authorizationUrls: JSON.stringify(seen.urls) }
  for (const [what, value] of secrets) {
    for (const [where, text] of Object.entries(places)) {
      assert.equal(text.includes(value), false, `the ${what} appears in ${where}`)
    }
  }
  // The key itself: no JWK (public or private) and no PEM anywhere the host writes.
  for (const [where, text] of Object.entries(places)) {
    for (const mark of ['"kty"', '"crv"', 'P-256', 'PRIVATE KEY']) {
      assert.equal(text.includes(mark), false, `${mark} appears in ${where}`)
    }
  }
  assert.ok(seen.errors.length >= 2 && seen.results.length >= 2, JSON.stringify({ errors: seen.errors.length, results: seen.results.length }))
})

test('an authorization server at a forbidden address fails the sign-in naming the rule (no fallback to the server\'s own /token)', async (t) => {
  for (const forbidden of ['http://169.254.169.254/', 'https://10.1.2.3/', 'file:///etc/passwd']) {
    const world = await oauthWorld(t, { authorizationServers: [forbidden] })
    const { host } = newHost(t)
    const { id, state } = await addProtected(host, world)
    assert.deepEqual(state.resource.authorization_servers, [forbidden])
    const urls = []
    host.on('authorizationUrl', (e) => urls.push(e.url))
    await assert.rejects(host.authorize(id, { timeoutMs: 20_000 }), (e) => {
      assert.equal(e.code, 'auth_failed', e.message)
      assert.match(e.message, /names only authorization servers the host may not reach/, e.message)
      assert.match(e.message, /link-local/, e.message)
      assert.match(e.message, forbidden.startsWith('file:') ? /a file: URL/ : new RegExp(new URL(forbidden).hostname.replaceAll('.', '\\.')), e.message)
      return true
    }, forbidden)
    assert.deepEqual(urls, [], `${forbidden}: no authorization URL was handed out`)
    const fallback = world.rs.unknownPaths.filter((p) => /^\/(authorize|token|register)$/.test(p))
    assert.deepEqual(fallback, [], `${forbidden}: the server's own endpoints were not used`)
  }
})
