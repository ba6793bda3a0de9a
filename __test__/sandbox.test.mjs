// The sandbox of stdio servers (issue 32, Linux: Landlock before exec, a
// host-run CONNECT proxy for host allow-lists). Real processes only: a
// probe server (fixtures/sandbox-probe-server.mjs) tries what the sandbox
// allows and refuses, and @modelcontextprotocol/server-filesystem runs
// under it. Every refusal is checked against an unsandboxed twin doing the
// same, which succeeds: without the sandbox these tests fail. Network
// traffic stays on loopback (a TCP echo server of the test's own).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import net from 'node:net'
import { McpHost, newHost, tmpDir, fixtureEntry, writePlugin, callText, findCustomization, rejectsWith, waitFor, stateHistory, ROOT } from './helpers/host.mjs'

const linux = process.platform === 'linux'
const PROBE = fixtureEntry('sandbox-probe-server.mjs')

/** A folder under the home directory with a canary file, removed after the test. */
function homeCanary(t) {
  const dir = mkdtempSync(join(homedir(), '.ahp-sandbox-canary-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const secret = join(dir, 'secret.txt')
  writeFileSync(secret, 'canary-secret')
  const allowed = join(dir, 'allowed')
  mkdirSync(allowed)
  writeFileSync(join(allowed, 'note.txt'), 'allowed-note')
  return { dir, secret, allowed }
}

/** A loopback TCP server echoing each line back, closed after the test. */
async function echoServer(t) {
  const server = net.createServer((s) => s.on('data', (d) => s.write(d)).on('error', () => {}))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => server.close())
  return server.address().port
}

test('a sandboxed server reads and writes only what its profile allows; its grandchild inherits the sandbox', { skip: !linux }, async (t) => {
  const canary = homeCanary(t)
  const writable = tmpDir(t)
  const outside = tmpDir(t)
  const { host, logs } = newHost(t, { sandbox: { filesystem: { read: [canary.allowed], write: [writable] } } })
  await host.addServer({ name: 'boxed', config: PROBE, root: ROOT })
  await host.addServer({ name: 'free', config: PROBE, root: ROOT, sandbox: false })
  await host.whenReady(['boxed', 'free'])

  // The unsandboxed twin reads and writes everything: the refusals below are the sandbox's.
  assert.equal(await callText(host, 'free', 'read', { path: canary.secret }), 'ok canary-secret')
  assert.equal(await callText(host, 'free', 'write', { path: join(outside, 'free.txt') }), 'ok written')
  assert.equal(await callText(host, 'free', 'child', { path: canary.secret }), 'ok ok read')

  assert.equal(await callText(host, 'boxed', 'read', { path: canary.secret }), 'denied EACCES')
  assert.equal(await callText(host, 'boxed', 'read', { path: join(canary.allowed, 'note.txt') }), 'ok allowed-note')
  assert.equal(await callText(host, 'boxed', 'write', { path: join(canary.allowed, 'x.txt') }), 'denied EACCES', 'read-only')
  assert.equal(await callText(host, 'boxed', 'write', { path: join(outside, 'x.txt') }), 'denied EACCES')
  assert.equal(existsSync(join(outside, 'x.txt')), false)
  assert.equal(await callText(host, 'boxed', 'write', { path: join(writable, 'x.txt') }), 'ok written')
  const data = await callText(host, 'boxed', 'env', { name: 'PLUGIN_DATA' })
  assert.equal(await callText(host, 'boxed', 'write', { path: join(data, 'state.txt') }), 'ok written')
  const tmp = await callText(host, 'boxed', 'env', { name: 'TMPDIR' })
  assert.equal(tmp, join(data, '.tmp'))
  assert.equal(await callText(host, 'boxed', 'write', { path: join(tmp, 't.txt') }), 'ok written')
  // A grandchild the server starts is inside the same sandbox.
  assert.equal(await callText(host, 'boxed', 'child', { path: canary.secret }), 'ok denied EACCES')
  assert.equal(await callText(host, 'boxed', 'child', { path: join(canary.allowed, 'note.txt') }), 'ok ok read')

  // Visible: serverInfo, the customization's _meta, a log record.
  const info = host.serverInfo('boxed')
  assert.equal(info.sandbox.mechanism, 'landlock')
  assert.equal(info.sandbox.enforced, 'full', JSON.stringify(info.sandbox))
  assert.ok(info.sandbox.abi >= 4)
  assert.deepEqual(info.sandbox.unenforced, [])
  assert.ok(info.sandbox.filesystem.read.includes(canary.allowed))
  assert.ok(info.sandbox.filesystem.write.includes(writable) && info.sandbox.filesystem.write.includes(data))
  assert.equal(info.sandbox.network, 'none')
  assert.equal(host.serverInfo('free').sandbox, undefined)
  const meta = findCustomization(host.getState(), 'boxed')._meta
  assert.deepEqual(meta['ahp-mcp-host/sandbox'], {
    filesystem: { read: [canary.allowed], write: [writable] }, network: 'none', enforce: 'best-effort',
  })
  assert.equal(meta['ahp-mcp-host/serverInfo'].sandbox.enforced, 'full')
  assert.equal(findCustomization(host.getState(), 'free')._meta?.['ahp-mcp-host/sandbox'], undefined)
  const record = logs.find((l) => l.target === 'host.sandbox' && l.serverId === 'boxed')
  assert.match(record?.message ?? '', /^sandbox landlock \(ABI \d+\), enforced full: read \[/)
})

test('a link the server plants in PLUGIN_DATA (.tmp -> the home folder) opens nothing at its next start', { skip: !linux }, async (t) => {
  const canary = homeCanary(t)
  const { host, logs, actions } = newHost(t, { limits: { restartBackoffMs: 50 } })
  // Its profile reads `${PLUGIN_DATA}/sub`, missing at first.
  await host.addServer({ name: 'boxed', config: PROBE, root: ROOT, sandbox: { filesystem: { read: ['${PLUGIN_DATA}/sub'] } } })
  await host.whenReady(['boxed'])
  const data = await callText(host, 'boxed', 'env', { name: 'PLUGIN_DATA' })
  const tmp = join(data, '.tmp')
  assert.equal(await callText(host, 'boxed', 'link', { target: canary.dir, path: tmp }), 'ok linked')
  assert.equal(await callText(host, 'boxed', 'link', { target: canary.dir, path: join(data, 'sub') }), 'ok linked')
  assert.equal(await callText(host, 'boxed', 'read', { path: join(tmp, 'secret.txt') }), 'denied EACCES')
  // It crashes and is restarted: the new start must not open the link's target.
  const readies = () => stateHistory(actions, 'boxed').filter((s) => s.kind === 'ready').length
  const before = readies()
  await assert.rejects(host.callTool({ serverId: 'boxed', name: 'crash', arguments: { path: join(data, 'absent') } }))
  await waitFor(() => readies() > before, { what: 'restart', describe: () => JSON.stringify(stateHistory(actions, 'boxed')) })
  await host.whenReady(['boxed'])
  assert.equal(await callText(host, 'boxed', 'read', { path: canary.secret }), 'denied EACCES')
  assert.equal(await callText(host, 'boxed', 'read', { path: join(tmp, 'secret.txt') }), 'denied ENOENT')
  assert.equal(await callText(host, 'boxed', 'write', { path: join(canary.dir, 'planted.txt') }), 'denied EACCES')
  assert.equal(existsSync(join(canary.dir, 'planted.txt')), false)
  assert.equal(await callText(host, 'boxed', 'write', { path: join(tmp, 't.txt') }), 'ok written')
  assert.equal(existsSync(join(canary.dir, 't.txt')), false)
  assert.equal(readFileSync(join(canary.dir, 'secret.txt'), 'utf8'), 'canary-secret')
  // The profile's path through the planted `sub` link is left out, reported and logged.
  const sub = join(data, 'sub')
  assert.equal(await callText(host, 'boxed', 'read', { path: join(sub, 'secret.txt') }), 'denied EACCES')
  const info = host.serverInfo('boxed').sandbox
  assert.ok(info.missing.includes(sub) && !info.filesystem.read.includes(sub), JSON.stringify(info))
  assert.ok(info.filesystem.write.includes(tmp), JSON.stringify(info))
  assert.ok(logs.some((l) => l.target === 'host.sandbox' && l.level === 'warn' && l.message.includes(`left out ${sub}`)))
})

test('network: none refuses every TCP connection; an allow-list reaches only its hosts, through the host\'s proxy', { skip: !linux }, async (t) => {
  const port = await echoServer(t)
  const { host, logs } = newHost(t)
  await host.addServer({ name: 'free', config: PROBE, root: ROOT })
  await host.addServer({ name: 'none', config: PROBE, root: ROOT, sandbox: true })
  await host.addServer({ name: 'listed', config: PROBE, root: ROOT, sandbox: { network: { allowHosts: ['localhost'] } } })
  await host.addServer({ name: 'loop', config: PROBE, root: ROOT, sandbox: { network: 'loopback' } })
  await host.whenReady(['free', 'none', 'listed', 'loop'])

  assert.equal(await callText(host, 'free', 'connect', { port }), 'ok connected')
  assert.equal(await callText(host, 'none', 'connect', { port }), 'denied EACCES')
  assert.equal(await callText(host, 'none', 'env', { name: 'HTTPS_PROXY' }), 'undefined')

  // Only the proxy's port is reachable, and the proxy checks the host name.
  assert.equal(await callText(host, 'listed', 'connect', { port }), 'denied EACCES')
  const proxy = host.serverInfo('listed').sandbox.proxy
  assert.match(proxy, /^http:\/\/127\.0\.0\.1:\d+$/)
  assert.equal(await callText(host, 'listed', 'env', { name: 'HTTPS_PROXY' }), proxy)
  assert.equal(await callText(host, 'listed', 'tunnel', { host: 'localhost', port }), 'ok echo ping')
  assert.equal(await callText(host, 'listed', 'tunnel', { host: '127.0.0.1', port }), 'denied HTTP403')
  assert.equal(await callText(host, 'listed', 'tunnel', { host: 'example.com', port: 443 }), 'denied HTTP403')
  assert.deepEqual(host.serverInfo('listed').sandbox.network, { allowHosts: ['localhost'] })
  assert.ok(logs.some((l) => l.target === 'host.sandbox' && l.serverId === 'listed' && l.message.includes('refused CONNECT example.com:443')))

  assert.equal(await callText(host, 'loop', 'tunnel', { host: '127.0.0.1', port }), 'ok echo ping')
  assert.equal(await callText(host, 'loop', 'tunnel', { host: 'example.com', port: 443 }), 'denied HTTP403')
  assert.equal(await callText(host, 'loop', 'connect', { port }), 'denied EACCES')
})

test('server-filesystem works in its allowed directory under the sandbox and is refused outside it', { skip: !linux }, async (t) => {
  const canary = homeCanary(t)
  const work = tmpDir(t)
  writeFileSync(join(work, 'hello.txt'), 'hello from work')
  const { host } = newHost(t)
  // The server itself would serve both folders; the sandbox allows only `work`.
  // Started as users do, with `npx -y`: it finds the package in the root's node_modules (read-only).
  const config = { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', work, canary.dir] }
  await host.addServer({ name: 'fs', config, root: ROOT, sandbox: { filesystem: { write: [work] } } })
  const [ready] = await host.whenReady(['fs'])
  assert.equal(ready.status, 'ready', JSON.stringify(ready))

  assert.equal(await callText(host, 'fs', 'read_text_file', { path: join(work, 'hello.txt') }), 'hello from work')
  await callText(host, 'fs', 'write_file', { path: join(work, 'new.txt'), content: 'made inside' })
  assert.equal(readFileSync(join(work, 'new.txt'), 'utf8'), 'made inside')
  const refused = await host.callTool({ serverId: 'fs', name: 'read_text_file', arguments: { path: canary.secret } })
  assert.equal(refused.isError, true)
  assert.match(refused.content[0].text, /EACCES|permission denied/i)
  assert.doesNotMatch(refused.content[0].text, /canary-secret/)
  const wrote = await host.callTool({ serverId: 'fs', name: 'write_file', arguments: { path: join(canary.dir, 'planted.txt'), content: 'x' } })
  assert.equal(wrote.isError, true)
  assert.equal(existsSync(join(canary.dir, 'planted.txt')), false)
})

test('a server the sandbox breaks fails sandbox_denied, not a generic exit; a plugin override sets the profile', { skip: !linux }, async (t) => {
  const canary = homeCanary(t)
  const { host, actions } = newHost(t)
  const root = tmpDir(t)
  const entry = { ...PROBE, args: [...PROBE.args, '--read-at-start', canary.secret] }
  writePlugin(root, { mcpServers: { broken: entry, fixed: entry } })
  // Both may read the repository (the script and its node_modules); only `fixed` lists the file it reads at start.
  const servers = { broken: { sandbox: { filesystem: { read: [ROOT] } } }, fixed: { sandbox: { filesystem: { read: [ROOT, canary.dir] } } } }
  await host.addPlugin({ root, name: 'p', servers })
  const [broken, fixed] = await host.whenReady(['p/broken', 'p/fixed'])
  assert.equal(fixed.status, 'ready', JSON.stringify(fixed))
  assert.equal(broken.status, 'failed')
  assert.equal(broken.error.code, 'sandbox_denied', broken.error.message)
  assert.match(broken.error.message, /sandbox denied: .*EACCES/s)
  const meta = findCustomization(host.getState(), 'p/broken')._meta
  assert.deepEqual(meta['ahp-mcp-host/sandbox'].filesystem, { read: [ROOT], write: [] })

  // A crash after `ready` that the sandbox caused keeps the code too; an
  // unsandboxed crash of the same kind stays `server_exited`.
  await host.addServer({ name: 'later', config: PROBE, root: ROOT, sandbox: true })
  await host.addServer({ name: 'plain', config: PROBE, root: ROOT })
  await host.whenReady(['later', 'plain'])
  const missing = join(canary.dir, 'absent.txt')
  await assert.rejects(host.callTool({ serverId: 'later', name: 'crash', arguments: { path: canary.secret } }))
  await assert.rejects(host.callTool({ serverId: 'plain', name: 'crash', arguments: { path: missing } }))
  const errorOf = (id) => waitFor(() => stateHistory(actions, id).find((s) => s.kind === 'error'), { what: `${id} error state` })
  assert.equal((await errorOf('later')).error.errorType, 'sandbox_denied')
  assert.equal((await errorOf('plain')).error.errorType, 'server_exited')
})

test('malformed sandbox options are invalid_argument naming the field; siblings keep working', async (t) => {
  assert.throws(() => new McpHost({ sandbox: { filesystem: { read: ['relative/path'] } } }),
    (e) => e.code === 'invalid_argument' && e.message.startsWith('options.sandbox.filesystem.read[0]: '))
  assert.throws(() => new McpHost({ sandbox: 'yes' }), (e) => e.code === 'invalid_argument' && e.message.startsWith('options.sandbox: '))
  const { host } = newHost(t)
  let e = await rejectsWith(() => host.addServer({ name: 'a', config: PROBE, sandbox: { network: 'internet' } }), 'invalid_argument')
  assert.match(e.message, /^options\.sandbox\.network: /)
  e = await rejectsWith(() => host.addServer({ name: 'b', config: PROBE, sandbox: { network: { allowHosts: ['https://x.test'] } } }), 'invalid_argument')
  assert.match(e.message, /^options\.sandbox\.network\.allowHosts\[0\]: /)
  e = await rejectsWith(() => host.addServer({ name: 'c', config: PROBE, sandbox: { enforce: 'always' } }), 'invalid_argument')
  assert.match(e.message, /^options\.sandbox\.enforce: /)
  e = await rejectsWith(() => host.addServer({ name: 'd', config: PROBE, sandbox: { filesystem: { exec: [] } } }), 'invalid_argument')
  assert.match(e.message, /^options\.sandbox\.filesystem\.exec: unknown field/)
  await rejectsWith(() => host.addPlugin({ root: tmpDir(t), servers: { s: { sandbox: { network: 'x' } } } }), 'invalid_argument')
  await host.addServer({ name: 'ok', config: PROBE, root: ROOT, sandbox: { enforce: 'required' } })
  const [ok] = await host.whenReady(['ok'])
  assert.equal(ok.status, linux ? 'ready' : 'failed')
})
