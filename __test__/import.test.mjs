// Issue 30: importConfig + addServers. Other hosts' configurations become
// this host's entries; variables are resolved only through the app's
// `resolve` (never this process's environment); the servers then start as
// the source host would start them (real servers: server-everything over
// stdio reports its environment, protected-server.mjs on 127.0.0.1 accepts
// one bearer token). A canary secret never reaches an action, a log, the
// state, an error or a file under dataDir.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, tmpDir, startHttpFixture, waitState, waitFor, fakeNpx, EVERYTHING, FIXTURES, NODE, HostError, uniqueMarker, rejectsWith } from './helpers/host.mjs'

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
  const everything = JSON.stringify({ actions, logs, state: host.getState(), extra })
  assert.ok(!everything.includes(canary), 'the canary leaked into actions, logs, state or errors')
  assert.deepEqual(filesContaining(dataDir, canary), [], 'the canary was written under dataDir')
}

test('a Claude Code .mcp.json: ${VAR} and ${VAR:-default} resolved by the app only; the server gets that env', async (t) => {
  const canary = uniqueMarker('canary-env')
  process.env.AHP_IMPORT_TOKEN = 'from-the-process-env' // never read by the host
  t.after(() => { delete process.env.AHP_IMPORT_TOKEN })
  const text = JSON.stringify({
    mcpServers: {
      everything: {
        command: NODE,
        args: [EVERYTHING, 'stdio'],
        env: { SECRET_THING: '${AHP_IMPORT_TOKEN}', PLAIN: '${AHP_UNSET:-fallback}' },
      },
      broken: { command: 'node', colour: 'blue', args: 'not-an-array' },
    },
  })
  const h = newHost(t)
  const { host } = h
  const plain = await host.importConfig({ format: 'claude-code', text, file: '.mcp.json' })
  assert.deepEqual(plain.servers.map((s) => [s.name, s.resolved]), [['everything', false]])
  // A use's default stays in its placeholder (each use has its own).
  assert.deepEqual(plain.servers[0].config.env, { SECRET_THING: '${env:AHP_IMPORT_TOKEN}', PLAIN: '${env:AHP_UNSET:-fallback}' })
  assert.deepEqual(plain.diagnostics.map((d) => [d.code, d.severity, d.server, d.field, d.file, d.line]), [
    ['invalid_entry', 'warning', 'broken', 'colour', '.mcp.json', 1],
    ['invalid_entry', 'error', 'broken', 'args', '.mcp.json', 1],
  ])
  // Unresolved: addServers refuses it by name, nothing starts.
  const [refused] = await host.addServers(plain.servers)
  assert.ok(refused.error instanceof HostError && refused.error.code === 'invalid_entry', String(refused.error))
  assert.match(refused.error.message, /variables not resolved: \$\{env:AHP_IMPORT_TOKEN\}, \$\{env:AHP_UNSET\}/)
  assert.equal(host.processCount, 0)

  const asked = []
  const imported = await host.importConfig({
    format: 'claude-code', text, file: '.mcp.json',
    resolve: (v) => { asked.push([v.id, v.kind, v.default ?? null]); return v.name === 'AHP_IMPORT_TOKEN' ? canary : undefined },
  })
  assert.deepEqual(asked, [['env:AHP_IMPORT_TOKEN', 'env', null], ['env:AHP_UNSET', 'env', null]])
  const [added] = await host.addServers(imported.servers)
  assert.equal(added.id, 'everything', String(added.error))
  await waitState(host, 'everything', 'ready', { timeout: 60_000 })
  const result = await host.callTool({ serverId: 'everything', name: 'get-env', arguments: {} })
  const env = JSON.parse(result.content[0].text)
  assert.equal(env.SECRET_THING, canary)
  assert.equal(env.PLAIN, 'fallback')
  assertNoCanary(canary, h, [imported.diagnostics])
})

