'use strict'
// The app's credential store (host option `credentials`, index.d.ts
// `CredentialStore`): checked when the host is made, then called by the
// native side through one callback with `{op, key, value?}` JSON.
//
// `'os'` is the OS keychain, kept natively (src/auth/keychain.rs); no
// callback. Accepted store shapes: `{get, set, delete}` and VS Code's `SecretStorage`
// (`{get, store, delete}`; its `keys` and `onDidChange` are not used).
// Each method may return a Promise, any thenable (VS Code's `Thenable`) or
// a plain value; a method that throws or rejects fails that store
// operation, and the OAuth step that needed it fails with
// `credential store: <its message>` (src/auth/store.rs).

/**
 * The credential callback of host option `credentials`, or `undefined`
 * when there is none (`undefined` or `null`: tokens live in memory only;
 * `'os'`: the OS keychain, kept natively, see {@link isOsKeychain}).
 * A value that is not a store throws `fail(message)`, the message naming
 * the field: `options.credentials: …`, `options.credentials.get: …`,
 * `options.credentials.set: …` (neither `set` nor `store`),
 * `options.credentials.delete: …`.
 */
function credentialCallback(credentials, fail) {
  if (credentials === undefined || credentials === null || isOsKeychain(credentials)) return undefined
  if (typeof credentials !== 'object' && typeof credentials !== 'function') {
    // Never the value itself: a string given here may be a token.
    throw fail(`options.credentials: must be 'os' (the OS keychain) or a credential store ({get, set, delete} or VS Code SecretStorage {get, store, delete}), got ${typeof credentials}`)
  }
  const missing = (name) => typeof credentials[name] !== 'function'
  if (missing('get')) throw fail('options.credentials.get: must be a function (key) => string | undefined (or a Promise / Thenable of it)')
  if (missing('set') && missing('store')) {
    throw fail('options.credentials.set: must be a function (key, value) => void (or a Promise / Thenable); VS Code SecretStorage\'s options.credentials.store is accepted instead')
  }
  if (missing('delete')) throw fail('options.credentials.delete: must be a function (key) => void (or a Promise / Thenable)')
  // `set` when there is one, else SecretStorage's `store`; looked up on each
  // call and called as a method (the store's own `this`).
  const setter = missing('set') ? 'store' : 'set'
  return async (json) => {
    const { op, key, value } = JSON.parse(json)
    if (op === 'get') return JSON.stringify({ value: (await credentials.get(key)) ?? null })
    if (op === 'set') await credentials[setter](key, value)
    else await credentials.delete(key)
    return '{}'
  }
}

/**
 * Whether host option `credentials` is `'os'`: the OS keychain (Secret
 * Service, macOS Keychain, Windows Credential Manager), kept in Rust
 * (src/auth/keychain.rs); the option then goes to the native side as is.
 */
function isOsKeychain(credentials) {
  return credentials === 'os'
}

module.exports = { credentialCallback, isOsKeychain }
