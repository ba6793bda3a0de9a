// Windows: a host-run OAuth sign-in (MCP 2025-11-25 "Authorization")
// against a real authorization server on 127.0.0.1 (oidc-provider, from the
// OAuth world of oauth.test.mjs, run beside the suite by
// scripts/test-windows.js: fixtures/oauth-service.mjs): discovery, dynamic
// client registration, PKCE, the RFC 8707 resource indicator, the host's
// loopback redirect listener (in Node for Windows) receiving the code, a
// tool call carrying a JWT for the resource; no token the server issued
// appears in any action, log, state or error.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { newHost, waitState, serverState } from './helpers.mjs'

const SERVICE = process.env.AHP_WIN_OAUTH_SERVICE

/** A request to the OAuth service (node:http: Node for Windows' fetch fails under Wine). */
function service(method, path, value) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${SERVICE}${path}`, { method, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { text += d })
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${path}: HTTP ${res.statusCode}: ${text}`))))
    })
    req.once('error', reject)
    req.end(value === undefined ? undefined : JSON.stringify(value))
  })
}

/** True when nothing accepts TCP connections on 127.0.0.1:port. */
function portClosed(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port })
    s.once('connect', () => { s.destroy(); resolve(false) })
    s.once('error', () => { s.destroy(); resolve(true) })
  })
}

test('host-run sign-in against a real authorization server: authRequired → authorize → ready; the call carries a JWT for the resource; no token appears', { skip: !SERVICE && 'run by npm run test:windows, which starts the OAuth service' }, async (t) => {
  const world = await service('POST', '/world')
  const { host, actions, logs } = newHost(t)
  const id = await host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  const state = await waitState(host, id, 'authRequired')
  assert.equal(state.reason, 'required')
  assert.deepEqual(state.resource.authorization_servers, [world.issuer])

  const opened = []
  const url = new Promise((resolve) => host.once('authorizationUrl', (e) => resolve(e.url)))
  const done = host.authorize(id, { openUrl: (u) => opened.push(u) })
  done.catch(() => {})
  const authorizationUrl = await url
  const params = new URL(authorizationUrl).searchParams
  assert.equal(params.get('code_challenge_method'), 'S256')
  assert.equal(params.get('resource'), world.resource)
  assert.match(params.get('redirect_uri'), /^http:\/\/127\.0\.0\.1:\d+\/callback$/)
  const page = await service('POST', '/browse', { url: authorizationUrl })
  assert.equal(page.status, 200)
  assert.match(page.body, /Signed in/)
  await done
  assert.equal(serverState(host, id).kind, 'ready')
  assert.deepEqual(opened, [authorizationUrl])

  const result = await host.callTool({ serverId: id, name: 'whoami', arguments: { note: 'windows' } })
  const claims = JSON.parse(result.content[0].text)
  assert.equal(claims.aud, world.resource)
  assert.equal(claims.note, 'windows')
  const seen = await service('GET', '/seen')
  assert.equal(seen.registrations.length, 1)
  assert.equal(seen.registrations[0].tokenEndpointAuthMethod, 'none')
  assert.deepEqual(seen.codeGrants.map((g) => [g.status, g.resource]), [[200, world.resource]])
  assert.ok(seen.accepted.length > 0 && seen.accepted.every((r) => r.aud === world.resource), JSON.stringify(seen.accepted))
  assert.deepEqual(seen.rejected, [])
  assert.ok(await portClosed(Number(new URL(params.get('redirect_uri')).port)), 'the redirect listener is still open after sign-in')

  assert.ok(seen.secrets.length >= 2, 'the world issued an access and a refresh token')
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  for (const secret of seen.secrets) assert.equal(everything.includes(secret), false, 'a token the server issued appears in actions, logs or state')
})
