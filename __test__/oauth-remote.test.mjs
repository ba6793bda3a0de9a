// OAuth for remote and headless hosts (issue 31 item 5), end to end against
// the real authorization server of fixtures/oauth-world.mjs (oidc-provider on
// 127.0.0.1, its device flow enabled where needed):
//
// - a callback URL the app hands back (`completeAuthorization`): pasted
//   after a loopback sign-in whose browser could not reach the listener,
//   or received by the app's own redirect URI (`authorize({redirectUri})`:
//   a private-use scheme with dynamic registration, a claimed https URL of
//   a pre-registered client), with the state / iss / error / not-pending
//   errors and their stable codes;
// - the RFC 8628 device authorization grant (`flow: 'deviceCode' | 'auto'`):
//   the user code in the `authorizationUrl` event, polling that honours
//   `interval` and `slow_down`, refusal (`access_denied`) and expiry;
// - per-server overrides (`oauth.scopes`, `authServerMetadataUrl`,
//   `callbackPort`, `resource`);
// - a canary: tokens, authorization codes and device codes of both never
//   appear in actions, logs, errors, state, files or the host process's
//   output, and user codes only in the `authorizationUrl` event.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { newHost, serverState, waitFor, freePort, tmpDir } from './helpers/host.mjs'
import { browse, redirectPort, startAuthorize, signIn } from './fixtures/oauth-world.mjs'
import { approveDevice } from './fixtures/oauth/device.mjs'
import { RemoteHost, collect } from './fixtures/oauth/remote-host.mjs'
import { oauthWorld, addProtected, portClosed } from './fixtures/oauth/harness.mjs'

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
/** A private-use redirect URI (RFC 8252 §7.1) an app would register. */
const APP_REDIRECT = 'com.example.ahp-test:/oauth/callback'

async function whoami(host, id, note) {
  const result = await host.callTool({ serverId: id, name: 'whoami', arguments: note ? { note } : {} })
  assert.equal(result.isError, undefined, JSON.stringify(result))
  return JSON.parse(result.content[0].text)
}

/** Rejects with `code`, returning the error. */
async function rejects(promise, code) {
  let caught
  await assert.rejects(promise, (err) => {
    caught = err
    assert.equal(err.code, code, `${err.code}: ${err.message}`)
    return true
  })
  return caught
}

/** Starts a device sign-in and waits for its `authorizationUrl` event. */
async function startDevice(host, id, options = {}) {
  const event = new Promise((resolve) => {
    const on = (e) => { if (e.serverId === id) { host.off('authorizationUrl', on); resolve(e) } }
    host.on('authorizationUrl', on)
  })
  const done = host.authorize(id, { flow: 'deviceCode', ...options })
  done.catch(() => {})
  return { event: await Promise.race([event, done.then(() => { throw new Error('authorize resolved before any authorizationUrl') })]), done }
}

test('a pasted callback URL finishes a loopback sign-in whose browser could not reach the listener', async (t) => {
  const world = await oauthWorld(t)
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  await rejects(host.completeAuthorization(id, `http://127.0.0.1:9/callback?code=x&state=y`), 'not_found')

  const { url, done } = await startAuthorize(host, id)
  // The browser runs on another machine: the redirect to 127.0.0.1 never reaches the host.
  const { callbackUrl } = await browse(url, { fetchCallback: false })
  assert.equal(new URL(callbackUrl).origin, new URL(new URL(url).searchParams.get('redirect_uri')).origin)
  assert.deepEqual(world.codeGrants(), [])
  await host.completeAuthorization(id, callbackUrl)
  await done
  assert.equal(serverState(host, id).kind, 'ready')
  assert.deepEqual(world.codeGrants().map((r) => r.status), [200])
  assert.equal((await whoami(host, id, 'pasted')).note, 'pasted')
  assert.ok(await portClosed(redirectPort(url)), 'the loopback listener is still open')
  // The sign-in took its one callback: the same URL again is for no pending sign-in.
  await rejects(host.completeAuthorization(id, callbackUrl), 'not_found')
})

