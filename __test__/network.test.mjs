// The network edge (issue 13): error texts that say what happened (case 5),
// proxies (case 2), private CAs and the OS trust store (case 3), the address
// rule of OAuth and metadata fetches (case 6). Everything
// runs on 127.0.0.1; a host whose environment matters runs in a child
// process (fixtures/net-host-child.mjs).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { newHost, waitState, freePort, tmpDir, callText } from './helpers/host.mjs'
import { startMcpServer, startForwardProxy, makePki, hostChild, startChallengingServer, startCountingServer } from './fixtures/net-world.mjs'

const CANARY = 'canary-7f3a9c-never-in-errors'

function httpEntry(url, headers) {
  return { type: 'streamable-http', url, ...(headers ? { headers } : {}) }
}

async function failure(t, url, options = {}) {
  const { host } = newHost(t, options)
  const id = await host.addServer({ name: 'net', config: httpEntry(url, { 'X-Api-Key': CANARY }) })
  const s = await waitState(host, id, 'error')
  assert.equal(s.error.errorType, 'connect_failed', JSON.stringify(s))
  assert.ok(!s.error.message.includes(CANARY), s.error.message)
  return s.error.message
}

test('case 5: a closed port says "connection refused" with the origin, never header values', async (t) => {
  const port = await freePort()
  const message = await failure(t, `http://127.0.0.1:${port}/mcp`)
  assert.match(message, new RegExp(`connection refused at http://127\\.0\\.0\\.1:${port}`))
})

test('case 5: a server that resets the connection says "connection reset" or "closed"', async (t) => {
  const server = net.createServer((s) => { s.on('data', () => s.resetAndDestroy()) })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => server.close())
  const message = await failure(t, `http://127.0.0.1:${server.address().port}/mcp`)
  assert.match(message, /connection (reset|closed)/)
})

// ─── case 2: proxies ────────────────────────────────────────────────────────

test('case 2: HTTP_PROXY never captures a loopback server (127.0.0.1 and localhost)', async (t) => {
  const mcp = await startMcpServer()
  const proxy = await startForwardProxy({})
  t.after(() => Promise.all([mcp.close(), proxy.close()]))
  const p = `http://127.0.0.1:${proxy.port}`
  for (const env of [{ HTTP_PROXY: p }, { http_proxy: p, NO_PROXY: 'example.com' }, { ALL_PROXY: p }]) {
    for (const host of ['127.0.0.1', 'localhost']) {
      const r = await hostChild(env, { url: `http://${host}:${mcp.port}/mcp` })
      assert.equal(r.kind, 'ready', `${JSON.stringify(env)} ${host}: ${JSON.stringify(r)}`)
      assert.equal(r.echo, 'through')
    }
  }
  assert.deepEqual(proxy.passed, [])
})

test('case 2: the proxy option wins over the environment and carries remote names', async (t) => {
  const pki = makePki(tmpDir(t, 'ahp-pki-'))
  const mcp = await startMcpServer({ tls: pki.remote })
  const proxy = await startForwardProxy({ 'mcp.example.test': mcp.port })
  const envProxy = await startForwardProxy({})
  t.after(() => Promise.all([mcp.close(), proxy.close(), envProxy.close()]))
  const env = { HTTPS_PROXY: `http://127.0.0.1:${envProxy.port}`, NO_PROXY: '*' }
  const url = 'https://mcp.example.test/mcp'
  const options = { proxy: `http://127.0.0.1:${proxy.port}`, caCertificates: [pki.caPem] }
  const r = await hostChild(env, { options, url })
  assert.equal(r.kind, 'ready', JSON.stringify(r))
  assert.equal(r.echo, 'through')
  assert.ok(proxy.passed.length > 0 && proxy.passed.every((p) => p === 'CONNECT mcp.example.test:443'), JSON.stringify(proxy.passed))
  assert.deepEqual(envProxy.passed, [])
  // {url, noProxy}: a name that noProxy does not list still goes through it.
  const seen = proxy.passed.length
  const proxied = await hostChild({}, { options: { ...options, proxy: { url: `http://127.0.0.1:${proxy.port}`, noProxy: 'other.example.test, example.test:80' } }, url })
  assert.equal(proxied.kind, 'ready', JSON.stringify(proxied))
  assert.ok(proxy.passed.length > seen)
})

test('case 2: an error through a proxy names the proxy origin, never its credentials', async (t) => {
  const proxy = await startForwardProxy({})
  t.after(() => proxy.close())
  const options = { proxy: { url: `http://user:proxy-secret@127.0.0.1:${proxy.port}` } }
  const message = await failure(t, 'https://unknown.example.test/mcp', options)
  assert.match(message, new RegExp(`at https://unknown\\.example\\.test through proxy http://127\\.0\\.0\\.1:${proxy.port}`))
  assert.ok(!message.includes('proxy-secret'), message)
  assert.ok(proxy.passed.length > 0)
})

test('case 2: an invalid proxy option is refused when the host is created', () => {
  assert.throws(() => newHost({ after() {} }, { proxy: 'ftp://x' }), (e) => e.code === 'invalid_argument' && /proxy: not an http\(s\) URL with a host/.test(e.message))
  assert.throws(() => newHost({ after() {} }, { proxy: { url: 'http://p:1', noproxy: 'x' } }), (e) => e.code === 'invalid_argument' && /proxy: a proxy URL string or \{url, noProxy\?\}: unknown field `noproxy`/.test(e.message))
})

