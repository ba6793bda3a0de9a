// Issue 30, red team: a secret variable's value is secret wherever an
// import puts it (args, command, cwd, the URL path), not only in env and
// header values; errors name fields, never values; values are literal
// once resolved; the app's resolver is bounded in time and by dispose.
// Real servers: a stdio server that prints its argv to stderr, an HTTP
// server on 127.0.0.1.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, tmpDir, startHttpFixture, waitState, waitFor, callText, fakeNpx, FIXTURES, NODE, HostError, uniqueMarker } from './helpers/host.mjs'

/** Every file under `dir` that contains `text`. */
function filesContaining(dir, text) {
  const found = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) found.push(...filesContaining(path, text))
    else if (readFileSync(path, 'utf8').includes(text)) found.push(path)
  }
  return found
}

function assertNoCanary(canary, { host, actions, logs, dataDir }, extra = []) {
  const everything = JSON.stringify({ actions, logs, state: host.getState(), extra }, (k, v) => (v instanceof Error ? { code: v.code, message: v.message, data: v.data } : v))
  assert.ok(!everything.includes(canary), `the canary leaked: ${everything.slice(Math.max(0, everything.indexOf(canary) - 200), everything.indexOf(canary) + 50)}`)
  assert.deepEqual(filesContaining(dataDir, canary), [], 'the canary was written under dataDir')
}

const vscode = (servers) => JSON.stringify({
  inputs: [{ type: 'promptString', id: 'tok', description: 'API token', password: true }],
  servers,
})
const secretResolver = (canary) => (v) => (v.id === 'input:tok' ? canary : undefined)

test('a password input put into args is redacted from the stderr of a server that prints its argv', async (t) => {
  const canary = uniqueMarker('canary-argv')
  const h = newHost(t)
  const { host, logs } = h
  const text = vscode({ echo: { command: NODE, args: [join(FIXTURES, 'argv-echo-server.mjs'), '--token=${input:tok}'] } })
  const imported = await host.importConfig({ format: 'vscode', text, resolve: secretResolver(canary) })
  assert.deepEqual(imported.servers[0].secrets, [canary])
  const results = await host.addServers(imported.servers)
  assert.equal(results[0].id, 'echo', String(results[0].error))
  await waitState(host, 'echo', 'ready')
  const line = await waitFor(() => logs.find((l) => l.message.includes('ARGV ')), { what: 'the argv line' })
  assert.match(line.message, /--token=\[redacted\]/)
  await host.remove('echo')
  assertNoCanary(canary, h, [imported.diagnostics, results])
})

test('a secret in the URL path is redacted from the customization uri, the state and the logs', async (t) => {
  const canary = uniqueMarker('canary-path')
  const server = await startHttpFixture(t, 'header-report-server.mjs')
  const h = newHost(t)
  const { host } = h
  const text = vscode({ remote: { type: 'http', url: `${server.url}/\${input:tok}` } })
  const imported = await host.importConfig({ format: 'vscode', text, resolve: secretResolver(canary) })
  const results = await host.addServers(imported.servers)
  assert.equal(results[0].id, 'remote', String(results[0].error))
  await waitState(host, 'remote', 'ready')
  const seen = await (await fetch(`${server.base}/__seen`)).json()
  assert.ok(seen.some((s) => s.url === `/mcp/${canary}`), 'the server got the secret path')
  const entry = host.getState().customizations.find((c) => c.id === 'remote')
  assert.equal(entry.uri, `${server.url}/[redacted]`)
  assertNoCanary(canary, h, [imported.diagnostics, results])
})

test('a secret in the URL path stays out of an authRequired state whose RFC 9728 resource names that path', async (t) => {
  const canary = uniqueMarker('canary-resource')
  const server = await startHttpFixture(t, 'path-resource-server.mjs')
  const h = newHost(t)
  const { host } = h
  const text = vscode({ remote: { type: 'http', url: `${server.url}/\${input:tok}` } })
  const imported = await host.importConfig({ format: 'vscode', text, resolve: secretResolver(canary) })
  const results = await host.addServers(imported.servers)
  assert.equal(results[0].id, 'remote', String(results[0].error))
  const state = await waitState(host, 'remote', 'authRequired')
  assert.equal(state.resource.resource, `${server.url}/[redacted]`)
  const failure = await host.whenReady('remote').catch((e) => e)
  assert.equal(failure.code, 'auth_required')
  assertNoCanary(canary, h, [imported.diagnostics, results, failure])
})

test('a secret value with a ? put into the URL path is hidden in each part the URL reads it as', async (t) => {
  const canary = uniqueMarker('canary-split')
  const server = await startHttpFixture(t, 'header-report-server.mjs')
  const h = newHost(t)
  const { host } = h
  const text = vscode({ remote: { type: 'http', url: `${server.url}/\${input:tok}` } })
  const imported = await host.importConfig({ format: 'vscode', text, resolve: secretResolver(`${canary}?k=${canary}-query`) })
  const results = await host.addServers(imported.servers)
  assert.equal(results[0].id, 'remote', String(results[0].error))
  await waitState(host, 'remote', 'ready')
  assert.equal(host.getState().customizations.find((c) => c.id === 'remote').uri, `${server.url}/[redacted]`)
  assertNoCanary(canary, h, [imported.diagnostics, results])
})

