// Key order: every JSON object passing through the host keeps the order its
// sender wrote (issue 10). order-server.mjs (official SDK, low-level Server)
// sends tool schemas, results and an elicitation form whose keys are in a
// deliberately non-alphabetical order; the app's `arguments` go the other way.
// Also the display name of a tool in AHP messages: `title`, then
// `annotations.title`, then `name`.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, waitFor, fixtureEntry } from './helpers/host.mjs'

const ORDER = ['url', 'thought', 'a', 'zeta', 'b']
const CHAT = 'ahp-chat:/order-chat'
const keys = (o) => Object.keys(o ?? {})

async function orderServer(t, options = {}) {
  const { host, actions } = newHost(t, options)
  const id = await host.addServer({ name: 'order', config: fixtureEntry('order-server.mjs') })
  await waitState(host, id, 'ready')
  return { host, actions, id }
}

test('tool schemas keep the server order: listTools, session/serverToolsChanged and state.serverTools', async (t) => {
  const { host, actions } = await orderServer(t)
  const tabs = host.listTools().find((x) => x.toolName === 'browser_tabs')
  assert.deepEqual(keys(tabs.inputSchema), ['type', 'properties', 'required', 'additionalProperties'])
  assert.deepEqual(keys(tabs.inputSchema.properties), ORDER)
  assert.deepEqual(keys(tabs.outputSchema.properties), ['zulu', 'alpha', 'mike'])
  assert.deepEqual(keys(tabs._meta), ['z/last', 'a/first'])

  await waitFor(() => actions.some((e) => e.action.type === 'session/serverToolsChanged'), { what: 'serverToolsChanged' })
  const published = actions.filter((e) => e.action.type === 'session/serverToolsChanged').at(-1).action.tools
  for (const tools of [published, host.getState().serverTools]) {
    const def = tools.find((d) => d.name === tabs.name)
    assert.deepEqual(keys(def.inputSchema.properties), ORDER)
    assert.deepEqual(keys(def.outputSchema.properties), ['zulu', 'alpha', 'mike'])
    assert.deepEqual(keys(def._meta), ['z/last', 'a/first', 'ahp-mcp-host/source'])
  }
})

test('callTool: the arguments reach the server in the app order; the result keeps the server order', async (t) => {
  const { host, actions } = await orderServer(t)
  const args = { url: 'https://example.test', thought: 'why', a: 1, zeta: true, b: 'x' }
  const call = { chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-1' }
  const result = await host.callTool({ name: 'mcp__order__browser_tabs', arguments: args, ...call })
  assert.deepEqual(JSON.parse(result.content[0].text), { received: ORDER })
  assert.deepEqual(keys(result.structuredContent), ['zulu', 'alpha', 'mike'])
  assert.deepEqual(keys(result.structuredContent.mike), ['yankee', 'bravo'])
  assert.deepEqual(keys(result._meta), ['z/last', 'a/first'])

  // The same result as an AHP tool call: structuredContent in the server order.
  await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'toolCallComplete' })
  const done = actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete').action
  assert.deepEqual(keys(done.result.structuredContent), ['zulu', 'alpha', 'mike'])
  assert.deepEqual(keys(done.result.structuredContent.mike), ['yankee', 'bravo'])

  // Reversed order in, reversed order out.
  const reversed = Object.fromEntries(Object.entries(args).reverse())
  const again = await host.callTool({ serverId: 'order', name: 'browser_tabs', arguments: reversed })
  assert.deepEqual(JSON.parse(again.content[0].text), { received: [...ORDER].reverse() })
})

test('elicitation: the handler sees requestedSchema.properties in the server order; its content reaches the server in the app order', async (t) => {
  const seen = []
  const { host } = await orderServer(t, {
    handlers: {
      elicitation: async (params) => {
        seen.push(params)
        return { action: 'accept', content: { b: 'x', zeta: true, a: 1, thought: 'why', url: 'https://example.test' } }
      },
    },
  })
  const result = await host.callTool({ serverId: 'order', name: 'ask', arguments: {} })
  assert.equal(seen.length, 1)
  assert.deepEqual(keys(seen[0].requestedSchema.properties), ORDER)
  assert.deepEqual(JSON.parse(result.content[0].text), { action: 'accept', received: [...ORDER].reverse() })
})

test('resources and prompts: _meta keeps the server order; prompt arguments reach the server in the app order', async (t) => {
  const { host, id } = await orderServer(t)
  const [resource] = await host.listResources(id)
  assert.deepEqual(keys(resource._meta), ['z/last', 'a/first'])
  const read = await host.readResource(id, 'order://r')
  assert.deepEqual(keys(read._meta), ['z/last', 'a/first'])
  assert.deepEqual(keys(read.contents[0]._meta), ['z/last', 'a/first'])
  const [prompt] = await host.listPrompts(id)
  assert.deepEqual(keys(prompt._meta), ['z/last', 'a/first'])
  assert.deepEqual(prompt.arguments.map((a) => a.name), ORDER)
  const got = await host.getPrompt(id, 'p', { b: '1', zeta: '2', a: '3', thought: '4', url: '5' })
  assert.deepEqual(keys(got._meta), ['z/last', 'a/first'])
  assert.deepEqual(JSON.parse(got.messages[0].content.text), [...ORDER].reverse())
})

test('display name in AHP tool-call messages: title, then annotations.title, then name', async (t) => {
  const { host, actions } = await orderServer(t)
  const completion = async (name, toolCallId) => {
    await host.callTool({ serverId: 'order', name, arguments: name === 'browser_tabs' ? { url: 'u', thought: 't' } : {}, chat: CHAT, turnId: 'turn-1', toolCallId })
    await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.toolCallId === toolCallId && e.action.type === 'chat/toolCallComplete'), { what: toolCallId })
    return actions.find((e) => e.channel === CHAT && e.action.toolCallId === toolCallId && e.action.type === 'chat/toolCallComplete').action.result
  }
  assert.equal((await completion('browser_tabs', 'tc-annotations')).pastTenseMessage, 'Called Manage tabs')
  assert.equal((await completion('titled', 'tc-title')).pastTenseMessage, 'Called Titled tool')
  assert.equal((await completion('plain', 'tc-name')).pastTenseMessage, 'Called plain')
})