test('an app-chosen private-use redirect URI: registered and sent instead of the loopback one; the app hands the callback back', async (t) => {
  const world = await oauthWorld(t)
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  const { url, done } = await startAuthorize(host, id, { redirectUri: APP_REDIRECT })
  assert.equal(new URL(url).searchParams.get('redirect_uri'), APP_REDIRECT)
  assert.deepEqual(world.as.registrations.map((r) => r.redirectUris), [[APP_REDIRECT]])
  const { callbackUrl } = await browse(url, { fetchCallback: false })
  assert.ok(callbackUrl.startsWith(`${APP_REDIRECT}?`), callbackUrl)
  // Not a redirect to this URI: refused, and the sign-in goes on.
  const other = callbackUrl.replace('/oauth/callback', '/elsewhere')
  const refused = await rejects(host.completeAuthorization(id, other), 'invalid_argument')
  assert.equal(refused.message.includes(new URL(callbackUrl).searchParams.get('code')), false, 'the code is in the error')
  await host.completeAuthorization(id, callbackUrl)
  await done
  assert.equal((await whoami(host, id)).aud, world.resource)
  assert.deepEqual(world.codeGrants().map((r) => [r.status, r.clientId]), [[200, world.as.registrations[0].clientId]])
})

test('an app-chosen https redirect URI of a pre-registered client', async (t) => {
  const redirectUri = 'https://app.example.test/oauth/redirect'
  const world = await oauthWorld(t, {
    staticClients: [{
      client_id: 'remote-app',
      application_type: 'native',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }],
  })
  const { host } = newHost(t)
  const { id } = await addProtected(host, world, { oauth: { clientId: 'remote-app' } })
  const { url, done } = await startAuthorize(host, id, { redirectUri })
  assert.equal(new URL(url).searchParams.get('client_id'), 'remote-app')
  assert.equal(new URL(url).searchParams.get('redirect_uri'), redirectUri)
  assert.equal(world.as.registrations.length, 0)
  const { callbackUrl } = await browse(url, { fetchCallback: false })
  await host.completeAuthorization(id, callbackUrl)
  await done
  assert.equal((await whoami(host, id)).clientId, 'remote-app')
})

test('a pasted callback with a wrong state or iss is auth_failed, an error callback auth_denied; no code is redeemed', async (t) => {
  const world = await oauthWorld(t)
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  const cases = [
    ['state', (u) => u.searchParams.set('state', `forged-${randomBytes(6).toString('hex')}`), 'auth_failed'],
    ['iss', (u) => u.searchParams.set('iss', 'https://evil.example.test'), 'auth_failed'],
  ]
  for (const [what, tamper, code] of cases) {
    const { url, done } = await startAuthorize(host, id, { redirectUri: APP_REDIRECT })
    const { callbackUrl } = await browse(url, { fetchCallback: false, rewriteCallback: tamper })
    assert.ok(new URL(callbackUrl).searchParams.get('code'), `${what}: the AS issued no code`)
    const err = await rejects(host.completeAuthorization(id, callbackUrl), code)
    assert.equal(err.message.includes(new URL(callbackUrl).searchParams.get('code')), false, `${what}: the code is in the error`)
    await rejects(done, code)
    assert.equal(serverState(host, id).kind, 'authRequired', what)
    assert.ok(serverState(host, id).description, `${what}: no description of the failure`)
  }
  world.deny = true
  const { url, done } = await startAuthorize(host, id, { redirectUri: APP_REDIRECT })
  const { callbackUrl } = await browse(url, { fetchCallback: false })
  assert.equal(new URL(callbackUrl).searchParams.get('error'), 'access_denied')
  const denied = await rejects(host.completeAuthorization(id, callbackUrl), 'auth_denied')
  assert.match(denied.message, /access_denied/)
  await rejects(done, 'auth_denied')
  assert.deepEqual(world.codeGrants(), [], 'a code was redeemed')
  // A callback for no pending sign-in, and input that is no callback URL.
  await rejects(host.completeAuthorization(id, callbackUrl), 'not_found')
  await rejects(host.completeAuthorization('no-such-server', callbackUrl), 'not_found')
  await rejects(host.completeAuthorization(id, ''), 'invalid_argument')
})