test('a Codex config.toml: bearer_token_env_var through the resolver reaches the server; tool filters and the tool timeout are taken; unsupported keys are named; the canary stays secret', async (t) => {
  const canary = uniqueMarker('canary-token')
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: canary })
  const dir = tmpDir(t)
  const path = join(dir, 'config.toml')
  writeFileSync(path, [
    'model = "gpt-5.1"',
    '',
    '[mcp_servers.api]',
    `url = "${server.url}"`,
    'bearer_token_env_var = "API_TOKEN"',
    'enabled_tools = ["whoami", "other"]',
    'disabled_tools = ["whoami"]',
    'tool_timeout_sec = 45',
    'required = true',
    'startup_timeout_sec = 30',
    '',
    '[mcp_servers.odd]',
    'command = "x"',
    'colour = "blue"',
    '',
  ].join('\n'))
  const h = newHost(t)
  const { host } = h
  const imported = await host.importConfig({ format: 'codex', path, resolve: (v) => (v.id === 'env:API_TOKEN' ? canary : undefined) })
  assert.deepEqual(imported.variables.map((v) => [v.id, v.kind, v.secret]), [['env:API_TOKEN', 'env', true]])
  assert.deepEqual(imported.diagnostics.map((d) => [d.code, d.severity, d.server, d.field, d.line, d.column]), [
    ['invalid_entry', 'error', 'odd', 'colour', 14, 1],
  ])
  assert.equal(imported.diagnostics[0].file, path)
  const [api] = imported.servers
  assert.equal(api.startupTimeoutMs, 30_000)
  // Codex enabled_tools / disabled_tools / tool_timeout_sec: this host's includeTools / excludeTools / call limits.
  assert.deepEqual([api.includeTools, api.excludeTools, api.callTimeoutMs, api.callMaxTotalMs], [['whoami', 'other'], ['whoami'], 45_000, 45_000])
  // Codex required: addServer's required (the start is published blocking).
  assert.equal(api.required, true)
  assert.equal(api.config.headers.Authorization, `Bearer ${canary}`)
  const results = await host.addServers(imported.servers)
  assert.deepEqual(results.map((r) => [r.name, r.id]), [['api', 'api']])
  assert.deepEqual(h.actions.map((e) => e.action).find((a) => a.type === 'session/customizationUpdated' && a.customization.id === 'api')?.customization.state, { kind: 'starting', blocking: true })
  await waitState(host, 'api', 'ready')
  // addServers passed the filter on: whoami (enabled, then disabled) is left out and refused.
  assert.deepEqual(host.listTools().filter((x) => x.customizationId === 'api'), [])
  assert.deepEqual(host.toolDiagnostics().filter((d) => d.serverId === 'api').map((d) => [d.tool, d.action, d.reason]),
    [['whoami', 'filtered', 'matches excludeTools pattern "whoami"']])
  await rejectsWith(() => host.callTool({ serverId: 'api', name: 'whoami', arguments: {} }), 'tool_disabled')
  const stats = await (await fetch(`${server.base}/__stats`)).json()
  assert.ok(stats.acceptedRequests >= 1, JSON.stringify(stats))
  // A resolver that gives nothing: the server is left out with an error naming the variable, never a value.
  const none = await host.importConfig({ format: 'codex', path, resolve: () => undefined })
  assert.deepEqual(none.servers, [])
  const last = none.diagnostics.at(-1)
  assert.deepEqual([last.code, last.severity, last.server, last.line], ['invalid_entry', 'error', 'api', 3])
  assert.match(last.message, /variable \$\{env:API_TOKEN\} has no value/)
  assertNoCanary(canary, h, [imported.diagnostics, none.diagnostics])
})

test('malformed files: one invalid_config diagnostic with line and column; an unreadable path rejects', async (t) => {
  const { host } = newHost(t)
  const broken = await host.importConfig({ format: 'cursor', text: '{\n  "mcpServers": {\n    "a": {"command": "x"\n  }\n', file: 'mcp.json' })
  assert.equal(broken.servers.length, 0)
  const [d] = broken.diagnostics
  // jsonc-parser points at the object left open: line 2, column 17.
  assert.deepEqual([d.code, d.severity, d.file, d.line, d.column], ['invalid_config', 'error', 'mcp.json', 2, 17], d.message)
  await assert.rejects(host.importConfig({ format: 'vscode', path: join(tmpDir(t), 'missing.json') }), (e) => {
    assert.equal(e.code, 'invalid_config', e.message)
    assert.match(e.message, /missing\.json: cannot read/)
    return true
  })
})

