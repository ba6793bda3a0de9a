// Sampling with tools (SEP-1577; issue 31 item 3) against a real server of
// the official TypeScript SDK (fixtures/sampling-tools-server.mjs) over
// stdio and Streamable HTTP: the host declares `sampling: {tools: {}}` only
// when the app registers its sampling handler as `{handler, tools: true}`;
// `tools`, `toolChoice`, `tool_use` and `tool_result` pass through to the
// handler and back (the spec's weather tool loop, run by the SDK's own
// `createMessage`); requests the spec rules out are refused with -32602
// before the handler sees them, and a handler answer that uses a tool the
// request did not allow is refused with -32603.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, fixtureEntry, waitState, startHttpFixture, callText, HostError, McpHost, tmpDir } from './helpers/host.mjs'

const TRANSPORTS = [
  { name: 'stdio', config: async () => fixtureEntry('sampling-tools-server.mjs') },
  { name: 'Streamable HTTP', config: async (t) => ({ type: 'streamable-http', url: (await startHttpFixture(t, 'sampling-tools-server.mjs', {}, ['http'])).url }) },
]

const contentOf = (message) => (Array.isArray(message.content) ? message.content : [message.content])

/**
 * A stand-in model: asked a question with tools, it calls `get_weather` for
 * Paris and London; given the tool results, it answers with their texts;
 * without tools, it answers "no tools".
 */
function weatherModel(seen) {
  return async (params) => {
    seen.push(params)
    if (params.tools === undefined) return { role: 'assistant', model: 'stand-in', content: { type: 'text', text: 'no tools' } }
    const last = params.messages.at(-1)
    const results = contentOf(last).filter((c) => c.type === 'tool_result')
    if (results.length === 0) {
      return {
        role: 'assistant',
        model: 'stand-in',
        stopReason: 'toolUse',
        content: ['Paris', 'London'].map((city, i) => ({ type: 'tool_use', id: `call_${i}`, name: 'get_weather', input: { city } })),
      }
    }
    const text = results.map((r) => `${r.toolUseId}=${r.content[0].text}`).join('; ')
    return { role: 'assistant', model: 'stand-in', stopReason: 'endTurn', content: { type: 'text', text } }
  }
}

async function addReady(t, host, transport) {
  const id = await host.addServer({ name: 'sampler', config: await transport.config(t) })
  await waitState(host, id, 'ready')
  return id
}

const call = async (host, id, name, args) => JSON.parse(await callText(host, id, name, args))

for (const transport of TRANSPORTS) {
  test(`sampling with tools over ${transport.name}: declared, and the spec's tool loop passes through`, async (t) => {
    const seen = []
    const { host } = newHost(t, { handlers: { sampling: { handler: weatherModel(seen), tools: true } } })
    const id = await addReady(t, host, transport)
    assert.deepEqual((await call(host, id, 'caps')).sampling, { tools: {} })
    const loop = await call(host, id, 'weather_loop')
    assert.equal(loop.error, undefined, JSON.stringify(loop.error))
    // The handler got what the server sent: tools, toolChoice, then tool uses and their results.
    assert.equal(seen.length, 2)
    assert.deepEqual(seen[0].tools.map((tool) => tool.name), ['get_weather'])
    assert.deepEqual(seen[0].tools[0].inputSchema, loop.requests[0].tools[0].inputSchema)
    assert.deepEqual(seen[0].toolChoice, { mode: 'auto' })
    assert.deepEqual(seen[1].messages, loop.requests[1].messages)
    assert.deepEqual(contentOf(seen[1].messages[2]).map((c) => c.toolUseId), ['call_0', 'call_1'])
    // And the server got the handler's answers: the tool uses, then the final text.
    assert.equal(loop.first.stopReason, 'toolUse')
    assert.deepEqual(loop.first.content.map((c) => [c.type, c.id, c.name, c.input.city]), [
      ['tool_use', 'call_0', 'get_weather', 'Paris'],
      ['tool_use', 'call_1', 'get_weather', 'London'],
    ])
    assert.deepEqual(loop.final.content, { type: 'text', text: 'call_0=Paris: 18C; call_1=London: 18C' })
  })
}

