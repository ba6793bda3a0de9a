// server-everything over stdio (as a plugin) and over Streamable HTTP, plus
// tools/list_changed handling with a purpose-written SDK server.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import {
  newHost, tmpDir, writePlugin, everythingEntry, fixtureEntry, waitState, waitFor, callText,
  freePort, waitAccepting, killChild, EVERYTHING, FIXTURES, NODE, stateHistory,
} from './helpers/host.mjs'

function assertEverythingTools(tools, serverId) {
  const mine = tools.filter((t) => t.customizationId === serverId)
  const names = mine.map((t) => t.toolName)
  assert.ok(names.includes('echo'), `echo missing from ${JSON.stringify(names)}`)
  assert.ok(names.includes('trigger-long-running-operation'), `tools: ${JSON.stringify(names)}`)
  const echo = mine.find((t) => t.toolName === 'echo')
  assert.equal(echo.customizationId, serverId)
  assert.equal(typeof echo.name, 'string')
  assert.equal(typeof echo.description, 'string')
  assert.equal(echo.inputSchema?.type, 'object')
  assert.ok(echo.inputSchema.properties?.message, 'echo inputSchema has a message property')
}

test('server-everything over stdio through a plugin: ready, tools, echo', async (t) => {
  const root = writePlugin(join(tmpDir(t), 'everything-plugin'), { mcpServers: { everything: everythingEntry() } })
  const { host, actions } = newHost(t)
  const added = await host.addPlugin({ root })
  assert.equal(added.id, 'everything-plugin')
  assert.deepEqual(added.servers, ['everything-plugin/everything'])
  assert.equal(added.load.kind, 'loaded')
  const id = added.servers[0]

  await waitState(host, id, 'ready')
  const plugin = host.getState().customizations.find((c) => c.id === 'everything-plugin')
  assert.equal(plugin.type, 'plugin')
  assert.equal(plugin.children[0].type, 'mcpServer')
  assert.equal(plugin.children[0].id, id)
  assert.equal(host.processCount, 1)

  // getState() is the native state, which leads the actions' delivery to
  // listeners: the ready state's action is waited for before the recorded
  // actions are checked.
  await waitFor(() => stateHistory(actions, id).at(-1)?.kind === 'ready', { what: 'the ready action delivered' })
  // Every envelope is on the session channel with gapless serverSeq.
  assert.deepEqual(actions.map((a) => a.serverSeq), actions.map((_, i) => i + 1))
  assert.ok(actions.every((a) => a.channel === 'ahp-session:/mcp-host'))
  assert.deepEqual(stateHistory(actions, id).map((s) => s.kind).at(-1), 'ready')

  await waitFor(() => host.listTools().some((t) => t.customizationId === id), { what: 'tools listed' })
  assertEverythingTools(host.listTools(), id)

  const result = await host.callTool({ serverId: id, name: 'echo', arguments: { message: 'hello stdio' } })
  assert.equal(result.content[0].type, 'text')
  assert.match(result.content[0].text, /hello stdio/)
  assert.ok(!result.isError)
})

test('server-everything over Streamable HTTP: ready, tools, echo', async (t) => {
  const port = await freePort()
  const child = spawn(NODE, ['--require', join(FIXTURES, 'loopback-only.cjs'), EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  t.after(() => killChild(child))
  await waitAccepting(port).catch((e) => { e.message += `\nserver stderr: ${stderr}`; throw e })

  const { host } = newHost(t)
  const url = `http://127.0.0.1:${port}/mcp`
  const id = await host.addServer({ name: 'everything-http', config: { type: 'streamable-http', url } })
  assert.equal(id, 'everything-http')
  const entry = host.getState().customizations.find((c) => c.id === id)
  assert.equal(entry.type, 'mcpServer')
  assert.equal(entry.uri, url)

  await waitState(host, id, 'ready')
  assert.equal(host.processCount, 0, 'an HTTP server has no process group')
  await waitFor(() => host.listTools().some((t) => t.customizationId === id), { what: 'tools listed' })
  assertEverythingTools(host.listTools(), id)

  const result = await host.callTool({ serverId: id, name: 'echo', arguments: { message: 'hello http' } })
  assert.match(result.content[0].text, /hello http/)

  // A second call reuses the session.
  const again = await host.callTool({ serverId: id, name: 'echo', arguments: { message: 'again' } })
  assert.match(again.content[0].text, /again/)
})

test('tools/list_changed: a tool registered at runtime appears in listTools()', async (t) => {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'dyn', config: fixtureEntry('tools-server.mjs') })
  await waitState(host, id, 'ready')
  const before = host.listTools().filter((t) => t.customizationId === id).map((t) => t.toolName).sort()
  assert.deepEqual(before, ['add_tool', 'echo', 'pid', 'sleep'])

  assert.equal(await callText(host, id, 'add_tool', { name: 'fresh_tool' }), 'added:fresh_tool')
  const fresh = await waitFor(() => host.listTools().find((t) => t.customizationId === id && t.toolName === 'fresh_tool'), {
    what: 'fresh_tool to be listed after list_changed',
    describe: () => JSON.stringify(host.listTools().map((t) => t.toolName)),
  })
  assert.equal(fresh.description, 'Dynamically added tool fresh_tool')
  // The log is an event, delivered after listTools() (a synchronous read of
  // the catalogue) may already show the new tool: wait for it, do not race it.
  await waitFor(() => logs.some((l) => l.target === 'host.supervisor' && l.serverId === id && /list_changed/.test(l.message)), {
    what: 'the tools/list_changed log',
  })

  // The new tool is callable, and the server stays ready.
  assert.equal(await callText(host, id, 'fresh_tool'), 'dynamic:fresh_tool')

  // A second change is picked up as well.
  await callText(host, id, 'add_tool', { name: 'second_tool' })
  await waitFor(() => host.listTools().some((t) => t.customizationId === id && t.toolName === 'second_tool'), {
    what: 'second_tool to be listed',
  })
  assert.equal(host.listTools().filter((t) => t.customizationId === id).length, 6)
  assert.equal((await waitState(host, id, 'ready')).kind, 'ready')
})