test('a resolver answer that is not a string costs only the entries that need that variable', async (t) => {
  const { host } = newHost(t)
  const text = JSON.stringify({
    mcpServers: {
      a: { command: 'x', env: { A: '${A}' } },
      b: { command: 'x', env: { B: '${B}' } },
      c: { command: 'x' },
    },
  })
  const answers = { A: 5, B: 'fine' }
  const imported = await host.importConfig({ format: 'claude-code', text, file: '.mcp.json', resolve: (v) => answers[v.name] })
  assert.deepEqual(imported.servers.map((s) => s.name), ['b', 'c'])
  assert.equal(imported.servers[0].config.env.B, 'fine')
  const [d] = imported.diagnostics
  assert.deepEqual([d.code, d.severity, d.server, d.file], ['invalid_entry', 'error', 'a', '.mcp.json'], d.message)
  assert.match(d.message, /^server "a": variable \$\{env:A\} has no value \(options\.resolve gave a number for \$\{env:A\}, not a string\)$/)
})

test('a text over maxConfigFileBytes is refused, naming options.text; dispose() rejects an import under way', async (t) => {
  const { host } = newHost(t, { limits: { maxConfigFileBytes: 4096 } })
  const text = JSON.stringify({ mcpServers: { a: { command: 'x', args: ['y'.repeat(5000)] } } })
  await assert.rejects(host.importConfig({ format: 'claude-code', text }), (e) => {
    assert.equal(e.code, 'limit_exceeded', e.message)
    assert.match(e.message, /^options\.text: \d+ bytes, more than maxConfigFileBytes \(4096\)/)
    return true
  })
  const small = await host.importConfig({ format: 'claude-code', text: JSON.stringify({ mcpServers: { a: { command: 'x' } } }) })
  assert.equal(small.servers.length, 1)
  // A large import runs off the host's worker; dispose() settles it at once.
  const { host: other } = newHost(t)
  const servers = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`s${i}`, { command: 'x', colour: 'blue' }]))
  const pending = other.importConfig({ format: 'claude-code', text: JSON.stringify({ mcpServers: servers }) })
  const rejected = assert.rejects(pending, (e) => e.code === 'disposed')
  await other.dispose()
  await rejected
})

test('a secret resolved into a stdio env is hidden from the logs of a server that prints it (registry isSecret)', { skip: process.platform === 'win32' }, async (t) => {
  fakeNpx(t) // npx -y <args…> runs node <args…>
  const canary = uniqueMarker('canary-stderr')
  const serverJson = {
    name: 'io.example/env-echo',
    description: 'prints BRAVE_API_KEY to stderr',
    version: '1.0.0',
    packages: [{
      registryType: 'npm',
      identifier: join(FIXTURES, 'env-echo-server.mjs'),
      packageArguments: [{ type: 'positional', value: 'BRAVE_API_KEY' }],
      transport: { type: 'stdio' },
      environmentVariables: [{ name: 'BRAVE_API_KEY', description: 'Brave Search API Key', isRequired: true, isSecret: true }],
    }],
  }
  const h = newHost(t)
  const { host, logs } = h
  const imported = await host.importConfig({ format: 'registry', text: JSON.stringify(serverJson), resolve: (v) => (v.secret ? canary : undefined) })
  const [server] = imported.servers
  assert.equal(server.config.command, 'npx')
  assert.deepEqual(server.config.args, ['-y', join(FIXTURES, 'env-echo-server.mjs'), 'BRAVE_API_KEY'])
  const [added] = await host.addServers(imported.servers)
  await waitState(host, added.id, 'ready')
  const line = await waitFor(() => logs.find((l) => l.message.includes('BRAVE_API_KEY=')), { what: 'the stderr line' })
  assert.match(line.message, /BRAVE_API_KEY=\[redacted\]/)
  assertNoCanary(canary, h)
})

