// Requests a server sends to the client (MCP "Client Features") go to the
// JS handlers; capabilities are declared only for registered handlers.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, fixtureEntry } from './helpers/host.mjs'

async function ask(host, id, tool) {
  const result = await host.callTool({ serverId: id, name: tool, arguments: {} })
  return JSON.parse(result.content[0].text)
}

test('with handlers: capabilities declared, answers come from JS, elicitation defaults filled (SEP-1034)', async (t) => {
  const seen = []
  const { host } = newHost(t, {
    handlers: {
      roots: async (params, ctx) => (seen.push(['roots', ctx.serverId]), { roots: [{ uri: 'file:///workspace', name: 'ws' }] }),
      sampling: async (params, ctx) => (seen.push(['sampling', ctx.serverId, params.messages[0].content.text]),
        { role: 'assistant', content: { type: 'text', text: 'hello back' }, model: 'test-model' }),
      elicitation: async (params, ctx) => (seen.push(['elicitation', ctx.serverId, params.message]), { action: 'accept', content: { email: 'ada@example.test', age: 7 } }),
    },
  })
  const id = await host.addServer({ name: 'req', config: fixtureEntry('requests-server.mjs') })
  await waitState(host, id, 'ready')
  const caps = await ask(host, id, 'caps')
  assert.deepEqual(Object.keys(caps).sort(), ['elicitation', 'roots', 'sampling'])
  assert.deepEqual((await ask(host, id, 'ask_roots')).ok.roots, [{ uri: 'file:///workspace', name: 'ws' }])
  assert.equal((await ask(host, id, 'ask_sampling')).ok.content.text, 'hello back')
  const elicited = (await ask(host, id, 'ask_elicit')).ok
  assert.equal(elicited.action, 'accept')
  assert.deepEqual(elicited.content, { name: 'Ada', age: 7, email: 'ada@example.test' })
  assert.deepEqual(seen.map((s) => s.slice(0, 2)), [['roots', id], ['sampling', id], ['elicitation', id]])
})

test('a handler that throws answers with an error, the server keeps working', async (t) => {
  const { host } = newHost(t, { handlers: { roots: async () => { throw new Error('no roots today') } } })
  const id = await host.addServer({ name: 'req', config: fixtureEntry('requests-server.mjs') })
  await waitState(host, id, 'ready')
  const answer = await ask(host, id, 'ask_roots')
  assert.ok(answer.error, JSON.stringify(answer))
  assert.match(answer.error.message, /no roots today/)
  assert.ok((await ask(host, id, 'caps')).roots)
})

test('without handlers: nothing declared; elicitation declined, sampling -32601, roots empty', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'req', config: fixtureEntry('requests-server.mjs') })
  await waitState(host, id, 'ready')
  assert.deepEqual(await ask(host, id, 'caps'), {})
  assert.deepEqual(await ask(host, id, 'ask_roots'), { ok: { roots: [] } })
  const sampling = await ask(host, id, 'ask_sampling')
  assert.equal(sampling.error?.code, -32601, JSON.stringify(sampling))
  // The SDK refuses to send an elicitation the client did not declare; a
  // server that sends one anyway is declined (see requests.rs).
  const elicit = await ask(host, id, 'ask_elicit')
  assert.ok(elicit.error || elicit.ok?.action === 'decline', JSON.stringify(elicit))
})
