// Issue 30, item 5: for each format, the imported entries start the same
// servers with the same command, args, env, cwd and headers the source host
// would use, per its documented behaviour (docs/guide/import.md, one table
// per format). Real servers on loopback: launch-report-server.mjs (stdio,
// reports its argv, IMPORT_* env and cwd) and header-report-server.mjs
// (Streamable HTTP, reports the URL and headers it got).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, tmpDir, startHttpFixture, waitState, fakeNpx, FIXTURES, NODE } from './helpers/host.mjs'

const SCRIPT = join(FIXTURES, 'launch-report-server.mjs')

/** What the stdio server `id` says about its launch, once ready. */
async function launched(host, id) {
  await waitState(host, id, 'ready')
  const r = await host.callTool({ serverId: id, name: 'launch', arguments: {} })
  return JSON.parse(r.content[0].text)
}

/** The last request the HTTP server got, once server `id` is ready. */
async function lastRequest(host, id, server) {
  await waitState(host, id, 'ready')
  const seen = await (await fetch(`${server.base}/__seen`)).json()
  return seen.at(-1)
}

/** Imports `text`, resolves with `values` (by variable id), adds every server; returns {host, imported, ids}. */
async function importAndAdd(t, format, text, values = {}) {
  const { host } = newHost(t)
  const imported = await host.importConfig({ format, text, resolve: (v) => values[v.id] })
  const errors = imported.diagnostics.filter((d) => d.severity === 'error')
  assert.deepEqual(errors, [], 'no entry left out')
  const results = await host.addServers(imported.servers)
  for (const r of results) assert.ok(r.id, `${r.name}: ${r.error?.message}`)
  return { host, imported }
}

test('VS Code mcp.json: ${input:…}, ${env:…} and ${workspaceFolder} in args, env, cwd and headers', async (t) => {
  const workspace = realpathSync(tmpDir(t))
  const http = await startHttpFixture(t, 'header-report-server.mjs')
  const text = JSON.stringify({
    inputs: [{ type: 'promptString', id: 'api-key', description: 'API Key', password: true }],
    servers: {
      local: {
        type: 'stdio', command: NODE, args: [SCRIPT, '--root', '${workspaceFolder}'],
        env: { IMPORT_KEY: '${input:api-key}', IMPORT_HOME: '${env:SOURCE_HOME}' }, cwd: '${workspaceFolder}',
      },
      remote: { type: 'http', url: http.url, headers: { Authorization: 'Bearer ${input:api-key}' } },
    },
  })
  const values = { 'input:api-key': 'k-vscode-1', 'env:SOURCE_HOME': '/home/source', workspaceFolder: workspace }
  const { host } = await importAndAdd(t, 'vscode', text, values)
  assert.deepEqual(await launched(host, 'local'), {
    argv: ['--root', workspace], env: { IMPORT_KEY: 'k-vscode-1', IMPORT_HOME: '/home/source' }, cwd: workspace,
  })
  const request = await lastRequest(host, 'remote', http)
  assert.equal(request.headers.authorization, 'Bearer k-vscode-1')
})

test('Claude Code .mcp.json: ${VAR} and ${VAR:-default} in command args, env, url and headers', async (t) => {
  const http = await startHttpFixture(t, 'header-report-server.mjs')
  const text = JSON.stringify({
    mcpServers: {
      local: { command: NODE, args: [SCRIPT, '${MODE:-fast}', '${LABEL}'], env: { IMPORT_TOKEN: '${TOKEN}', IMPORT_LEVEL: '${LEVEL:-info}' } },
      api: { type: 'http', url: '${API_BASE_URL:-http://unused.invalid}/mcp', headers: { Authorization: 'Bearer ${API_KEY}' } },
    },
  })
  const values = { 'env:LABEL': 'lbl', 'env:TOKEN': 't-claude-1', 'env:API_BASE_URL': http.base, 'env:API_KEY': 'k-claude-1' }
  const { host } = await importAndAdd(t, 'claude-code', text, values)
  const report = await launched(host, 'local')
  assert.deepEqual(report.argv, ['fast', 'lbl'])
  assert.deepEqual(report.env, { IMPORT_TOKEN: 't-claude-1', IMPORT_LEVEL: 'info' })
  const request = await lastRequest(host, 'api', http)
  assert.equal(request.url, '/mcp')
  assert.equal(request.headers.authorization, 'Bearer k-claude-1')
})

test('Claude Desktop: command, args and env as written (no expansion)', async (t) => {
  const text = JSON.stringify({
    mcpServers: { filesystem: { command: NODE, args: [SCRIPT, '/Users/username/Desktop', '$HOME'], env: { IMPORT_PATH: '/Users/username/Downloads' } } },
    globalShortcut: 'Ctrl+Space',
  })
  const { host, imported } = await importAndAdd(t, 'claude-desktop', text)
  assert.deepEqual(imported.variables, [])
  assert.deepEqual(await launched(host, 'filesystem'), {
    argv: ['/Users/username/Desktop', '$HOME'], env: { IMPORT_PATH: '/Users/username/Downloads' }, cwd: process.cwd(),
  })
})

