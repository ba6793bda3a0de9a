// Issue 30, item 1: a `${…}` placeholder in the `url` or a header value of a
// plugin's mcp.json is sent literally (Agent Plugins expands variables only
// in args, env values and cwd), and the host says so: the plugin is
// `degraded` with a diagnostic naming the server, the field and the
// placeholder, the server's customization lists it under
// `_meta["ahp-mcp-host/literalPlaceholders"]`, and a `warn` log is sent.
// The server still starts. The real server is protected-server.mjs on
// 127.0.0.1, which accepts only the literal `Bearer ${TOKEN}`.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { newHost, tmpDir, writePlugin, startHttpFixture, waitState, findCustomization, callText } from './helpers/host.mjs'

const META_KEY = 'ahp-mcp-host/literalPlaceholders'
const RULE = 'is sent literally (Agent Plugins expands variables only in args, env values and cwd)'

test('a ${TOKEN} header in a plugin mcp.json: diagnostic, warn log, and the server starts with the literal value', async (t) => {
  // The server accepts exactly what Agent Plugins says is sent: the text as written.
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: '${TOKEN}' })
  const root = writePlugin(join(tmpDir(t), 'tokened'), {
    mcpServers: {
      api: { type: 'streamable-http', url: `${server.url}?tenant=\${TENANT}`, headers: { Authorization: 'Bearer ${TOKEN}', 'X-Other': 'plain-value-1234' } },
    },
  })
  const { host, logs, actions } = newHost(t)
  const added = await host.addPlugin({ root })
  assert.deepEqual(added.servers, ['tokened/api'])

  // The server starts as Agent Plugins says: literal values.
  await waitState(host, 'tokened/api', 'ready')
  assert.equal(await callText(host, 'tokened/api', 'whoami', { name: 'x' }), 'hello x')
  const stats = await (await fetch(`${server.base}/__stats`)).json()
  assert.ok(stats.acceptedRequests >= 1, JSON.stringify(stats))

  // The diagnostic, where the user sees it.
  const urlMessage = `server "api": field "url": \${TENANT} ${RULE}`
  const headerMessage = `server "api": field "headers.Authorization": \${TOKEN} ${RULE}`
  const plugin = findCustomization(host.getState(), 'tokened')
  assert.deepEqual(plugin.load, { kind: 'degraded', message: `${urlMessage}; ${headerMessage}` })
  const child = findCustomization(host.getState(), 'tokened/api')
  assert.deepEqual(child._meta[META_KEY], [
    { field: 'url', placeholder: '${TENANT}', message: urlMessage },
    { field: 'headers.Authorization', placeholder: '${TOKEN}', message: headerMessage },
  ])
  const warned = logs.filter((l) => l.level === 'warn' && l.target === 'host.config').map((l) => l.message)
  assert.deepEqual(warned, [`plugin tokened: ${urlMessage}`, `plugin tokened: ${headerMessage}`])
  // The other header's value is a secret: never shown.
  assert.ok(!JSON.stringify({ actions, logs, state: host.getState() }).includes('plain-value-1234'))
})

test('a plugin without placeholders is loaded, without the diagnostic key', async (t) => {
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: 'abc' })
  const root = writePlugin(join(tmpDir(t), 'plain'), {
    mcpServers: { api: { type: 'streamable-http', url: server.url, headers: { Authorization: 'Bearer abc' } } },
  })
  const { host, logs } = newHost(t)
  await host.addPlugin({ root })
  await waitState(host, 'plain/api', 'ready')
  assert.deepEqual(findCustomization(host.getState(), 'plain').load, { kind: 'loaded' })
  assert.equal(findCustomization(host.getState(), 'plain/api')._meta?.[META_KEY], undefined)
  assert.equal(logs.filter((l) => l.level === 'warn').length, 0, JSON.stringify(logs))
})

test('addServer with a ${…} header: warn log and _meta diagnostic, the server starts', async (t) => {
  const server = await startHttpFixture(t, 'protected-server.mjs', { ACCEPT_TOKEN: '${env:TOKEN}' })
  const { host, logs } = newHost(t)
  const id = await host.addServer({
    name: 'direct',
    config: { type: 'streamable-http', url: server.url, headers: { Authorization: 'Bearer ${env:TOKEN}' } },
  })
  await waitState(host, id, 'ready')
  const message = `server "direct": field "headers.Authorization": \${env:TOKEN} ${RULE}`
  assert.deepEqual(findCustomization(host.getState(), id)._meta[META_KEY], [
    { field: 'headers.Authorization', placeholder: '${env:TOKEN}', message },
  ])
  assert.ok(logs.some((l) => l.level === 'warn' && l.message === `addServer: ${message}`), JSON.stringify(logs))
})
