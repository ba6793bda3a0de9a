// Tools marked with the MCP 2025-11-25 `execution` member (issue 24, item 14):
// rmcp's typed `Tool` drops the member, so the host keeps the raw one; a
// tool with `execution.taskSupport: "required"` runs only as a
// task-augmented `tools/call`, which the host does not send, so it is kept
// out of the model catalogue with an `omitted` diagnostic. Fixtures:
// fixtures/task-support-server.mjs (raw stdio) and
// fixtures/http-edge-server.mjs (raw Streamable HTTP on 127.0.0.1, its
// `tools/list` sent as an SSE event).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, fixtureEntry, waitState, startHttpFixture } from './helpers/host.mjs'

const ofServer = (tools, id) => tools.filter((t) => t.customizationId === id)

function assertTaskRequiredLeftOut(host, id, required, optional) {
  const tools = ofServer(host.listTools(), id)
  const names = tools.map((t) => t.toolName)
  assert.ok(!names.includes(required), `a task-required tool is not offered to the model: ${names}`)
  const maybe = tools.find((t) => t.toolName === optional)
  assert.deepEqual(maybe?.execution, { taskSupport: 'optional' }, `execution reaches the definition: ${JSON.stringify(maybe)}`)
  const diags = host.toolDiagnostics().filter((d) => d.serverId === id && d.tool === required)
  assert.equal(diags.length, 1, `diagnostics: ${JSON.stringify(host.toolDiagnostics())}`)
  assert.equal(diags[0].action, 'omitted')
  assert.match(diags[0].reason, /execution\.taskSupport is "required"/)
  assert.match(diags[0].reason, /task-augmented tools\/call/)
}

test('stdio: the raw execution member reaches the catalogue; a task-required tool is left out with a diagnostic', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'ts', config: fixtureEntry('task-support-server.mjs') })
  await waitState(host, id, 'ready')
  assertTaskRequiredLeftOut(host, id, 'long_job', 'maybe_task')
  const plain = ofServer(host.listTools(), id).find((t) => t.toolName === 'plain')
  assert.equal(plain?.execution, undefined)
  const ran = await host.callTool({ serverId: id, name: 'maybe_task' })
  assert.equal(ran.content[0].text, 'ran maybe_task')
})

test('Streamable HTTP (tools/list as an SSE event): the same', async (t) => {
  const server = await startHttpFixture(t, 'http-edge-server.mjs')
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'edge', config: { type: 'streamable-http', url: `${server.url}?lists=sse` } })
  await waitState(host, id, 'ready')
  const names = ofServer(host.listTools(), id).map((t) => t.toolName)
  assert.ok(names.includes('echo'), `${names}`)
  assert.ok(!names.includes('long_job'), `a task-required tool is not offered to the model: ${names}`)
  const diags = host.toolDiagnostics().filter((d) => d.serverId === id && d.tool === 'long_job')
  assert.equal(diags.length, 1, `diagnostics: ${JSON.stringify(host.toolDiagnostics())}`)
  assert.match(diags[0].reason, /execution\.taskSupport is "required"/)
})
