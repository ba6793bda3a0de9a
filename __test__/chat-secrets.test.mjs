// A server's tool result that prints a value the host keeps secret (here an
// env value, as an imported `${input:…}` token would be): the AHP chat state
// carries it `[redacted]` (src/chat/mod.rs `complete_action`), the app's own
// `callTool` result stays whole.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, waitFor, everythingEntry, uniqueMarker } from './helpers/host.mjs'

const CHAT = 'ahp-chat:/secrets-chat'

test('an AHP chat tool call whose result prints a kept secret: the chat action has it [redacted], callTool returns it whole', async (t) => {
  const canary = uniqueMarker('chat-canary')
  const { host, actions, logs } = newHost(t)
  const config = { ...everythingEntry(), env: { SECRET_THING: canary } }
  const id = await host.addServer({ name: 'everything', config })
  await waitState(host, id, 'ready', { timeout: 60_000 })
  const call = { serverId: id, name: 'get-env', arguments: {}, chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-env' }
  const result = await host.callTool(call)
  assert.equal(JSON.parse(result.content[0].text).SECRET_THING, canary, 'the app gets the result whole')
  await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'toolCallComplete' })
  const done = actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete').action
  const text = JSON.stringify(done.result)
  assert.ok(!text.includes(canary), 'the chat state holds the secret')
  assert.match(text, /SECRET_THING\\": \\"\[redacted\]/)
  assert.ok(!JSON.stringify(actions).includes(canary) && !JSON.stringify(logs).includes(canary))
})
