// What real Streamable HTTP servers send at the edges (issue 24, item 14):
// a result over the HTTP response cap, a tool that runs only as a task,
// relative icon URLs; and a `"type": "http"` entry. Fixture:
// fixtures/http-edge-server.mjs on 127.0.0.1.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, startHttpFixture, callText, findCustomization } from './helpers/host.mjs'

async function edgeServer(t, options = {}) {
  const server = await startHttpFixture(t, 'http-edge-server.mjs')
  const made = newHost(t, options)
  const id = await made.host.addServer({ name: 'edge', config: { type: 'streamable-http', url: server.url } })
  await waitState(made.host, id, 'ready')
  return { ...made, id, server }
}

test('a result over the HTTP response cap fails limit_exceeded, as over stdio; the server stays usable', async (t) => {
  const { host, id } = await edgeServer(t)
  for (const name of ['big_json', 'big_sse']) {
    await assert.rejects(host.callTool({ serverId: id, name, timeoutMs: 60_000 }), (e) => {
      assert.equal(e.code, 'limit_exceeded', `${name}: ${e.code} ${e.message}`)
      assert.match(e.message, /HTTP response limit/)
      return true
    })
  }
  assert.equal(await callText(host, id, 'echo', { text: 'still here' }), 'still here')
})

test('"type": "http" (the VS Code / Claude Code name) is refused with a "did you mean streamable-http" hint', async (t) => {
  const { host } = newHost(t)
  await assert.rejects(host.addServer({ name: 'vsc', config: { type: 'http', url: 'https://mcp.example.test/mcp' } }), (e) => {
    assert.equal(e.code, 'invalid_entry', e.message)
    assert.match(e.message, /did you mean "streamable-http"\?/)
    return true
  })
})

test('a relative serverInfo icon src is resolved against the server URL', async (t) => {
  const { host, id, server } = await edgeServer(t)
  const icons = findCustomization(host.getState(), id)?.icons
  assert.deepEqual(icons?.map((i) => i.src), [`${server.base}/static/icon.png`, 'https://cdn.example.test/edge.png'])
})
