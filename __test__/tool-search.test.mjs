// Issue 29, item 3: tool search and deferred definitions (searchTools,
// listToolSummaries, getToolDefinitions) against the MCP reference server
// (@modelcontextprotocol/server-everything), with a tool filter on a
// second instance: filtered tools are never found nor defined.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, everythingEntry, waitState } from './helpers/host.mjs'

const throwsCode = (fn, code) => assert.throws(fn, (e) => e.code === code, `expected ${code}`)
const key = (x) => `${x.customizationId}/${x.toolName}`

test('searchTools ranks server-everything tools, respects limit and serverIds, never finds filtered tools', async (t) => {
  const { host } = newHost(t)
  const all = await host.addServer({ name: 'all', config: everythingEntry() })
  const some = await host.addServer({ name: 'some', config: everythingEntry(), excludeTools: ['echo'] })
  await Promise.all([waitState(host, all, 'ready', { timeout: 60_000 }), waitState(host, some, 'ready', { timeout: 60_000 })])

  const echo = host.searchTools('echo')
  assert.equal(key(echo[0]), `${all}/echo`, echo.map(key).join())
  assert.ok(!echo.some((r) => key(r) === `${some}/echo`), 'the filtered echo is not found')
  assert.ok(echo.every((r, i) => i === 0 || r.score <= echo[i - 1].score), 'best first')
  assert.ok(echo.every((r) => r.inputSchema === undefined && r.estimatedTokens > 0))

  const gets = host.searchTools('get')
  assert.ok(gets.length > 2, gets.map(key).join())
  assert.equal(host.searchTools('get', { limit: 2 }).length, 2)
  assert.deepEqual(host.searchTools('get', { limit: 2 }), gets.slice(0, 2))
  const onlySome = host.searchTools('get', { serverIds: [some] })
  assert.ok(onlySome.length > 0 && onlySome.every((r) => r.customizationId === some))
  assert.deepEqual(host.searchTools('echo', { serverIds: [some] }).map((r) => r.toolName).filter((n) => n === 'echo'), [])
  assert.deepEqual(host.searchTools('echo', { serverIds: ['nobody'] }), [])
  assert.deepEqual(host.searchTools('zzqqxxjj'), [])

  // Switched on, the tool is found; off again, it is gone.
  assert.equal(host.setToolEnabled({ serverId: some, tool: 'echo', enabled: true }), true)
  assert.ok(host.searchTools('echo', { serverIds: [some] }).some((r) => r.toolName === 'echo'))
  host.setToolEnabled({ serverId: some, tool: 'echo', enabled: false })
  assert.ok(!host.searchTools('echo').some((r) => key(r) === `${some}/echo`))

  throwsCode(() => host.searchTools(5), 'invalid_argument')
  throwsCode(() => host.searchTools('echo', { limit: 0 }), 'invalid_argument')
  throwsCode(() => host.searchTools('echo', { limit: 1001 }), 'invalid_argument')
  throwsCode(() => host.searchTools('echo', { limit: 1.5 }), 'invalid_argument')
  throwsCode(() => host.searchTools('echo', { serverIds: 'all' }), 'invalid_argument')
  throwsCode(() => host.searchTools('echo', { other: 1 }), 'invalid_argument')
  throwsCode(() => host.searchTools('x'.repeat(1025)), 'invalid_argument')
})

test('listToolSummaries has no schemas and a token estimate; getToolDefinitions gives listTools entries, leaving unknown and filtered names out', async (t) => {
  const { host } = newHost(t)
  const all = await host.addServer({ name: 'all', config: everythingEntry() })
  const some = await host.addServer({ name: 'some', config: everythingEntry(), excludeTools: ['echo'] })
  await Promise.all([waitState(host, all, 'ready', { timeout: 60_000 }), waitState(host, some, 'ready', { timeout: 60_000 })])

  const tools = host.listTools()
  const summaries = host.listToolSummaries()
  assert.deepEqual(summaries.map((s) => s.name), tools.map((x) => x.name))
  assert.ok(!summaries.some((s) => key(s) === `${some}/echo`), 'the filtered echo has no summary')
  for (const [i, s] of summaries.entries()) {
    const full = tools[i]
    assert.equal(s.inputSchema, undefined)
    assert.equal(s.outputSchema, undefined)
    assert.deepEqual([s.customizationId, s.toolName, s.digest], [full.customizationId, full.toolName, full.digest])
    const bytes = Buffer.byteLength(JSON.stringify(full))
    assert.ok(s.estimatedTokens > 0 && Math.abs(s.estimatedTokens - bytes / 4) <= bytes / 40 + 1, `${s.name}: ${s.estimatedTokens} for ${bytes} bytes`)
    if (s.description !== undefined) assert.ok(!s.description.includes('\n') && s.description.length <= 200)
  }

  const echoName = tools.find((x) => key(x) === `${all}/echo`).name
  const sum = tools.find((x) => key(x) === `${all}/get-sum`)
  const defs = host.getToolDefinitions([sum.name, 'mcp__nope__x', echoName, sum.name, `mcp__some__echo`])
  assert.deepEqual(defs, [sum, tools.find((x) => x.name === echoName)])
  assert.deepEqual(host.getToolDefinitions([]), [])
  throwsCode(() => host.getToolDefinitions('x'), 'invalid_argument')
  throwsCode(() => host.getToolDefinitions([1]), 'invalid_argument')
  throwsCode(() => host.getToolDefinitions(Array(1001).fill('x')), 'invalid_argument')

  // search → fetch definitions → call, by the model-safe name.
  const [hit] = host.searchTools('echo', { limit: 1 })
  const [def] = host.getToolDefinitions([hit.name])
  assert.ok(def.inputSchema.properties.message, JSON.stringify(def.inputSchema))
  const result = await host.callTool({ name: def.name, arguments: { message: 'deferred' }, digest: def.digest })
  assert.match(result.content[0].text, /deferred/)
})
