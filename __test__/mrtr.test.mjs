// MRTR (SEP-2322, MCP 2026-07-28): a tool call answered with
// `input_required` is answered through the app's request handlers
// (elicitation, roots) and sent again with `inputResponses` and the
// `requestState` untouched, over as many rounds as the server needs (at
// most 10). Real server: the official TypeScript SDK v2 (stdio and
// Streamable HTTP).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, fixtureEntry, waitState, startHttpFixture, callText, rejectsWith } from './helpers/host.mjs'

// A host with its own dataDir (never the user's), disposed when the test ends.
const hostWith = (t, handlers) => newHost(t, { handlers }).host

const answers = { name: 'Ada', color: 'teal' }

for (const transport of ['stdio', 'http']) {
  test(`${transport}: a two-round input_required tool call is answered through the elicitation handler, requestState untouched`, async (t) => {
    const seen = []
    const host = hostWith(t, {
      elicitation: async (params) => {
        seen.push(params.message)
        const field = Object.keys(params.requestedSchema.properties)[0]
        return { action: 'accept', content: { [field]: answers[field] } }
      },
    })
    const config = transport === 'http'
      ? { type: 'streamable-http', url: (await startHttpFixture(t, 'modern-server.mjs', {}, ['http'])).url }
      : fixtureEntry('modern-server.mjs', ['stdio'])
    const id = await host.addServer({ name: `mrtr-${transport}`, config })
    await waitState(host, id, 'ready')
    assert.equal(await callText(host, id, 'survey'), 'Ada likes teal')
    assert.deepEqual(seen, ['Your name?', 'Favourite colour?'])
  })
}

test('a declined elicitation goes back to the server as declined', async (t) => {
  const host = hostWith(t, { elicitation: async () => ({ action: 'decline' }) })
  const id = await host.addServer({ name: 'mrtr-decline', config: fixtureEntry('modern-server.mjs', ['stdio']) })
  await waitState(host, id, 'ready')
  assert.equal(await callText(host, id, 'survey'), 'declined (elicit)')
})

test('a roots input request is answered by the roots handler', async (t) => {
  const host = hostWith(t, { roots: async () => ({ roots: [{ uri: 'file:///work/a', name: 'a' }] }) })
  const id = await host.addServer({ name: 'mrtr-roots', config: fixtureEntry('modern-server.mjs', ['stdio']) })
  await waitState(host, id, 'ready')
  assert.equal(await callText(host, id, 'where'), 'file:///work/a')
})

test('a server that never completes fails with limit_exceeded after 10 rounds', async (t) => {
  const host = hostWith(t, {})
  const id = await host.addServer({ name: 'mrtr-forever', config: fixtureEntry('modern-server.mjs', ['stdio']) })
  await waitState(host, id, 'ready')
  const err = await rejectsWith(() => host.callTool({ serverId: id, name: 'forever', arguments: {} }), 'limit_exceeded')
  assert.match(err.message, /more than 10 input_required rounds/)
  assert.match(err.message, /forever/)
})

test('prompts/get answered with input_required goes through the handler too', async (t) => {
  const host = hostWith(t, { elicitation: async () => ({ action: 'accept', content: { name: 'Grace' } }) })
  const id = await host.addServer({ name: 'mrtr-prompt', config: fixtureEntry('modern-server.mjs', ['stdio']) })
  await waitState(host, id, 'ready')
  const prompt = await host.getPrompt(id, 'greet')
  assert.equal(prompt.messages[0].content.text, 'Hello, Grace')
  // The 2026-07-28 `resultType: "complete"` marker stays on the wire: results read alike in both eras.
  assert.ok(!('resultType' in prompt), JSON.stringify(prompt))
  const called = await host.callTool({ serverId: id, name: 'echo', arguments: { text: 'x' } })
  assert.ok(!('resultType' in called), JSON.stringify(called))
})

test('resources/read of an unknown URI is not_found (SEP-2164: -32602 with data.uri), a known one reads', async (t) => {
  const host = hostWith(t, {})
  const id = await host.addServer({ name: 'sep2164', config: fixtureEntry('modern-server.mjs', ['stdio']) })
  await waitState(host, id, 'ready')
  assert.equal((await host.readResource(id, 'fixture://hello')).contents[0].text, 'hello')
  const err = await rejectsWith(() => host.readResource(id, 'fixture://nope'), 'not_found')
  assert.deepEqual(err.data, { code: -32602, data: { uri: 'fixture://nope' } })
  assert.match(err.message, /fixture:\/\/nope/)
})
