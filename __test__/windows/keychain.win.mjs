// Windows: host option `credentials: 'os'` keeps the tokens of a host-run
// sign-in in the Windows Credential Manager (src/auth/keychain.rs: generic
// credentials through CredWriteW / CredReadW / CredDeleteW, which Wine
// implements in advapi32). The authorization server pads its access tokens,
// so the stored value is longer than one credential takes (2560 bytes) and
// goes into parts. A second host (another window, the next session)
// connects with them without a browser; no token appears in actions, logs,
// state or any file under the hosts' data folders. The OAuth world is the
// service scripts/test-windows.js runs beside the suite
// (fixtures/oauth-service.mjs).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, waitState, UNDER_WINE } from './helpers.mjs'

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

/**
 * The target names of the generic credentials that contain `text`: from
 * `cmdkey /list` on Windows, from Wine's own registry key under Wine (Wine
 * keeps its Credential Manager in `HKCU\Software\Wine\Credential Manager`,
 * one subkey `Generic: <target>` per credential, the blob encrypted).
 */
function credentialTargets(text) {
  const listed = UNDER_WINE
    ? spawnSync('reg', ['query', 'HKCU\\Software\\Wine\\Credential Manager'], { encoding: 'utf8', windowsHide: true })
    : spawnSync('cmdkey', ['/list'], { encoding: 'utf8', windowsHide: true })
  assert.equal(listed.status, 0, `listing the credentials failed: ${listed.error ?? listed.stderr}`)
  return listed.stdout.split(/\r?\n/).filter((l) => l.includes(text))
    .map((l) => l.replace(/^.*?(Generic: |Target: (LegacyGeneric:target=)?)/, '').trim())
}

test('credentials: "os": a sign-in keeps the tokens in the Windows Credential Manager, split past one credential\'s 2560 bytes; a second host connects with them, no browser; no token appears', { skip: !SERVICE && 'run by npm run test:windows, which starts the OAuth service' }, async (t) => {
  // Access tokens over 3000 bytes: the stored JSON cannot fit one credential.
  const world = await service('POST', '/world', { extraClaims: { padding: 'p'.repeat(3000) } })
  const first = newHost(t, { credentials: 'os' })
  const id = await first.host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  await waitState(first.host, id, 'authRequired')
  const url = new Promise((resolve) => first.host.once('authorizationUrl', (e) => resolve(e.url)))
  const done = first.host.authorize(id)
  done.catch(() => {})
  const page = await service('POST', '/browse', { url: await url })
  assert.equal(page.status, 200)
  await done
  await waitState(first.host, id, 'ready')
  const claims = JSON.parse((await first.host.callTool({ serverId: id, name: 'whoami', arguments: { note: 'first' } })).content[0].text)
  assert.equal(claims.note, 'first')

  // The entry under the key names its parts: the value is in two or more.
  const key = `ahp-mcp-host/oauth/v1 ${world.issuer} ${world.resource}`
  const targets = credentialTargets(world.resource)
  t.after(() => {
    for (const target of targets) {
      if (UNDER_WINE) spawnSync('reg', ['delete', `HKCU\\Software\\Wine\\Credential Manager\\Generic: ${target}`, '/f'], { windowsHide: true })
      else spawnSync('cmdkey', [`/delete:${target}`], { windowsHide: true })
    }
  })
  for (const target of [`${key}.ahp-mcp-host`, `${key} #1.ahp-mcp-host`, `${key} #2.ahp-mcp-host`]) {
    assert.ok(targets.includes(target), `no credential ${target} in ${JSON.stringify(targets)}`)
  }

  // A second host: the Credential Manager, not the first host's memory.
  const second = newHost(t, { credentials: 'os' })
  const again = await second.host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  await waitState(second.host, again, 'ready')
  assert.equal(JSON.parse((await second.host.callTool({ serverId: again, name: 'whoami', arguments: { note: 'second' } })).content[0].text).note, 'second')
  const seen = await service('GET', '/seen')
  assert.deepEqual(seen.codeGrants.map((g) => g.status), [200], 'one sign-in in all')

  assert.ok(seen.secrets.length >= 2 && seen.secrets.some((s) => s.length > 3000), 'long tokens were issued')
  for (const h of [first, second]) {
    const everything = JSON.stringify({ actions: h.actions, logs: h.logs, state: h.host.getState() })
    for (const secret of seen.secrets) {
      assert.equal(everything.includes(secret), false, 'a token appears in actions, logs or state')
      assert.deepEqual(filesContaining(h.dataDir, secret), [], 'a token is in a file under dataDir')
    }
  }
})