// ─── case 3: private CAs ────────────────────────────────────────────────────

test('case 3: private CA — unknown issuer without trust; NODE_EXTRA_CA_CERTS and caCertificates trust it', async (t) => {
  const pki = makePki(tmpDir(t, 'ahp-pki-'))
  const mcp = await startMcpServer({ tls: pki.good })
  t.after(() => mcp.close())
  const url = `https://127.0.0.1:${mcp.port}/mcp`
  const untrusted = await failure(t, url)
  assert.match(untrusted, /unknown issuer/)
  assert.match(untrusted, new RegExp(`at https://127\\.0\\.0\\.1:${mcp.port}`))
  const viaEnv = await hostChild({ NODE_EXTRA_CA_CERTS: pki.caFile }, { url })
  assert.equal(viaEnv.kind, 'ready', JSON.stringify(viaEnv))
  assert.equal(viaEnv.echo, 'through')
  // An unreadable NODE_EXTRA_CA_CERTS is logged (warn) and ignored, as Node does.
  const missing = await hostChild({ NODE_EXTRA_CA_CERTS: `${pki.caFile}.missing` }, { url })
  assert.equal(missing.kind, 'error')
  assert.match(missing.message, /unknown issuer/)
  assert.ok(missing.logs.some((l) => l.startsWith(`ignoring NODE_EXTRA_CA_CERTS ${pki.caFile}.missing`)), JSON.stringify(missing.logs))
  const { host } = newHost(t, { caCertificates: [pki.caPem] })
  const id = await host.addServer({ name: 'tls', config: httpEntry(url) })
  await waitState(host, id, 'ready')
  assert.equal(await callText(host, id, 'echo', { message: 'tls' }), 'tls')
})

test('case 3: a trusted CA still fails a certificate for another name and an expired one', async (t) => {
  const pki = makePki(tmpDir(t, 'ahp-pki-'))
  const wrong = await startMcpServer({ tls: pki.wrongName })
  const expired = await startMcpServer({ tls: pki.expired })
  t.after(() => Promise.all([wrong.close(), expired.close()]))
  const options = { caCertificates: [pki.caPem] }
  assert.match(await failure(t, `https://127.0.0.1:${wrong.port}/mcp`, options), /name mismatch/)
  assert.match(await failure(t, `https://127.0.0.1:${expired.port}/mcp`, options), /expired/)
})

test('case 3: caCertificates that hold no PEM certificate are refused', () => {
  assert.throws(() => newHost({ after() {} }, { caCertificates: ['not a certificate'] }), (e) => e.code === 'invalid_argument' && /caCertificates\[0\]/.test(e.message))
})

test('case 3: a PEM block that is no X.509 certificate is refused, naming the entry', (t) => {
  // Red team of issue 28, F2: it was accepted, then every HTTP server of the host failed `internal`.
  const framed = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'
  const pki = makePki(tmpDir(t, 'ahp-pki-'))
  assert.throws(() => newHost({ after() {} }, { caCertificates: [pki.caPem, framed] }),
    (e) => e.code === 'invalid_argument' && /caCertificates\[1\]: block 1 of 1 is not a valid X\.509 certificate \(BadEncoding\)/.test(e.message))
})

// ─── case 6: OAuth and metadata fetches stay off internal addresses ─────────

test('case 6: loopback metadata named by a remote server is never fetched; a loopback server may use it', async (t) => {
  const pki = makePki(tmpDir(t, 'ahp-pki-'))
  const internal = await startCountingServer()
  const prm = `http://127.0.0.1:${internal.port}/prm`
  const remote = await startChallengingServer({ tls: pki.remote, resourceMetadata: prm })
  // The remote-looking name is reached through the proxy (no DNS).
  const proxy = await startForwardProxy({ 'mcp.example.test': remote.port })
  const local = await startChallengingServer({ resourceMetadata: prm })
  t.after(() => Promise.all([internal.close(), remote.close(), proxy.close(), local.close()]))
  const { host } = newHost(t, { proxy: `http://127.0.0.1:${proxy.port}`, caCertificates: [pki.caPem] })
  const id = await host.addServer({ name: 'remote', config: httpEntry('https://mcp.example.test/mcp') })
  const s = await waitState(host, id, 'error')
  assert.equal(s.error.errorType, 'auth_discovery_failed', JSON.stringify(s))
  assert.match(s.error.message, /https:\/\/mcp\.example\.test\/\.well-known\/oauth-protected-resource/)
  assert.equal(internal.requests, 0)
  assert.ok(proxy.passed.length > 0)
  // The same challenge from a server on 127.0.0.1: the metadata is fetched
  // (its `resource` names another server, so discovery still fails).
  const near = await host.addServer({ name: 'local', config: httpEntry(`http://127.0.0.1:${local.port}/mcp`) })
  const n = await waitState(host, near, 'error')
  assert.match(n.error.message, new RegExp(`${prm} \\("resource" https://mcp\\.example\\.test/mcp does not match`))
  assert.ok(internal.requests > 0)
})