test('app redirect URIs the host refuses', async (t) => {
  const world = await oauthWorld(t)
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  for (const [bad, rule] of [
    ['http://app.example.test/cb', /http is allowed only to a loopback host/],
    ['javascript:alert(1)', /the javascript: scheme cannot receive a redirect/],
    ['https://app.example.test/cb#x', /must not have a fragment/],
    ['not a uri', /not an absolute URI/],
  ]) {
    const err = await rejects(host.authorize(id, { redirectUri: bad }), 'invalid_argument')
    assert.match(err.message, /^options\.redirectUri: /)
    assert.match(err.message, rule)
  }
  const err = await rejects(host.authorize(id, { flow: 'carrierPigeon' }), 'invalid_argument')
  assert.match(err.message, /"deviceCode"/)
  assert.deepEqual(world.as.authorizationRequests, [], 'a refused option still sent the user somewhere')
})

test('device grant: the user code reaches the app, polling honours interval and slow_down, the tokens refresh like any', async (t) => {
  const world = await oauthWorld(t, { deviceFlow: true, deviceInterval: 1, accessTokenTTL: 6 })
  const { host, actions, logs } = newHost(t)
  const { id } = await addProtected(host, world)
  world.slowDown = 1
  const opened = []
  const { event, done } = await startDevice(host, id, { openUrl: (url, device) => opened.push({ url, device }) })
  const { deviceCode } = event
  assert.equal(deviceCode.userCode, world.issued.userCodes[0])
  assert.equal(deviceCode.verificationUri, `${world.issuer}/device`)
  assert.equal(deviceCode.verificationUriComplete, `${world.issuer}/device?user_code=${encodeURIComponent(deviceCode.userCode)}`)
  assert.equal(event.url, deviceCode.verificationUriComplete)
  assert.ok(deviceCode.expiresInMs > 0 && deviceCode.expiresInMs <= 300_000, String(deviceCode.expiresInMs))
  assert.deepEqual(opened, [{ url: event.url, device: deviceCode }])
  // Registered for the device grant (no redirect URI); RFC 8707 resource on the device request.
  assert.equal(world.as.registrations.length, 1)
  assert.deepEqual(world.as.registrations[0].grantTypes, [DEVICE_GRANT, 'refresh_token'])
  assert.deepEqual(world.as.deviceAuthorizations.map((d) => [d.clientId, d.resource, d.interval]), [[world.as.registrations[0].clientId, world.resource, 1]])

  await waitFor(() => world.as.tokenRequests.some((r) => r.error === 'slow_down'), { what: 'a slow_down answer' })
  assert.equal((await approveDevice(deviceCode.verificationUri, { userCode: deviceCode.userCode })).done, true)
  await done
  assert.equal(serverState(host, id).kind, 'ready')
  const claims = await whoami(host, id, 'device')
  assert.equal(claims.aud, world.resource)
  assert.equal(claims.clientId, world.as.registrations[0].clientId)

  const polls = world.as.tokenRequests.filter((r) => r.grantType === DEVICE_GRANT)
  assert.deepEqual([polls[0].error, polls.at(-1).status], ['slow_down', 200], JSON.stringify(polls))
  assert.ok(polls.slice(1, -1).every((p) => p.error === 'authorization_pending'), JSON.stringify(polls))
  // RFC 8628 §3.5: the wait after slow_down is the interval + 5 s; after a pending answer, the interval.
  // (Lower bounds the host guarantees by sleeping: a slower machine only makes the gaps longer.)
  assert.ok(polls[1].at - polls[0].at >= 6_000, `polled ${polls[1].at - polls[0].at} ms after slow_down`)
  for (let i = 2; i < polls.length; i++) assert.ok(polls[i].at - polls[i - 1].at >= 1_000, `poll ${i} came ${polls[i].at - polls[i - 1].at} ms after the last`)
  assert.ok(polls.every((p) => p.resource === world.resource), JSON.stringify(polls))

  // The tokens are rmcp's to refresh.
  await waitFor(() => Date.now() / 1000 > world.rs.accepted.at(-1).exp + 0.5, { timeout: 20_000, interval: 100, what: 'the access token to expire' })
  assert.equal((await whoami(host, id, 'refreshed')).note, 'refreshed')
  assert.ok(world.refreshGrants().some((r) => r.status === 200 && r.clientId === claims.clientId), JSON.stringify(world.refreshGrants()))
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  for (const secret of [...world.issued.deviceCodes, ...world.issued.userCodes, ...world.issued.accessTokens, ...world.issued.refreshTokens]) {
    assert.equal(everything.includes(secret), false, 'a code or token leaked')
  }
})