test('errors about a secret command or cwd name the field, never the value', async (t) => {
  const canary = uniqueMarker('canary-cwd')
  const dir = tmpDir(t)
  const h = newHost(t)
  const { host } = h
  const text = vscode({
    cwd: { command: NODE, args: [join(FIXTURES, 'argv-echo-server.mjs')], cwd: join(dir, '${input:tok}') },
    absolute: { command: join(dir, '${input:tok}') },
    relative: { command: 'bin/${input:tok}' },
  })
  const imported = await host.importConfig({ format: 'vscode', text, resolve: secretResolver(canary) })
  assert.deepEqual(imported.servers.map((s) => s.name), ['cwd', 'absolute'])
  const relative = imported.diagnostics.find((d) => d.server === 'relative')
  assert.match(relative.message, /field "command"/)
  const results = await host.addServers(imported.servers)
  const cwd = await waitState(host, 'cwd', 'error')
  assert.equal(cwd.error.errorType, 'spawn_failed')
  assert.match(cwd.error.message, /field "cwd"/)
  const absolute = await waitState(host, 'absolute', 'error')
  assert.equal(absolute.error.errorType, 'command_not_found')
  const failures = await Promise.allSettled([host.whenReady('cwd'), host.whenReady('absolute')])
  assertNoCanary(canary, h, [imported.diagnostics, results, failures.map((f) => f.reason)])
})

test('values are literal: ${…} in a Claude Desktop entry or in a resolved value reaches the server verbatim', async (t) => {
  const { host } = newHost(t)
  const report = join(FIXTURES, 'launch-report-server.mjs')
  const desktop = JSON.stringify({ mcpServers: { literal: { command: NODE, args: [report, '${X}', '${PLUGIN_DATA}'] } } })
  const one = await host.importConfig({ format: 'claude-desktop', text: desktop })
  assert.deepEqual(one.diagnostics.map((d) => [d.severity, d.field]), [['warning', 'args[1]'], ['warning', 'args[2]']])
  const text = JSON.stringify({ mcpServers: { resolved: { command: NODE, args: [report, '${V}'] } } })
  const two = await host.importConfig({ format: 'claude-code', text, resolve: () => '${PLUGIN_DATA}/${HOME}' })
  const results = await host.addServers([...one.servers, ...two.servers])
  assert.deepEqual(results.map((r) => r.id), ['literal', 'resolved'], String(results.map((r) => r.error)))
  for (const [id, argv] of [['literal', ['${X}', '${PLUGIN_DATA}']], ['resolved', ['${PLUGIN_DATA}/${HOME}']]]) {
    await waitState(host, id, 'ready')
    assert.deepEqual(JSON.parse(await callText(host, id, 'launch')).argv, argv)
  }
})

test('the resolver is bounded: no answer within importResolveTimeoutMs costs that variable; dispose settles an import at once', async (t) => {
  const { host } = newHost(t, { limits: { importResolveTimeoutMs: 200 } })
  const text = JSON.stringify({ mcpServers: { a: { command: 'node', args: ['${SLOW}'] }, b: { command: 'node', args: ['${FAST}'] } } })
  const started = Date.now()
  const imported = await host.importConfig({ format: 'claude-code', text, resolve: (v) => (v.name === 'SLOW' ? new Promise(() => {}) : 'fast') })
  assert.ok(Date.now() - started < 5_000)
  assert.deepEqual(imported.servers.map((s) => s.name), ['b'])
  const [d] = imported.diagnostics
  assert.equal(d.server, 'a')
  assert.match(d.message, /did not answer within 200 ms \(limits\.importResolveTimeoutMs, for all the variables of one import\) for \$\{env:SLOW\}/)

  const other = newHost(t).host
  const pending = other.importConfig({ format: 'claude-code', text, resolve: () => new Promise(() => {}) })
  await new Promise((r) => setTimeout(r, 50))
  const rejected = assert.rejects(pending, (e) => e instanceof HostError && e.code === 'disposed')
  const disposedAt = Date.now()
  await other.dispose()
  await rejected
  assert.ok(Date.now() - disposedAt < 2_000)
})

test('a registry isSecret input put into an argument is redacted from the stderr of a server that prints it', { skip: process.platform === 'win32' }, async (t) => {
  fakeNpx(t)
  const canary = uniqueMarker('canary-registry')
  const serverJson = {
    name: 'io.example/argv-echo',
    version: '1.0.0',
    packages: [{
      registryType: 'npm',
      identifier: join(FIXTURES, 'argv-echo-server.mjs'),
      transport: { type: 'stdio' },
      packageArguments: [{ type: 'named', name: '--key', isRequired: true, isSecret: true }],
    }],
  }
  const h = newHost(t)
  const { host, logs } = h
  const plain = await host.importConfig({ format: 'registry', text: JSON.stringify(serverJson) })
  assert.deepEqual(plain.servers[0].config.args, ['-y', join(FIXTURES, 'argv-echo-server.mjs'), '--key', '${input:key}'])
  const imported = await host.importConfig({ format: 'registry', text: JSON.stringify(serverJson), resolve: (v) => (v.secret ? canary : undefined) })
  assert.deepEqual(imported.servers[0].secrets, [canary])
  const [added] = await host.addServers(imported.servers)
  await waitState(host, added.id, 'ready')
  const line = await waitFor(() => logs.find((l) => l.message.includes('ARGV ')), { what: 'the argv line' })
  assert.match(line.message, /--key \[redacted\]/)
  assertNoCanary(canary, h, [imported.diagnostics])
})
