// The host follows the capabilities a server declared (MCP 2025-11-25
// "Lifecycle › Capability Negotiation"; the same from `server/discover` at
// 2026-07-28): no `tools/list` to a server without `tools` (at start or on a
// list_changed), an empty list without a request from the list APIs, and
// `not_supported` from readResource / getPrompt. caps-server.mjs declares
// exactly one capability and reports every request method it received.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, waitFor, fixtureEntry, rejectsWith } from './helpers/host.mjs'

async function capsServer(t, kind) {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: kind, config: fixtureEntry('caps-server.mjs', [kind]) })
  await waitState(host, id, 'ready')
  return { host, logs, id }
}

/** Host log records about `id`'s tool list (warnings, errors, re-lists). */
const toolListLogs = (logs, id) => logs.filter((l) => l.serverId === id && /tools\/list/.test(l.message))

test('a server declaring only resources: no tools/list at start or on list_changed, no warning; prompts are not supported', async (t) => {
  const { host, logs, id } = await capsServer(t, 'resources')
  const methods = async () => JSON.parse((await host.readResource(id, 'caps://methods')).contents[0].text)

  // (`server/discover` first: the host's `auto` probe for the 2026-07-28 era; this server is 2025-era.)
  assert.deepEqual(await methods(), ['server/discover', 'initialize', 'resources/read'])
  assert.deepEqual(host.listTools(), [])
  assert.deepEqual(host.toolDiagnostics(), [])
  assert.deepEqual(toolListLogs(logs, id), [])

  // An undeclared list is empty, without a request.
  assert.deepEqual(await host.listPrompts(id), [])
  assert.equal((await host.listResources(id)).length, 2)
  assert.deepEqual(await methods(), ['server/discover', 'initialize', 'resources/read', 'resources/list', 'resources/read'])

  const err = await rejectsWith(() => host.getPrompt(id, 'any'), 'not_supported')
  assert.match(err.message, new RegExp(`${id}.*prompts`), err.message)

  // notifications/tools/list_changed from a server without `tools`: the
  // host does not ask for the list, and says nothing is wrong.
  await host.readResource(id, 'caps://poke')
  await waitFor(() => toolListLogs(logs, id).length > 0, { what: 'the re-list record' })
  const after = await methods()
  assert.ok(!after.includes('tools/list'), JSON.stringify(after))
  assert.ok(toolListLogs(logs, id).every((l) => l.level === 'info' || l.level === 'debug'), JSON.stringify(toolListLogs(logs, id)))
  assert.deepEqual(host.toolDiagnostics(), [])
})

test('a server declaring only tools: resource and prompt lists are empty without a request; read/get reject with not_supported', async (t) => {
  const { host, id } = await capsServer(t, 'tools')
  assert.deepEqual(host.listTools().map((x) => x.toolName), ['methods'])
  assert.deepEqual(await host.listResources(id), [])
  assert.deepEqual(await host.listResourceTemplates(id), [])
  assert.deepEqual(await host.listPrompts(id), [])

  const read = await rejectsWith(() => host.readResource(id, 'caps://x'), 'not_supported')
  assert.match(read.message, new RegExp(`${id}.*resources`), read.message)
  const get = await rejectsWith(() => host.getPrompt(id, 'p'), 'not_supported')
  assert.match(get.message, new RegExp(`${id}.*prompts`), get.message)

  const result = await host.callTool({ serverId: id, name: 'methods', arguments: {} })
  assert.deepEqual(JSON.parse(result.content[0].text), ['server/discover', 'initialize', 'tools/list', 'tools/call'])
})