test('the headers provider: asked at connect and again after a 401; its values reach the server and stay secret', async (t) => {
  const canary = uniqueMarker('canary-header')
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: canary })
  const asked = []
  const h = newHost(t, {
    headers: async ({ serverId, url, reason }) => {
      asked.push([serverId, url, reason])
      return { Authorization: `Bearer ${reason === 'connect' ? 'stale-token-1' : canary}` }
    },
  })
  const { host } = h
  const id = await host.addServer({ name: 'rotating', config: { type: 'streamable-http', url: `${server.url}?k=v` } })
  await waitState(host, id, 'ready')
  assert.deepEqual(asked, [['rotating', server.url, 'connect'], ['rotating', server.url, 'unauthorized']])
  const stats = await (await fetch(`${server.base}/__stats`)).json()
  assert.ok(stats.acceptedRequests >= 1, JSON.stringify(stats))
  assertNoCanary(canary, h)
})

test('the headers provider: a refused header or a throw fails the connect, naming the header, never its value', async (t) => {
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: 'x' })
  const { host } = newHost(t, {
    headers: ({ serverId }) => {
      if (serverId === 'throws') throw new Error('secret-in-error-123')
      return { 'X-Bad': 'line\r\nInjected: secret-in-value-123' }
    },
  })
  for (const name of ['bad', 'throws']) {
    await host.addServer({ name, config: { type: 'streamable-http', url: server.url } })
    const state = await waitState(host, name, 'error')
    assert.equal(state.error.errorType, 'connect_failed', state.error.message)
    assert.ok(!state.error.message.includes('secret-in'), state.error.message)
  }
  assert.match((await waitState(host, 'bad', 'error')).error.message, /headers provider gave a header this host refuses: .*headers\.X-Bad/)
  assert.match((await waitState(host, 'throws', 'error')).error.message, /headers provider failed/)
})

test('the headers provider is bounded: no answer within 10 s fails the connect with connect_failed', async (t) => {
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: 'x' })
  // Held, so the pending promise is not collected (a collected one fails the call at once).
  const held = []
  t.after(() => held.forEach((resolve) => resolve(undefined)))
  const { host } = newHost(t, { headers: () => new Promise((resolve) => { held.push(resolve) }) })
  const started = Date.now()
  await host.addServer({ name: 'slow', config: { type: 'streamable-http', url: server.url }, startupTimeoutMs: 60_000 })
  const state = await waitState(host, 'slow', 'error', { timeout: 30_000 })
  const waited = Date.now() - started
  assert.equal(state.error.errorType, 'connect_failed', state.error.message)
  assert.match(state.error.message, /headers provider did not answer within 10000 ms/)
  assert.ok(waited >= 9_500 && waited < 25_000, `waited ${waited} ms`)
  const stats = await (await fetch(`${server.base}/__stats`)).json()
  assert.equal(stats.tokenRequests + stats.unauthenticatedRequests, 0, 'nothing was sent without the headers')
})

test('the headers provider: a 401 on a ready connection reconnects and asks it again (a rotated token)', async (t) => {
  let current = uniqueMarker('token-a')
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: current })
  const asked = []
  const h = newHost(t, { headers: ({ reason }) => { asked.push(reason); return { Authorization: `Bearer ${current}` } } })
  const { host } = h
  const id = await host.addServer({ name: 'rotating', config: { type: 'streamable-http', url: server.url } })
  await waitState(host, id, 'ready')
  assert.deepEqual(asked, ['connect'])
  // The server now takes only a new token, which the provider gives from now on.
  current = uniqueMarker('canary-token-b')
  await fetch(`${server.base}/__accept?token=${current}`, { method: 'POST' })
  await assert.rejects(host.callTool({ serverId: id, name: 'whoami', arguments: {} }), (e) => e.code === 'auth_required' || e.code === 'server_not_ready')
  await waitFor(() => asked.length >= 2 && serverStateKind(host, id) === 'ready', { what: 'a reconnect with the new token' })
  assert.deepEqual(asked, ['connect', 'connect'])
  const result = await host.callTool({ serverId: id, name: 'whoami', arguments: { name: 'b' } })
  assert.equal(result.content[0].text, 'hello b')
  assertNoCanary(current, h)
})

function serverStateKind(host, id) {
  return host.getState().customizations?.find((c) => c.id === id)?.state?.kind
}