test('device grant: a refusal is auth_denied, an expired code timeout; the server stays authRequired', async (t) => {
  const world = await oauthWorld(t, { deviceFlow: true, deviceInterval: 1, deviceCodeTTL: 3 })
  const { host } = newHost(t)
  const { id } = await addProtected(host, world)
  const refused = await startDevice(host, id)
  const page = await approveDevice(refused.event.url, { deny: true })
  assert.deepEqual([page.done, page.error], [false, 'AbortedError'])
  const denied = await rejects(refused.done, 'auth_denied')
  assert.match(denied.message, /access_denied/)
  assert.equal(serverState(host, id).kind, 'authRequired')
  assert.match(serverState(host, id).description ?? '', /access_denied/)

  const ignored = await startDevice(host, id)
  assert.ok(ignored.event.deviceCode.expiresInMs <= 3_000, String(ignored.event.deviceCode.expiresInMs))
  const expired = await rejects(ignored.done, 'timeout')
  assert.match(expired.message, /expired/)
  assert.equal(serverState(host, id).kind, 'authRequired')
  assert.equal(world.as.tokenRequests.filter((r) => r.status === 200).length, 0)
})

test("flow: 'deviceCode' needs a device endpoint (not_supported); 'auto' picks the device grant when advertised, the browser otherwise", async (t) => {
  const plain = await oauthWorld(t)
  const { host } = newHost(t)
  const { id } = await addProtected(host, plain)
  const err = await rejects(host.authorize(id, { flow: 'deviceCode' }), 'not_supported')
  assert.match(err.message, /device_authorization_endpoint/)
  const browser = await startAuthorize(host, id, { flow: 'auto' })
  assert.equal(new URL(browser.url).pathname, '/auth')
  await browse(browser.url)
  await browser.done

  const device = await oauthWorld(t, { deviceFlow: true, deviceInterval: 1 })
  const { id: other } = await addProtected(host, device, { name: 'device' })
  const started = await startDevice(host, other, { flow: 'auto' })
  assert.ok(started.event.deviceCode.userCode)
  await approveDevice(started.event.url)
  await started.done
  assert.equal(serverState(host, other).kind, 'ready')
})

test('per-server overrides: pinned scopes, the callback port, an authorization server metadata URL and an RFC 8707 resource', async (t) => {
  // The RFC 9728 metadata names an authorization server the host may not reach; the configured one is used instead.
  const world = await oauthWorld(t, { authorizationServers: ['https://10.1.2.3/'], audience: 'https://mcp.example.test/api' })
  const port = await freePort()
  const { host } = newHost(t, { oauthRedirectPort: await freePort() })
  const { id } = await addProtected(host, world, {
    oauth: {
      scopes: ['mcp:read', 'mcp:write'],
      callbackPort: port,
      authServerMetadataUrl: `${world.issuer}/.well-known/openid-configuration`,
      resource: 'https://mcp.example.test/api',
    },
  })
  const { url } = await signIn(host, id)
  const params = new URL(url).searchParams
  assert.equal(`${new URL(url).origin}${new URL(url).pathname}`, `${world.issuer}/auth`)
  assert.equal(redirectPort(url), port)
  assert.deepEqual(params.get('scope').split(' ').filter((s) => s.startsWith('mcp:')), ['mcp:read', 'mcp:write'])
  assert.equal(params.get('resource'), 'https://mcp.example.test/api')
  assert.deepEqual(world.codeGrants().map((r) => [r.status, r.resource]), [[200, 'https://mcp.example.test/api']])
  const claims = await whoami(host, id)
  assert.equal(claims.aud, 'https://mcp.example.test/api')
  assert.deepEqual(claims.scope.split(' ').filter((s) => s.startsWith('mcp:')).sort(), ['mcp:read', 'mcp:write'])
})

