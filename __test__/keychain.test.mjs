// Host option `credentials: 'os'` (src/auth/keychain.rs) against a real
// Secret Service: GNOME Keyring in a D-Bus session of its own
// (helpers/secret-service.mjs), a real sign-in against the OAuth world's
// authorization server (oidc-provider on 127.0.0.1, fixtures/oauth-world.mjs),
// each host in a child process (fixtures/oauth/host-child.mjs) whose stdout
// and stderr are kept. The tokens land in the keyring under service
// `ahp-mcp-host` and the store's key, `secret-tool` finds them, a host of the
// next login session connects with them without a browser, and no token
// appears in actions, logs, errors, state snapshots, the host processes'
// output or any file (the keyring file on disk is encrypted). A Secret
// Service that cannot be reached, or a keyring that stays locked, is a
// `credential_store_failed` error naming it: never memory.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { waitFor, tmpDir, findCustomization, freePort } from './helpers/host.mjs'
import { startOAuthWorld, signIn } from './fixtures/oauth-world.mjs'
import { RemoteHost } from './fixtures/oauth/remote-host.mjs'
import { secretServiceSkip, startSecretService, busConfigWithoutServices, loginEnv } from './helpers/secret-service.mjs'

const skip = secretServiceSkip()
/** Short access-token lifetime: one refresh rotates the refresh token in the keychain. */
const SHORT_TTL = 6

/** Every file under `dir` whose bytes contain `text`. */
function filesContaining(dir, text) {
  const found = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const stat = statSync(path, { throwIfNoEntry: false })
    if (stat?.isDirectory()) found.push(...filesContaining(path, text))
    else if (stat?.isFile() && readFileSync(path).includes(text)) found.push(path)
  }
  return found
}

/** A host process on `env` (a login session) with everything it shows recorded in `seen`. */
function remoteHost(t, env, seen) {
  const host = new RemoteHost(env)
  t.after(() => host.close())
  host.on('action', (a) => seen.actions.push(a))
  host.on('log', (l) => seen.logs.push(l))
  host.on('authorizationUrl', (e) => seen.urls.push(e))
  const state = async (id) => {
    const snapshot = await host.getState()
    seen.snapshots.push(snapshot)
    return findCustomization(snapshot, id)?.state
  }
  const waitRemote = (id, kind) => waitFor(async () => {
    const s = await state(id)
    return s?.kind === kind ? s : undefined
  }, { timeout: 30_000, interval: 50, what: `server to be ${kind}` })
  return { host, waitRemote }
}

const newSeen = () => ({ actions: [], logs: [], urls: [], errors: [], snapshots: [], results: [] })

async function oauthWorld(t, options) {
  const world = await startOAuthWorld(options)
  t.after(() => world.close())
  return world
}

test('credentials: "os": a real sign-in keeps the tokens in the Secret Service under the store key; the next login session connects with them, no browser; no token appears anywhere else', { skip }, async (t) => {
  const world = await oauthWorld(t, { accessTokenTTL: SHORT_TTL })
  const home = tmpDir(t, 'ahp-keychain-home-')
  const key = `ahp-mcp-host/oauth/v1 ${world.issuer} ${world.resource}`
  const seen = newSeen()
  const hosts = []

  // Session 1: sign in, call, refresh (the rotated tokens are saved again).
  const first = await startSecretService(t, { home })
  const one = remoteHost(t, first.env, seen)
  hosts.push(one.host)
  const dataDir1 = tmpDir(t, 'ahp-keychain-data-')
  await one.host.start({ dataDir: dataDir1, credentials: 'os' })
  const id = await one.host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  await one.waitRemote(id, 'authRequired')
  await signIn(one.host, id)
  await one.waitRemote(id, 'ready')
  seen.results.push(await one.host.callTool({ serverId: id, name: 'whoami', arguments: { note: 'signed in' } }))
  const { exp } = world.rs.accepted.at(-1)
  await waitFor(() => Date.now() / 1000 > exp + 0.5, { timeout: (SHORT_TTL + 10) * 1000, interval: 100, what: 'the access token to expire' })
  seen.results.push(await one.host.callTool({ serverId: id, name: 'whoami', arguments: { note: 'refreshed' } }))
  assert.ok(world.refreshGrants().some((r) => r.status === 200), 'no refresh')

  // The keyring holds one item for the key: the store's JSON with the newest tokens.
  const found = first.secretTool(['search', '--all', 'service', 'ahp-mcp-host'])
  assert.equal(found.status, 0, found.stderr)
  assert.match(found.stderr + found.stdout, new RegExp(`attribute\\.username = ${key.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`))
  const stored = first.secretTool(['lookup', 'service', 'ahp-mcp-host', 'username', key])
  assert.equal(stored.status, 0, stored.stderr)
  const credentials = JSON.parse(stored.stdout)
  assert.equal(credentials.issuer, world.issuer)
  assert.equal(credentials.token_response.access_token, world.issued.accessTokens.at(-1))
  assert.equal(credentials.token_response.refresh_token, world.issued.refreshTokens.at(-1))
  await one.host.close()
  await first.close()

  // Session 2, the next login: a new bus and keyring daemon, the keyring file on disk.
  const codeGrants = world.codeGrants().length
  const second = await startSecretService(t, { home })
  const two = remoteHost(t, second.env, seen)
  hosts.push(two.host)
  const dataDir2 = tmpDir(t, 'ahp-keychain-data-')
  await two.host.start({ dataDir: dataDir2, credentials: 'os' })
  const again = await two.host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  await two.waitRemote(again, 'ready')
  seen.results.push(await two.host.callTool({ serverId: again, name: 'whoami', arguments: { note: 'next login' } }))
  assert.equal(world.codeGrants().length, codeGrants, 'no second sign-in')
  assert.equal(seen.urls.length, 1, 'one authorization URL in all')
  await two.host.close()
  await second.close()

  // The canary: no token anywhere but the (encrypted) keyring.
  const secrets = [
    ...world.issued.accessTokens.map((s, i) => [`access token #${i + 1}`, s]),
    ...world.issued.refreshTokens.map((s, i) => [`refresh token #${i + 1}`, s]),
  ]
  assert.ok(world.issued.accessTokens.length >= 2 && world.issued.refreshTokens.length >= 2, 'the AS issued fewer tokens than expected')
  const places = {
    actions: JSON.stringify(seen.actions),
    logs: JSON.stringify(seen.logs),
    authorizationUrls: JSON.stringify(seen.urls),
    stateSnapshots: JSON.stringify(seen.snapshots),
    toolResults: JSON.stringify(seen.results),
    ...Object.fromEntries(hosts.flatMap((h, i) => [[`host ${i + 1} stdout`, h.stdout], [`host ${i + 1} stderr`, h.stderr]])),
  }
  for (const [what, value] of secrets) {
    for (const [where, text] of Object.entries(places)) assert.equal(text.includes(value), false, `the ${what} appears in ${where}`)
    for (const dir of [dataDir1, dataDir2, home]) assert.deepEqual(filesContaining(dir, value), [], `the ${what} is in a file`)
  }
  assert.ok(readdirSync(join(home, '.local', 'share', 'keyrings')).includes('login.keyring'), 'the keyring is on disk')
  assert.ok(seen.actions.length > 3 && seen.snapshots.length > 3 && seen.results.length === 3)
})

