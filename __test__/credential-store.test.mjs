// The host option `credentials` (lib/host/credentials.js): VS Code's
// `SecretStorage` shape (`store`, not `set`; `Thenable` results that are no
// Promises; `keys` / `onDidChange` present and unused) is used as is, plain
// values work, and a value that is no store is refused when the host is
// made (HostError `invalid_argument` naming the field), where it used to be
// accepted silently. A real sign-in (fixtures/oauth/mini-world.mjs on
// 127.0.0.1) stores the credentials; a second host connects with them
// without a browser.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, McpHost, HostError, tmpDir, waitState } from './helpers/host.mjs'
import { startMiniWorld } from './fixtures/oauth/mini-world.mjs'
import { signIn } from './fixtures/oauth-world.mjs'

/** A thenable (not a Promise: no catch/finally) settling on a later turn, as VS Code's `Thenable`s may. */
function thenable(compute) {
  return {
    then(onFulfilled, onRejected) {
      setImmediate(() => {
        let value
        try {
          value = compute()
        } catch (err) {
          onRejected?.(err)
          return
        }
        onFulfilled?.(value)
      })
    },
  }
}

/** A `vscode.SecretStorage`-shaped store over `map`, recording the calls. */
function secretStorage(map, calls) {
  return {
    get: (key) => thenable(() => { calls.push(['get', key]); return map.get(key) }),
    store: (key, value) => thenable(() => { calls.push(['store', key]); map.set(key, value) }),
    delete: (key) => thenable(() => { calls.push(['delete', key]); map.delete(key) }),
    keys: () => thenable(() => [...map.keys()]),
    onDidChange: () => ({ dispose() {} }),
  }
}

test('a SecretStorage-shaped store (store, Thenables) keeps the sign-in; a second host connects with it, no browser', async (t) => {
  const world = await startMiniWorld()
  t.after(() => world.close())
  const map = new Map()
  const calls = []
  const secrets = secretStorage(map, calls)
  const { host } = newHost(t, { credentials: secrets })
  const id = await host.addServer({ name: 'protected', config: { type: 'streamable-http', url: world.resource } })
  await waitState(host, id, 'authRequired')
  await signIn(host, id)
  assert.equal((await host.callTool({ serverId: id, name: 'whoami' })).content[0].text, 'token from as1')
  const key = `ahp-mcp-host/oauth/v1 ${world.as.as1.issuer} ${world.resource}`
  assert.deepEqual([...map.keys()], [key])
  assert.ok(calls.some(([op, k]) => op === 'store' && k === key))
  const stored = JSON.parse(map.get(key))
  assert.equal(stored.issuer, world.as.as1.issuer)

  // A new host (another window, the next session) with the same SecretStorage.
  const before = world.as.as1.authorizationRequests.length
  const second = newHost(t, { credentials: secretStorage(map, calls) }).host
  const again = await second.addServer({ name: 'protected', config: { type: 'streamable-http', url: world.resource } })
  await waitState(second, again, 'ready')
  assert.equal((await second.callTool({ serverId: again, name: 'whoami' })).content[0].text, 'token from as1')
  assert.equal(world.as.as1.authorizationRequests.length, before, 'no second sign-in')
  assert.ok(calls.some(([op, k]) => op === 'get' && k === key))
})

test('a store of plain values ({get, set, delete} returning no promise) keeps the sign-in', async (t) => {
  const world = await startMiniWorld()
  t.after(() => world.close())
  const map = new Map()
  const credentials = { get: (key) => map.get(key), set: (key, value) => void map.set(key, value), delete: (key) => void map.delete(key) }
  const { host } = newHost(t, { credentials })
  const id = await host.addServer({ name: 'protected', config: { type: 'streamable-http', url: world.resource } })
  await waitState(host, id, 'authRequired')
  await signIn(host, id)
  assert.equal(map.size, 1)
  const second = newHost(t, { credentials }).host
  const again = await second.addServer({ name: 'protected', config: { type: 'streamable-http', url: world.resource } })
  await waitState(second, again, 'ready')
})

test('a value that is no credential store is refused when the host is made, naming the field', (t) => {
  const dataDir = tmpDir(t)
  const fn = () => {}
  for (const [credentials, field] of [
    [{}, 'options.credentials.get'],
    [42, 'options.credentials'],
    ['secrets', 'options.credentials'],
    [{ get: fn, delete: fn }, 'options.credentials.set'],
    [{ get: fn, set: 'x', delete: fn }, 'options.credentials.set'],
    [{ get: fn, set: fn }, 'options.credentials.delete'],
    [{ get: fn, store: fn }, 'options.credentials.delete'],
    [{ set: fn, delete: fn }, 'options.credentials.get'],
    ['keychain', 'options.credentials'],
    ['OS', 'options.credentials'],
  ]) {
    assert.throws(() => new McpHost({ dataDir, credentials }), (err) => {
      assert.ok(err instanceof HostError, String(err))
      assert.equal(err.code, 'invalid_argument')
      assert.ok(err.message.startsWith(`${field}: `), err.message)
      return true
    }, JSON.stringify(credentials))
  }
  // Never the string itself (it may be a token).
  assert.throws(() => new McpHost({ dataDir, credentials: 'tok-secret-1' }), (err) => /^options\.credentials: must be 'os' \(the OS keychain\) or a credential store .*, got string$/.test(err.message) && !err.message.includes('tok-secret-1'))
  // No store: memory. `'os'`: the OS keychain, not touched until a sign-in
  // needs it (keychain.test.mjs), so the host is made on any machine.
  for (const credentials of [undefined, null, 'os']) new McpHost({ dataDir, credentials }).disposeSync()
})
