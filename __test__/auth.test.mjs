// OAuth: a Streamable HTTP server answering 401 moves to `authRequired` with
// RFC 9728 metadata; the AHP `authenticate` command brings it to `ready`;
// refusals carry a stable `code` and AHP's JSON-RPC number as `rpcCode`;
// secrets never leak.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, serverState, waitFor, everythingEntry, stateHistory, startHttpFixture, tmpDir } from './helpers/host.mjs'
import { startMiniWorld } from './fixtures/oauth/mini-world.mjs'
import { RemoteHost, collect } from './fixtures/oauth/remote-host.mjs'

const CANARY = 'canary-access-token-7f3a9c'

/** Starts the protected fixture server; resolves {url, base, stats()}. */
function protectedServer(t, env = {}) {
  return startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: CANARY, ...env })
}

function assertNoSecret(host, actions, logs, secret) {
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  assert.equal(everything.includes(secret), false, 'the secret appears in actions, logs or state')
}

test('401 → authRequired with protected resource metadata; authenticate → ready', async (t) => {
  const server = await protectedServer(t)
  const { host, actions, logs } = newHost(t)
  const id = await host.addServer({ name: 'prot', config: { type: 'streamable-http', url: server.url } })
  const state = await waitState(host, id, 'authRequired')
  assert.equal(state.reason, 'required')
  assert.equal(state.resource.resource, server.url)
  assert.deepEqual(state.resource.authorization_servers, [`${server.base}/as`])
  assert.deepEqual(state.requiredScopes, ['mcp:read'])
  assert.equal(state.oauthClient, undefined)

  // An unknown resource is InvalidParams (-32602) and lists what was advertised.
  await assert.rejects(host.authenticate({ resource: 'http://127.0.0.1:1/elsewhere', token: CANARY }), (err) => {
    assert.equal(err.name, 'HostError')
    assert.equal(err.code, 'invalid_params')
    assert.equal(err.rpcCode, -32602)
    assert.equal(err.data.code, undefined)
    assert.deepEqual(err.data.resources.map((r) => r.resource), [server.url])
    return true
  })

  // Declared scopes that do not cover requiredScopes: rejected, nothing sent.
  const before = await server.stats()
  await assert.rejects(host.authenticate({ resource: server.url, token: CANARY, scopes: ['mcp:write'] }), (err) => {
    assert.equal(err.code, 'auth_required')
    assert.equal(err.rpcCode, -32007)
    assert.equal(err.data.resources[0].resource, server.url)
    return true
  })
  assert.equal((await server.stats()).tokenRequests, before.tokenRequests, 'a token was sent despite insufficient scopes')

  // A token the server refuses: -32007, state stays authRequired (never ready).
  await assert.rejects(host.authenticate({ resource: server.url, token: 'wrong-token' }), (err) => err.code === 'auth_required' && err.rpcCode === -32007)
  assert.equal(serverState(host, id).kind, 'authRequired')
  assert.equal(serverState(host, id).reason, 'expired')

  await host.authenticate({ resource: server.url, token: CANARY, scopes: ['mcp:read'], expiresIn: 3600 })
  await waitState(host, id, 'ready')
  const result = await host.callTool({ serverId: id, name: 'whoami', arguments: { name: 'ahp' } })
  assert.equal(result.content[0].text, 'hello ahp')
  // authRequired is never followed by `starting` during a token retry.
  const kinds = stateHistory(actions, id).map((s) => s.kind)
  assert.deepEqual(kinds.slice(kinds.indexOf('authRequired')), ['authRequired', 'authRequired', 'ready'])
  assertNoSecret(host, actions, logs, CANARY)
})

test('discovery failures end in error naming the URLs tried; a sibling stays ready', async (t) => {
  for (const [mode, expect] of [['none', /oauth-protected-resource/], ['oversized', /larger than 65536 bytes/], ['malformed', /not a JSON object/], ['mismatch', /does not match/]]) {
    await t.test(mode, async (t) => {
      const server = await protectedServer(t, { METADATA: mode })
      const { host } = newHost(t)
      const sibling = await host.addServer({ name: 'sibling', config: everythingEntry() })
      const id = await host.addServer({ name: 'prot', config: { type: 'streamable-http', url: server.url } })
      const state = await waitState(host, id, 'error')
      assert.equal(state.error.errorType, 'auth_discovery_failed')
      assert.match(state.error.message, expect)
      assert.match(state.error.message, /\.well-known\/oauth-protected-resource/)
      await waitState(host, sibling, 'ready')
      // No retry loop: the state stays error.
      await new Promise((r) => setTimeout(r, 300))
      assert.equal(serverState(host, id).kind, 'error')
    })
  }
})

test('a stopped authRequired server refuses authenticate', async (t) => {
  const server = await protectedServer(t)
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'prot', config: { type: 'streamable-http', url: server.url } })
  await waitState(host, id, 'authRequired')
  host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'c', clientSeq: 1 })
  await waitState(host, id, 'stopped')
  await assert.rejects(host.authenticate({ resource: server.url, token: CANARY }), (err) => err.code === 'invalid_params' && err.rpcCode === -32602)
  await waitFor(async () => (await server.stats()).tokenRequests === 0, { what: 'no token sent' })
})

test('canary (workload identity): assertions and tokens never appear in actions, logs, errors, state or the host process stderr, even when the AS quotes the assertion', async (t) => {
  const world = await startMiniWorld()
  t.after(() => world.close())
  const host = new RemoteHost()
  t.after(() => host.close())
  const { seen, snapshot, failing, places: collected } = collect(host, () => id)
  await host.start({ dataDir: tmpDir(t, 'ahp-mcp-host-wif-') })
  const id = await host.addServer({ name: 'wif-canary', config: { type: 'streamable-http', url: world.resource }, oauth: { clientId: 'ci-workload', grant: 'jwtBearer' } })
  await waitFor(async () => (await snapshot())?.kind === 'authRequired', { timeout: 15_000, interval: 50, what: 'authRequired' })
  // Refused (the AS quotes the assertion in error_description), then a wrong audience, then accepted.
  world.refuseAssertions = true
  await failing(host.authorize(id, { assertion: await world.signWorkloadJwt() }))
  world.refuseAssertions = false
  await failing(host.authorize(id, { assertion: await world.signWorkloadJwt({ audience: 'https://elsewhere.example.test' }) }))
  await snapshot()
  await failing(host.authorize(id, { assertion: await world.signWorkloadJwt() }))
  await failing(host.callTool({ serverId: id, name: 'whoami' }))
  await snapshot()
  await host.close()

  assert.equal(seen.errors.length, 2, JSON.stringify(seen.errors.map((e) => e.message)))
  assert.ok(seen.results.some((r) => r?.content?.[0]?.text === 'token from as1'), 'the accepted assertion did not lead to a tool call')
  const secrets = [
    ...world.issued.assertions.map((s, i) => [`assertion #${i + 1}`, s]),
    ...world.issued.accessTokens.map((s, i) => [`access token #${i + 1}`, s]),
  ]
  const places = collected()
  for (const [what, value] of secrets) {
    for (const [where, text] of Object.entries(places)) {
      assert.equal(text.includes(value), false, `the ${what} appears in ${where}`)
    }
  }
})