/** Adds the world's server to a host on `env` with `credentials: 'os'`; resolves what the host shows. */
async function unusableStore(t, env, world) {
  const seen = newSeen()
  const { host, waitRemote } = remoteHost(t, env, seen)
  // Making the host never touches the keychain.
  await host.start({ dataDir: tmpDir(t, 'ahp-keychain-data-'), credentials: 'os', oauthRedirectPort: await freePort() })
  const id = await host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  return { host, id, seen, waitRemote }
}

test('credentials: "os" without a reachable Secret Service: the server shows credential_store_failed naming it, authorize() rejects before any URL; nothing falls back to memory', { skip }, async (t) => {
  const world = await oauthWorld(t)
  const home = tmpDir(t, 'ahp-keychain-home-')
  const noBus = { ...loginEnv(home), DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home, 'no-bus-here')}` }
  const busOnly = await startSecretService(t, { home: tmpDir(t, 'ahp-keychain-home-'), config: busConfigWithoutServices(tmpDir(t, 'ahp-bus-')), withKeyring: false })
  for (const [what, env, cause] of [
    ['no session bus', noBus, /no-bus-here|No such file|connect/i],
    ['a session bus without a Secret Service', busOnly.env, /org\.freedesktop\.secrets/],
  ]) {
    const { host, id, seen, waitRemote } = await unusableStore(t, env, world)
    const state = await waitRemote(id, 'error')
    assert.equal(state.error.errorType, 'credential_store_failed', `${what}: ${JSON.stringify(state)}`)
    assert.match(state.error.message, /^credential store: OS keychain \(Secret Service\) is not reachable: /, what)
    assert.match(state.error.message, cause, what)
    await assert.rejects(host.authorize(id), (err) => {
      assert.equal(err.code, 'credential_store_failed', `${what}: ${err.message}`)
      assert.match(err.message, /OS keychain \(Secret Service\) is not reachable/)
      return true
    })
    assert.deepEqual(seen.urls, [], `${what}: an authorization URL was handed out`)
    await host.close()
  }
  assert.equal(world.codeGrants().length, 0)
})

test('credentials: "os" with a keyring that stays locked (no unlock, no prompt can show): reading a stored entry fails credential_store_failed, access refused', { skip }, async (t) => {
  const world = await oauthWorld(t)
  const home = tmpDir(t, 'ahp-keychain-home-')
  const key = `ahp-mcp-host/oauth/v1 ${world.issuer} ${world.resource}`
  // An earlier login left an entry for the key in the login keyring.
  const earlier = await startSecretService(t, { home })
  const put = earlier.secretTool(['store', '--label=earlier', 'service', 'ahp-mcp-host', 'username', key], '{"client_id":"earlier"}')
  assert.equal(put.status, 0, put.stderr)
  await earlier.close()

  const lockedSession = await startSecretService(t, { home, locked: true })
  const { host, id, waitRemote } = await unusableStore(t, lockedSession.env, world)
  const state = await waitRemote(id, 'error')
  assert.equal(state.error.errorType, 'credential_store_failed', JSON.stringify(state))
  assert.match(state.error.message, /^credential store: OS keychain \(Secret Service\): reading failed: access refused/)
  await host.close()
})