test('imported OAuth settings (Claude Code oauth.callbackPort / scopes / authServerMetadataUrl, Codex scopes / oauth_resource / oauth.callback_port) reach the sign-in', async (t) => {
  // Claude Code's server: its metadata names an unreachable authorization server, the import names the real one.
  const unreachable = await oauthWorld(t, { authorizationServers: ['https://10.1.2.3/'] })
  // Codex's: its authorization server knows it by another resource indicator.
  const renamed = await oauthWorld(t, { audience: 'https://mcp.example.test/api' })
  const [claudePort, codexPort] = [await freePort(), await freePort()]
  const metadataUrl = `${unreachable.issuer}/.well-known/openid-configuration`
  const { host } = newHost(t)
  const claude = await host.importConfig({
    format: 'claude-code',
    text: JSON.stringify({ mcpServers: { claude: { type: 'http', url: unreachable.resource, oauth: { callbackPort: claudePort, scopes: 'mcp:read mcp:write', authServerMetadataUrl: metadataUrl } } } }),
  })
  assert.deepEqual(claude.servers[0].oauth, { scopes: ['mcp:read', 'mcp:write'], authServerMetadataUrl: metadataUrl, callbackPort: claudePort })
  const codex = await host.importConfig({
    format: 'codex',
    text: `[mcp_servers.codex]\nurl = "${renamed.resource}"\nscopes = ["mcp:read"]\noauth_resource = "https://mcp.example.test/api"\n[mcp_servers.codex.oauth]\ncallback_port = ${codexPort}\n`,
  })
  assert.deepEqual(codex.servers[0].oauth, { scopes: ['mcp:read'], resource: 'https://mcp.example.test/api', callbackPort: codexPort })
  const added = await host.addServers([...claude.servers, ...codex.servers])
  assert.deepEqual(added.map((a) => [a.id, a.error?.code]), [['claude', undefined], ['codex', undefined]])
  for (const id of ['claude', 'codex']) await waitFor(() => serverState(host, id)?.kind === 'authRequired', { what: `${id} authRequired` })

  const first = await signIn(host, 'claude')
  assert.equal(redirectPort(first.url), claudePort)
  assert.equal(new URL(first.url).origin, unreachable.issuer)
  assert.deepEqual(new URL(first.url).searchParams.get('scope').split(' ').filter((s) => s.startsWith('mcp:')), ['mcp:read', 'mcp:write'])
  assert.equal((await whoami(host, 'claude')).aud, unreachable.resource)
  const second = await signIn(host, 'codex')
  assert.equal(redirectPort(second.url), codexPort)
  assert.equal(new URL(second.url).searchParams.get('resource'), 'https://mcp.example.test/api')
  assert.equal((await whoami(host, 'codex')).aud, 'https://mcp.example.test/api')
})

test('per-server overrides are checked when the server is added', async (t) => {
  const { host } = newHost(t)
  const add = (oauth) => host.addServer({ name: `s${randomBytes(3).toString('hex')}`, config: { type: 'streamable-http', url: 'http://127.0.0.1:9/mcp' }, oauth })
  for (const [oauth, field] of [
    [{ clientSecret: 'a-client-secret' }, 'options.oauth.clientSecret'],
    [{ authServerMetadataUrl: 'http://as.example.test/meta' }, 'options.oauth.authServerMetadataUrl'],
    [{ authServerMetadataUrl: 'not a url' }, 'options.oauth.authServerMetadataUrl'],
    [{ resource: 'https://mcp.example.test/#x' }, 'options.oauth.resource'],
    [{ callbackPort: 70000 }, 'options.oauth'],
  ]) {
    const err = await rejects(add(oauth), 'invalid_argument')
    assert.ok(err.message.includes(field), `${field}: ${err.message}`)
    assert.equal(err.message.includes('a-client-secret'), false)
  }
})

/** Every file under `dir`, as text. */
function filesText(dir) {
  let text = ''
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    text += statSync(path).isDirectory() ? filesText(path) : readFileSync(path, 'latin1')
  }
  return text
}