test('Cursor mcp.json: ${env:NAME} and ${userHome} in args, env and headers; url-only entries are remote', async (t) => {
  const http = await startHttpFixture(t, 'header-report-server.mjs')
  const text = JSON.stringify({
    mcpServers: {
      local: { command: NODE, args: [SCRIPT, '${userHome}/notes'], env: { IMPORT_API_KEY: '${env:API_KEY}' } },
      remote: { url: http.url, headers: { API_KEY: '${env:API_KEY}' } },
    },
  })
  const { host } = await importAndAdd(t, 'cursor', text, { userHome: '/home/u', 'env:API_KEY': 'k-cursor-1' })
  const report = await launched(host, 'local')
  assert.deepEqual([report.argv, report.env], [['/home/u/notes'], { IMPORT_API_KEY: 'k-cursor-1' }])
  assert.equal((await lastRequest(host, 'remote', http)).headers.api_key, 'k-cursor-1')
})

test('Codex config.toml: env, env_vars, cwd; http_headers, env_http_headers and bearer_token_env_var', async (t) => {
  const cwd = realpathSync(tmpDir(t))
  const http = await startHttpFixture(t, 'header-report-server.mjs')
  const text = [
    '[mcp_servers.local]',
    `command = ${JSON.stringify(NODE)}`,
    `args = [${JSON.stringify(SCRIPT)}, "-y"]`,
    'env = { "IMPORT_API_KEY" = "value" }',
    'env_vars = ["IMPORT_FORWARDED"]',
    `cwd = ${JSON.stringify(cwd)}`,
    '',
    '[mcp_servers.figma]',
    `url = ${JSON.stringify(http.url)}`,
    'bearer_token_env_var = "FIGMA_TOKEN"',
    'http_headers = { "X-Figma-Region" = "us-east-1" }',
    'env_http_headers = { "X-Features" = "FIGMA_FEATURES" }',
  ].join('\n')
  const values = { 'env:IMPORT_FORWARDED': 'fwd', 'env:FIGMA_TOKEN': 't-codex-1', 'env:FIGMA_FEATURES': 'a,b' }
  const { host } = await importAndAdd(t, 'codex', text, values)
  assert.deepEqual(await launched(host, 'local'), { argv: ['-y'], env: { IMPORT_API_KEY: 'value', IMPORT_FORWARDED: 'fwd' }, cwd })
  const { headers } = await lastRequest(host, 'figma', http)
  assert.deepEqual([headers.authorization, headers['x-figma-region'], headers['x-features']], ['Bearer t-codex-1', 'us-east-1', 'a,b'])
})

test('MCP Registry server.json: runtime and package arguments, environment variables, a remote with headers and URL variables', { skip: process.platform === 'win32' }, async (t) => {
  fakeNpx(t) // npx -y <args…> runs node <args…>
  const http = await startHttpFixture(t, 'header-report-server.mjs')
  const dir = tmpDir(t)
  const serverJson = {
    $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
    name: 'io.example/report',
    description: 'launch report',
    version: '1.0.0',
    packages: [{
      registryType: 'npm', identifier: 'report-server', version: '1.0.0',
      transport: { type: 'stdio' },
      runtimeArguments: [{ type: 'positional', value: SCRIPT }],
      packageArguments: [
        { type: 'named', name: '--mode', default: 'local', choices: ['local', 'cached'] },
        { type: 'positional', valueHint: 'target_dir', isRequired: true },
      ],
      environmentVariables: [
        { name: 'IMPORT_API_KEY', isRequired: true, isSecret: true },
        { name: 'IMPORT_UNITS', default: 'celsius' },
      ],
    }],
    remotes: [{
      type: 'streamable-http', url: `${http.base}/mcp?tenant={tenant}`,
      variables: { tenant: { description: 'Tenant', isRequired: true } },
      headers: [{ name: 'X-API-Key', isRequired: true, isSecret: true }, { name: 'X-Region', default: 'us-east-1' }],
    }],
  }
  const path = join(dir, 'server.json')
  writeFileSync(path, JSON.stringify(serverJson))
  const { host } = newHost(t)
  const values = { 'input:IMPORT_API_KEY': 'k-reg-1', 'input:target_dir': dir, 'input:tenant': 'acme', 'input:X-API-Key': 'h-reg-1' }
  const imported = await host.importConfig({ format: 'registry', path, resolve: (v) => values[v.id] })
  assert.deepEqual(imported.servers.map((s) => s.name), ['report-npm', 'report-remote'])
  const results = await host.addServers(imported.servers)
  assert.deepEqual(results.map((r) => r.id), ['report-npm', 'report-remote'])
  assert.deepEqual(await launched(host, 'report-npm'), {
    argv: ['report-server@1.0.0', '--mode', 'local', dir], env: { IMPORT_API_KEY: 'k-reg-1', IMPORT_UNITS: 'celsius' }, cwd: process.cwd(),
  })
  const request = await lastRequest(host, 'report-remote', http)
  assert.equal(request.url, '/mcp?tenant=acme')
  assert.deepEqual([request.headers['x-api-key'], request.headers['x-region']], ['h-reg-1', 'us-east-1'])
})