test('a plain sampling handler: sampling without tools; tool requests are refused with -32602 before the handler', async (t) => {
  const seen = []
  const { host } = newHost(t, { handlers: { sampling: weatherModel(seen) } })
  const id = await addReady(t, host, TRANSPORTS[0])
  assert.deepEqual((await call(host, id, 'caps')).sampling, {})
  // The SDK itself refuses to send tools to a client that did not declare them.
  assert.match((await call(host, id, 'weather_loop')).error.message, /does not support sampling tools/)
  const question = { role: 'user', content: { type: 'text', text: 'hi' } }
  const weather = { name: 'get_weather', inputSchema: { type: 'object' } }
  const sent = [
    [{ messages: [question], maxTokens: 9, tools: [weather] }, /has `tools`, but this client did not declare the sampling\.tools capability/],
    [{ messages: [question], maxTokens: 9, toolChoice: { mode: 'none' } }, /has `toolChoice`/],
    [{
      messages: [question, { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'get_weather', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'a', content: [] }] }],
      maxTokens: 9,
    }, /has `tool_use` content/],
  ]
  for (const [params, message] of sent) {
    const { error } = await call(host, id, 'raw', { params })
    assert.equal(error?.code, -32602, JSON.stringify(error))
    assert.match(error.message, message)
  }
  assert.equal(seen.length, 0, 'the handler never saw a refused request')
  // Plain sampling still works.
  const { ok } = await call(host, id, 'raw', { params: { messages: [question], maxTokens: 9 } })
  assert.deepEqual(ok.content, { type: 'text', text: 'no tools' }, 'the stand-in model answered')
  assert.equal(seen.length, 1)
})

test('sampling with tools: tool results must answer the tool uses and stand alone (-32602); answers may use only offered tools (-32603)', async (t) => {
  const seen = []
  let answer
  const handler = async (params) => (seen.push(params), answer)
  const { host } = newHost(t, { handlers: { sampling: { handler, tools: true } } })
  const id = await addReady(t, host, TRANSPORTS[0])
  const question = { role: 'user', content: { type: 'text', text: 'weather?' } }
  const weather = { name: 'get_weather', inputSchema: { type: 'object' } }
  const uses = { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'get_weather', input: {} }, { type: 'tool_use', id: 'b', name: 'get_weather', input: {} }] }
  const result = (toolUseId) => ({ type: 'tool_result', toolUseId, content: [{ type: 'text', text: 'sunny' }] })
  const refused = [
    [[question, uses, { role: 'user', content: [result('a')] }], /not balanced/],
    [[question, uses, { role: 'user', content: [result('a'), result('b'), result('c')] }], /'c' has no matching ToolUse/],
    [[question, uses, { role: 'user', content: [result('a'), result('b'), { type: 'text', text: 'and' }] }], /MUST NOT contain other content/],
    [[question, { role: 'assistant', content: [result('a')] }], /only allowed in user messages/],
  ]
  for (const [messages, message] of refused) {
    const { error } = await call(host, id, 'raw', { params: { messages, tools: [weather], maxTokens: 9 } })
    assert.equal(error?.code, -32602, JSON.stringify(error))
    assert.match(error.message, message)
  }
  assert.equal(seen.length, 0)
  const toolUse = (name) => ({ role: 'assistant', model: 'm', stopReason: 'toolUse', content: [{ type: 'tool_use', id: 'x', name, input: {} }] })
  const answers = [
    [{ messages: [question], tools: [weather], maxTokens: 9 }, toolUse('delete_everything'), /"delete_everything", a tool the request did not offer/],
    [{ messages: [question], maxTokens: 9 }, toolUse('get_weather'), /the request offered no tools/],
    [{ messages: [question], tools: [weather], toolChoice: { mode: 'none' }, maxTokens: 9 }, toolUse('get_weather'), /toolChoice is `none`/],
  ]
  for (const [params, given, message] of answers) {
    answer = given
    const { error } = await call(host, id, 'raw', { params })
    assert.equal(error?.code, -32603, JSON.stringify(error))
    assert.match(error.message, /handler returned an invalid result/)
    assert.match(error.message, message)
  }
  answer = toolUse('get_weather')
  const { ok } = await call(host, id, 'raw', { params: { messages: [question], tools: [weather], maxTokens: 9 } })
  assert.deepEqual(ok.content, [{ type: 'tool_use', id: 'x', name: 'get_weather', input: {} }])
})

test('handlers.sampling as {handler, tools}: a wrong registration names the field', (t) => {
  const dataDir = tmpDir(t)
  const cases = [
    [{ sampling: { tools: true } }, /^options\.handlers\.sampling\.handler: must be a function, got undefined/],
    [{ sampling: { handler: async () => ({}), tools: 'yes' } }, /^options\.handlers\.sampling\.tools: must be a boolean/],
    [{ sampling: { handler: async () => ({}), model: 'x' } }, /^options\.handlers\.sampling\.model: unknown field `model`/],
    [{ sampling: 5 }, /^options\.handlers\.sampling: must be a function or \{handler, tools\?\}/],
  ]
  for (const [handlers, message] of cases) {
    assert.throws(() => new McpHost({ dataDir, handlers }), (e) => e instanceof HostError && e.code === 'invalid_argument' && message.test(e.message))
  }
  new McpHost({ dataDir, handlers: { sampling: { handler: async () => ({}) } } }).disposeSync()
})