test('canary: a pasted callback and a device grant leak no token, code or device code; user codes only reach the authorizationUrl event', async (t) => {
  const world = await oauthWorld(t, { deviceFlow: true, deviceInterval: 1 })
  const host = new RemoteHost()
  t.after(() => host.close())
  const { seen, snapshot, waitRemote, failing, places: collected } = collect(host, () => id)
  // A sign-in started with its event awaited: the URL, or a failure when `authorize` ends without one.
  const started = async (options) => {
    const announced = new Promise((resolve) => host.once('authorizationUrl', resolve))
    const signing = failing(host.authorize(id, options))
    const event = await Promise.race([announced, signing.then(() => undefined)])
    assert.ok(event, `authorize(${JSON.stringify(options)}) ended without an authorizationUrl: ${JSON.stringify(seen.errors.at(-1))}`)
    return { url: event.url, signing }
  }
  const dataDir = tmpDir(t, 'ahp-mcp-host-remote-')
  await host.start({ dataDir })
  const id = await host.addServer({ name: 'remote-canary', config: { type: 'streamable-http', url: world.resource } })
  await waitRemote('authRequired')

  // A pasted callback with a forged state, then a good one.
  // (`failing` takes each call at once: a rejection is collected, never unhandled.)
  let { url, signing } = await started({ redirectUri: APP_REDIRECT })
  let cb = await browse(url, { fetchCallback: false, rewriteCallback: (u) => u.searchParams.set('state', 'forged') })
  await failing(host.completeAuthorization(id, cb.callbackUrl))
  await signing
  ;({ url, signing } = await started({ redirectUri: APP_REDIRECT }))
  cb = await browse(url, { fetchCallback: false })
  await failing(host.completeAuthorization(id, cb.callbackUrl))
  await signing
  await waitRemote('ready')
  seen.results.push(await host.callTool({ serverId: id, name: 'whoami', arguments: { note: 'pasted' } }))

  // A refused device grant, then an approved one.
  ;({ url, signing } = await started({ flow: 'deviceCode' }))
  await approveDevice(url, { deny: true })
  await signing
  ;({ url, signing } = await started({ flow: 'deviceCode' }))
  await approveDevice(url)
  await signing
  await waitRemote('ready')
  seen.results.push(await host.callTool({ serverId: id, name: 'whoami', arguments: { note: 'device' } }))
  await snapshot()
  await host.close()

  assert.equal(world.issued.authorizationCodes.length, 2)
  assert.equal(world.issued.deviceCodes.length, 2)
  assert.ok(world.issued.accessTokens.length >= 2 && world.issued.refreshTokens.length >= 2, 'the AS issued fewer tokens than expected')
  assert.ok(seen.errors.length >= 3 && seen.results.length >= 4, JSON.stringify({ errors: seen.errors.length, results: seen.results.length }))
  const secrets = [
    ...world.issued.accessTokens.map((s, i) => [`access token #${i + 1}`, s]),
    ...world.issued.refreshTokens.map((s, i) => [`refresh token #${i + 1}`, s]),
    ...world.issued.authorizationCodes.map((s, i) => [`authorization code #${i + 1}`, s]),
    ...world.issued.deviceCodes.map((s, i) => [`device code #${i + 1}`, s]),
  ]
  // The host process's stdout carries the events; a user code may be in an authorizationUrl event only.
  const stdoutOtherThanUrls = host.stdout.split('\n').filter((line) => !line.startsWith('{"type":"event","event":"authorizationUrl"')).join('\n')
  const places = { ...collected(), files: filesText(dataDir) }
  for (const [what, value] of secrets) {
    for (const [where, text] of Object.entries(places)) {
      assert.equal(text.includes(value), false, `the ${what} appears in ${where}`)
    }
    assert.equal(JSON.stringify(seen.urls).includes(value), false, `the ${what} appears in an authorizationUrl event`)
  }
  for (const [i, code] of world.issued.userCodes.entries()) {
    assert.ok(JSON.stringify(seen.urls).includes(code), `user code #${i + 1} never reached the app`)
    for (const [where, text] of Object.entries({ ...places, hostStdout: stdoutOtherThanUrls })) {
      assert.equal(text.includes(code), false, `user code #${i + 1} appears in ${where}`)
    }
  }
})
