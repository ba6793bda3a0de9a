// The model-safe tool catalogue: names (sanitized, hashed on length or
// collision, deterministic), schema normalization and its diagnostics,
// duplicates, app-only tools, stale-tool checks, the toolsChanged event and
// session/serverToolsChanged, and the size bounds of a listing. Driven by
// fixtures/catalogue-server.mjs (raw JSON-RPC, so nothing reshapes the tools).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import v8 from 'node:v8'
import vm from 'node:vm'
import { newHost, fixtureEntry, waitState, waitFor, HostError, rejectsWith } from './helpers/host.mjs'
import { replaySession } from './helpers/replay.mjs'

const MODEL_SAFE = /^[A-Za-z0-9_-]{1,64}$/
const NAME_100 = 'abcdefghijklmnopqrstuvwxyz'.repeat(4).slice(0, 100)
const ODD_LISTED = ['admin.tools.list', 'admin_tools_list', NAME_100, 'café/日本', 'dup', 'model_and_app', 'plain']

// The naming rule of index.d.ts `HostTool.name`, written out independently.
const sanitize = (s) => [...s].map((c) => (/^[A-Za-z0-9_-]$/.test(c) ? c : '_')).join('')
const plainName = (serverId, tool) => `mcp__${sanitize(serverId)}__${sanitize(tool)}`
const hashedName = (serverId, tool) =>
  `${plainName(serverId, tool).slice(0, 53)}_${createHash('sha256').update(serverId).update('\0').update(tool).digest('hex').slice(0, 10)}`

/** Expected catalogue names of `[serverId, toolName]` pairs, keyed `serverId\0toolName`. */
function expectedNames(pairs) {
  const count = new Map()
  for (const [s, t] of pairs) count.set(plainName(s, t), (count.get(plainName(s, t)) ?? 0) + 1)
  return new Map(pairs.map(([s, t]) => {
    const p = plainName(s, t)
    return [`${s}\0${t}`, p.length > 64 || count.get(p) > 1 ? hashedName(s, t) : p]
  }))
}

/** Catalogue names keyed `customizationId\0toolName`. */
const namesByTool = (tools) => new Map(tools.map((t) => [`${t.customizationId}\0${t.toolName}`, t.name]))
const ofServer = (tools, id) => tools.filter((t) => t.customizationId === id)

/** Adds a catalogue-server in `mode` and waits until it is ready. */
async function addCatalogue(host, name, mode, env = {}) {
  const id = await host.addServer({ name, config: { ...fixtureEntry('catalogue-server.mjs'), env: { MODE: mode, ...env } } })
  assert.equal(id, name)
  await waitState(host, id, 'ready')
  return id
}

/** Records the host's toolsChanged events. */
function recordToolsChanged(host) {
  const events = []
  host.on('toolsChanged', (e) => events.push(e))
  return events
}


test('odd and colliding names on three servers: model-safe, unique, exact, deterministic, callable', async (t) => {
  const { host } = newHost(t)
  // "odd.1" and "odd_1" sanitize to the same id, so every tool of the two collides across servers.
  for (const name of ['odd.1', 'odd_1', 'solo']) await addCatalogue(host, name, 'odd')
  await waitFor(() => host.listTools().length === 21, { what: '21 catalogue entries', describe: () => JSON.stringify(host.listTools().map((x) => x.name)) })

  const tools = host.listTools()
  const pairs = ['odd.1', 'odd_1', 'solo'].flatMap((s) => ODD_LISTED.map((tool) => [s, tool]))
  const expected = expectedNames(pairs)
  assert.deepEqual(namesByTool(tools), expected)
  for (const tool of tools) assert.match(tool.name, MODEL_SAFE)
  assert.equal(new Set(tools.map((x) => x.name)).size, 21, 'names are unique')

  // Spot checks of the rule's outcomes.
  const solo = (tool) => expected.get(`solo\0${tool}`)
  assert.equal(solo('plain'), 'mcp__solo__plain')
  assert.equal(solo('model_and_app'), 'mcp__solo__model_and_app')
  assert.equal(solo('café/日本'), 'mcp__solo__caf____')
  assert.notEqual(solo('admin.tools.list'), solo('admin_tools_list'))
  assert.match(solo('admin.tools.list'), /^mcp__solo__admin_tools_list_[0-9a-f]{10}$/)
  assert.match(solo('admin_tools_list'), /^mcp__solo__admin_tools_list_[0-9a-f]{10}$/)
  assert.equal(solo(NAME_100).length, 64)
  assert.equal(solo(NAME_100), `mcp__solo__${NAME_100.slice(0, 42)}_${hashedName('solo', NAME_100).slice(-10)}`)
  assert.notEqual(expected.get('odd.1\0plain'), expected.get('odd_1\0plain'))
  assert.match(expected.get('odd.1\0plain'), /^mcp__odd_1__plain_[0-9a-f]{10}$/)

  // Every entry keeps its server and original name, and a call by catalogue
  // name reaches that server with the original name byte for byte.
  for (const tool of tools) {
    const r = await host.callTool({ name: tool.name, arguments: { n: tool.name } })
    assert.equal(r.content[0].text, `called:${tool.toolName}`, `call of ${tool.name}`)
    assert.deepEqual(r.structuredContent, { name: tool.toolName, arguments: { n: tool.name } })
  }

  // Without odd_1, odd.1's names no longer collide and are plain again.
  await host.remove('odd_1')
  await waitFor(() => ofServer(host.listTools(), 'odd_1').length === 0, { what: 'odd_1 tools to leave the catalogue' })
  const alone = namesByTool(host.listTools())
  assert.deepEqual(alone, expectedNames(['odd.1', 'solo'].flatMap((s) => ODD_LISTED.map((tool) => [s, tool]))))
  assert.equal(alone.get('odd.1\0plain'), 'mcp__odd_1__plain')

  // Re-adding it gives exactly the names of the first time.
  await addCatalogue(host, 'odd_1', 'odd')
  await waitFor(() => host.listTools().length === 21, { what: '21 entries after re-adding odd_1' })
  assert.deepEqual(namesByTool(host.listTools()), expected)
})

test('a unicode name and a 100-character name: model-safe names, exact original name on call', async (t) => {
  const { host } = newHost(t)
  const id = await addCatalogue(host, 'u', 'odd')
  const tools = ofServer(host.listTools(), id)

  const cafe = tools.find((x) => x.toolName === 'café/日本')
  assert.ok(cafe, 'café/日本 is listed')
  assert.equal(cafe.name, 'mcp__u__caf____')
  assert.equal(cafe.customizationId, 'u')
  assert.equal(cafe.description, 'non-ASCII name with a slash')
  const r1 = await host.callTool({ name: 'mcp__u__caf____' })
  assert.equal(r1.content[0].text, 'called:café/日本')
  assert.equal(r1.structuredContent.name, 'café/日本')

  const long = tools.find((x) => x.toolName === NAME_100)
  assert.ok(long, 'the 100-character tool is listed')
  assert.equal(long.name.length, 64)
  assert.equal(long.name, hashedName('u', NAME_100))
  assert.equal(long.name, `mcp__u__${NAME_100.slice(0, 45)}_${createHash('sha256').update(`u\0${NAME_100}`).digest('hex').slice(0, 10)}`)
  const r2 = await host.callTool({ name: long.name })
  assert.equal(r2.content[0].text, `called:${NAME_100}`)

  // Every entry carries a 16-hex digest and an object input schema.
  for (const tool of tools) {
    assert.match(tool.digest, /^[0-9a-f]{16}$/)
    assert.deepEqual(tool.inputSchema, { type: 'object', properties: {} })
  }
})

test('a name listed twice: the first definition is kept, with one duplicate diagnostic', async (t) => {
  const { host } = newHost(t)
  const id = await addCatalogue(host, 'd', 'odd')
  const dups = ofServer(host.listTools(), id).filter((x) => x.toolName === 'dup')
  assert.equal(dups.length, 1)
  assert.equal(dups[0].name, 'mcp__d__dup')
  assert.equal(dups[0].description, 'first dup')

  const diags = host.toolDiagnostics().filter((d) => d.serverId === id)
  assert.equal(diags.length, 1, `diagnostics: ${JSON.stringify(diags)}`)
  assert.equal(diags[0].tool, 'dup')
  assert.equal(diags[0].action, 'duplicate')
  assert.equal(typeof diags[0].reason, 'string')
  assert.ok(diags[0].reason.length > 0)

  assert.equal((await host.callTool({ name: 'mcp__d__dup' })).content[0].text, 'called:dup')
})

test('app-only tools are not in the catalogue but are callable by serverId and original name', async (t) => {
  const { host, actions } = newHost(t)
  const id = await addCatalogue(host, 'apps', 'odd')
  const tools = ofServer(host.listTools(), id)
  assert.deepEqual(tools.map((x) => x.toolName).sort(), [...ODD_LISTED].sort())
  assert.ok(!tools.some((x) => x.toolName === 'app_only'))

  // Visible to model and app: listed, _meta kept.
  const both = tools.find((x) => x.toolName === 'model_and_app')
  assert.equal(both.name, 'mcp__apps__model_and_app')
  assert.deepEqual(both._meta, { ui: { visibility: ['model', 'app'] } })

  // Not published to the session either, and no diagnostic for it. (Actions
  // reach JS after getState() shows `ready`: wait for the publication.)
  await waitFor(() => actions.some((e) => e.action.type === 'session/serverToolsChanged'), { what: 'session/serverToolsChanged' })
  const published = actions.filter((e) => e.action.type === 'session/serverToolsChanged').at(-1).action.tools
  assert.ok(!published.some((d) => d._meta?.['ahp-mcp-host/source']?.toolName === 'app_only'))
  assert.ok(!host.toolDiagnostics().some((d) => d.tool === 'app_only'))

  const r = await host.callTool({ serverId: id, name: 'app_only', arguments: { x: 1 } })
  assert.equal(r.content[0].text, 'called:app_only')
  assert.deepEqual(r.structuredContent, { name: 'app_only', arguments: { x: 1 } })

  // Its would-be catalogue name does not exist.
  await rejectsWith(() => host.callTool({ name: 'mcp__apps__app_only' }), 'not_found')
})

test('invalid schemas: normalized, omitted or output schema dropped, each with its diagnostic', async (t) => {
  const { host } = newHost(t)
  const id = await addCatalogue(host, 'inv', 'invalid')
  const tools = ofServer(host.listTools(), id)
  const byTool = new Map(tools.map((x) => [x.toolName, x]))

  assert.deepEqual(tools.map((x) => x.toolName).sort(), ['bad_output', 'good', 'nested_required', 'no_schema', 'no_type', 'top_anyof'])
  assert.deepEqual(byTool.get('top_anyof').inputSchema, {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'number' } },
    required: ['a'],
  })
  assert.deepEqual(byTool.get('nested_required').inputSchema, { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] })
  assert.deepEqual(byTool.get('no_schema').inputSchema, { type: 'object', properties: {} })
  assert.deepEqual(byTool.get('no_type').inputSchema, { type: 'object', properties: { q: { type: 'string' } } })
  assert.deepEqual(byTool.get('bad_output').inputSchema, { type: 'object', properties: { q: { type: 'string' } } })
  assert.ok(!('outputSchema' in byTool.get('bad_output')), 'bad outputSchema dropped')
  assert.equal(byTool.get('bad_output').description, 'output schema is not an object')
  assert.deepEqual(byTool.get('good').inputSchema, { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] })

  const diags = host.toolDiagnostics().filter((d) => d.serverId === id)
  const summary = diags.map((d) => `${d.tool}:${d.action}`).sort()
  assert.deepEqual(summary, [
    'bad_output:outputSchemaDropped',
    'nested_required:normalized',
    'no_schema:normalized',
    'no_type:normalized',
    'string_type:omitted',
    'top_anyof:normalized',
    'top_anyof_mixed:omitted',
  ])
  const reason = (tool) => diags.find((d) => d.tool === tool).reason
  for (const tool of ['top_anyof', 'top_anyof_mixed', 'string_type', 'nested_required', 'no_schema', 'no_type']) {
    assert.match(reason(tool), /inputSchema/, `reason of ${tool} names the field`)
  }
  assert.match(reason('top_anyof'), /anyOf/)
  assert.match(reason('top_anyof_mixed'), /anyOf/)
  assert.match(reason('string_type'), /string/)
  assert.match(reason('nested_required'), /required/)
  assert.match(reason('bad_output'), /outputSchema/)

  // The server keeps its valid tools, callable by catalogue name.
  const r = await host.callTool({ name: 'mcp__inv__good', arguments: { q: 'hi' } })
  assert.deepEqual(r.structuredContent, { name: 'good', arguments: { q: 'hi' } })
  assert.equal((await host.callTool({ name: 'mcp__inv__top_anyof', arguments: { a: 'x' } })).content[0].text, 'called:top_anyof')
})

test('stale tools: a changed or removed tool fails with stale_tool until the catalogue is read again', async (t) => {
  const { host } = newHost(t)
  const events = recordToolsChanged(host)
  const id = await addCatalogue(host, 'chg', 'changing')
  const before = ofServer(host.listTools(), id)
  assert.deepEqual(before.map((x) => x.name), ['mcp__chg__t', 'mcp__chg__gone', 'mcp__chg__mutate'])
  const oldT = before.find((x) => x.toolName === 't')
  assert.deepEqual(oldT.inputSchema.properties, { a: { type: 'string' } })

  // Works while fresh.
  assert.equal((await host.callTool({ name: 'mcp__chg__t', arguments: { a: 'x' } })).content[0].text, 'called:t')

  assert.equal((await host.callTool({ name: 'mcp__chg__mutate' })).content[0].text, 'mutated')
  await waitFor(() => events.some((e) => e.serverId === id && e.reason === 'listChanged'), { what: 'toolsChanged listChanged' })

  const e1 = await rejectsWith(() => host.callTool({ name: 'mcp__chg__t', arguments: { a: 1 } }), 'stale_tool')
  assert.equal(e1.data.reason, 'changed')
  const e2 = await rejectsWith(() => host.callTool({ serverId: id, name: 't', arguments: { a: 1 } }), 'stale_tool')
  assert.equal(e2.data.reason, 'changed')
  const e3 = await rejectsWith(() => host.callTool({ serverId: id, name: 'gone' }), 'stale_tool')
  assert.equal(e3.data.reason, 'removed')
  await rejectsWith(() => host.callTool({ name: 'mcp__chg__gone' }), 'not_found')
  // An unchanged tool is not stale.
  assert.equal((await host.callTool({ serverId: id, name: 'mutate' })).content[0].text, 'mutated')

  // Reading the catalogue again makes the new definition callable.
  const after = ofServer(host.listTools(), id)
  assert.deepEqual(after.map((x) => x.name), ['mcp__chg__t', 'mcp__chg__mutate'])
  const newT = after.find((x) => x.toolName === 't')
  assert.deepEqual(newT.inputSchema.properties, { a: { type: 'number' } })
  assert.notEqual(newT.digest, oldT.digest)
  assert.equal(after.find((x) => x.toolName === 'mutate').digest, before.find((x) => x.toolName === 'mutate').digest)
  assert.equal((await host.callTool({ name: 'mcp__chg__t', arguments: { a: 1 } })).content[0].text, 'called:t')
  assert.equal((await host.callTool({ serverId: id, name: 't', arguments: { a: 2 } })).content[0].text, 'called:t')

  // An explicit digest wins over the last listTools(): the old one is stale, the new one works.
  const e4 = await rejectsWith(() => host.callTool({ name: 'mcp__chg__t', arguments: { a: 1 }, digest: oldT.digest }), 'stale_tool')
  assert.equal(e4.data.reason, 'changed')
  const e5 = await rejectsWith(() => host.callTool({ serverId: id, name: 't', arguments: { a: 1 }, digest: oldT.digest }), 'stale_tool')
  assert.equal(e5.data.reason, 'changed')
  assert.equal((await host.callTool({ name: 'mcp__chg__t', arguments: { a: 3 }, digest: newT.digest })).content[0].text, 'called:t')
})

/** The ToolDefinition a catalogue entry is published as in session/serverToolsChanged. */
function asDefinition(entry) {
  const { customizationId, toolName, digest, ...def } = entry
  return { ...def, _meta: { ...(def._meta ?? {}), 'ahp-mcp-host/source': { customizationId, toolName } } }
}

test('toolsChanged and session/serverToolsChanged follow every catalogue change; state.serverTools matches', async (t) => {
  const { host, actions } = newHost(t)
  const events = recordToolsChanged(host)
  const published = () => actions.filter((e) => e.action.type === 'session/serverToolsChanged').map((e) => e.action.tools)

  const chg = await addCatalogue(host, 'chg', 'changing')
  await waitFor(() => events.length >= 1, { what: 'first toolsChanged' })
  assert.deepEqual(events, [{ serverId: chg, reason: 'ready', tools: 3 }])
  assert.equal(published().length, 1)
  let catalogue = host.listTools()
  assert.deepEqual(published()[0], catalogue.map(asDefinition))
  assert.deepEqual(published()[0].map((d) => d.name), ['mcp__chg__t', 'mcp__chg__gone', 'mcp__chg__mutate'])
  assert.deepEqual(published()[0][1]._meta, { 'ahp-mcp-host/source': { customizationId: 'chg', toolName: 'gone' } })
  assert.deepEqual(host.getState().serverTools, published()[0])

  await host.callTool({ name: 'mcp__chg__mutate' })
  await waitFor(() => events.length >= 2, { what: 'toolsChanged after list_changed' })
  assert.deepEqual(events[1], { serverId: chg, reason: 'listChanged', tools: 2 })
  assert.equal(published().length, 2)
  catalogue = host.listTools()
  assert.deepEqual(published()[1], catalogue.map(asDefinition))
  assert.deepEqual(published()[1][0].inputSchema, { type: 'object', properties: { a: { type: 'number' } } })
  assert.deepEqual(host.getState().serverTools, published()[1])

  const inv = await addCatalogue(host, 'inv', 'invalid')
  await waitFor(() => events.length >= 3, { what: 'toolsChanged of the second server' })
  assert.deepEqual(events[2], { serverId: inv, reason: 'ready', tools: 8 })
  assert.equal(published().length, 3)
  assert.deepEqual(published()[2], host.listTools().map(asDefinition))
  assert.deepEqual(host.getState().serverTools, published()[2])

  await host.remove(chg)
  await waitFor(() => events.length >= 4, { what: 'toolsChanged after remove' })
  assert.deepEqual(events[3], { serverId: chg, reason: 'stopped', tools: 6 })
  assert.equal(published().length, 4)
  assert.deepEqual(published()[3], host.listTools().map(asDefinition))
  assert.ok(published()[3].every((d) => d._meta['ahp-mcp-host/source'].customizationId === 'inv'))
  assert.deepEqual(host.getState().serverTools, published()[3])
  assert.equal(events.length, 4, `events: ${JSON.stringify(events)}`)
})

test('a 1000-tool catalogue: listTools() has it when `ready` is seen, ready comes first, the actions replay to getState()', async (t) => {
  const { host, actions } = newHost(t)
  const events = recordToolsChanged(host)
  const isReady = (a) => a.type === 'session/mcpServerStateChanged' && a.id === 'big1k' && a.state.kind === 'ready'
  let atReady
  let toolsBeforeNextTick
  host.on('action', ({ action }) => {
    if (!isReady(action)) return
    atReady ??= ofServer(host.listTools(), 'big1k').length
    // The large tools action is delivered in a drain of its own, after this one.
    queueMicrotask(() => { toolsBeforeNextTick ??= actions.some((e) => e.action.type === 'session/serverToolsChanged') })
  })
  const id = await addCatalogue(host, 'big1k', 'big', { COUNT: '1000', PAGE_SIZE: '1000', SCHEMA_BYTES: '256' })
  await waitFor(() => atReady !== undefined && events.length >= 1, { what: '`ready` and toolsChanged' })
  assert.equal(atReady, 1000, 'the tools are listed before `ready` is published')
  assert.deepEqual(events, [{ serverId: id, reason: 'ready', tools: 1000 }])
  await waitFor(() => actions.some((e) => e.action.type === 'session/serverToolsChanged'), { what: 'session/serverToolsChanged' })
  const ready = actions.find((e) => isReady(e.action))
  const published = actions.filter((e) => e.action.type === 'session/serverToolsChanged')
  assert.equal(published.length, 1)
  assert.ok(ready.serverSeq < published[0].serverSeq, '`ready` is published before the tools action')
  assert.equal(toolsBeforeNextTick, false, 'the tools action did not hold back the drain that carried `ready`')
  assert.deepEqual(published[0].action.tools, host.listTools().map(asDefinition))
  assert.deepEqual(replaySession(actions, ready.channel), host.getState())
})

test('a big action nobody listens to is not kept alive in JS once delivered (no slice or RegExp match of its text outlives it)', async (t) => {
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  const heapUsed = () => { gc(); gc(); return process.memoryUsage().heapUsed }
  const { host } = newHost(t)
  host.removeAllListeners('action')
  const events = recordToolsChanged(host)
  const before = heapUsed()
  await addCatalogue(host, 'kept1k', 'big', { COUNT: '1000', PAGE_SIZE: '1000', SCHEMA_BYTES: '1024' })
  await waitFor(() => events.length >= 1, { what: 'toolsChanged' })
  const actionChars = JSON.stringify(host.getState().serverTools).length
  assert.ok(actionChars > 1_000_000, `a big action (${actionChars} chars)`)
  const grown = heapUsed() - before
  assert.ok(grown < actionChars / 2, `the JS heap grew by ${grown} bytes after an action of ${actionChars} chars was delivered unparsed`)
})

test('a 1000-tool action nobody listens to is not parsed in JS; whenReady still sees its serverSeq, a later listener gets the whole action', async (t) => {
  const { host } = newHost(t)
  host.removeAllListeners('action')
  // Counts JSON.parse calls on big action items (the native side's item text).
  const parse = JSON.parse
  let bigActionParses = 0
  JSON.parse = function (text, ...rest) {
    if (typeof text === 'string' && text.length >= 64 * 1024 && text.startsWith('{"event":"action"')) bigActionParses++
    return parse.call(this, text, ...rest)
  }
  t.after(() => { JSON.parse = parse })
  const env = { COUNT: '1000', PAGE_SIZE: '1000', SCHEMA_BYTES: '256' }
  const events = recordToolsChanged(host)
  const id = await addCatalogue(host, 'lazy1k', 'big', env)
  // toolsChanged is queued after the tools action: once it is here, so was the action.
  await waitFor(() => events.length >= 1, { what: 'toolsChanged' })
  assert.equal(bigActionParses, 0, 'no listener: the big action was not parsed')
  // The tools action is the last one: a waiter decided at its serverSeq settles.
  const last = host.getState()
  assert.equal(last.serverTools.length, 1000)
  await host.whenReady(id, { timeoutMs: 10_000 })
  assert.deepEqual(host.getState().serverTools, last.serverTools)

  const seen = []
  host.onAction((e) => seen.push(e))
  await host.remove(id)
  await addCatalogue(host, 'lazy1k2', 'big', env)
  await waitFor(() => seen.some((e) => e.action.type === 'session/serverToolsChanged' && e.action.tools.length === 1000), { what: 'the whole tools action' })
  assert.ok(bigActionParses >= 1)
  const published = seen.filter((e) => e.action.type === 'session/serverToolsChanged').at(-1)
  assert.deepEqual(published.action.tools, host.getState().serverTools)
  assert.equal(typeof published.serverSeq, 'number')
})

test('removeAllListeners() keeps the host\'s own hooks: an action listener added after it gets the whole tools action', async (t) => {
  const { host } = newHost(t)
  // Every listener goes, the host's hooks on newListener/removeListener included.
  host.removeAllListeners()
  const seen = []
  host.on('action', (e) => seen.push(e))
  const env = { COUNT: '1000', PAGE_SIZE: '1000', SCHEMA_BYTES: '64' }
  await addCatalogue(host, 'hooks1k', 'big', env)
  await waitFor(() => seen.some((e) => e.action.type === 'session/serverToolsChanged'), { what: 'the tools action' })
  const published = seen.filter((e) => e.action.type === 'session/serverToolsChanged').at(-1)
  assert.equal(published.action.tools.length, 1000, 'the payload, not its serverSeq alone')
  assert.deepEqual(published.action.tools, host.getState().serverTools)
  // The last listener gone: the next publication reaches JS as its serverSeq alone.
  host.removeAllListeners('action')
  const events = recordToolsChanged(host)
  const id = await addCatalogue(host, 'hooks1k2', 'big', env)
  await waitFor(() => events.length >= 1, { what: 'toolsChanged' })
  await host.whenReady(id, { timeoutMs: 10_000 })
  assert.equal(seen.filter((e) => e.action.type === 'session/serverToolsChanged').length, 1)
})

test('publishServerTools: false: toolsChanged fires, no session/serverToolsChanged is emitted', async (t) => {
  const { host, actions } = newHost(t, { publishServerTools: false })
  const events = recordToolsChanged(host)
  const id = await addCatalogue(host, 'chg', 'changing')
  await waitFor(() => events.length >= 1, { what: 'toolsChanged ready' })
  assert.deepEqual(events[0], { serverId: id, reason: 'ready', tools: 3 })
  assert.equal(ofServer(host.listTools(), id).length, 3)

  await host.callTool({ name: 'mcp__chg__mutate' })
  await waitFor(() => events.length >= 2, { what: 'toolsChanged listChanged' })
  assert.deepEqual(events[1], { serverId: id, reason: 'listChanged', tools: 2 })

  assert.deepEqual(actions.filter((e) => e.action.type === 'session/serverToolsChanged'), [])
  assert.equal((host.getState().serverTools ?? []).length, 0)
})

test('maxToolsPerServer: a 2000-tool listing over 1500 leaves the server ready with no tools and one diagnostic', async (t) => {
  const { host } = newHost(t, { limits: { maxToolsPerServer: 1500 } })
  const id = await addCatalogue(host, 'big', 'big')
  assert.deepEqual(ofServer(host.listTools(), id), [])
  const diags = host.toolDiagnostics().filter((d) => d.serverId === id)
  assert.equal(diags.length, 1, `diagnostics: ${JSON.stringify(diags)}`)
  assert.equal(diags[0].tool, '')
  assert.equal(diags[0].action, 'omitted')
  assert.match(diags[0].reason, /maxToolsPerServer/)
  // Still usable by serverId.
  assert.equal((await host.callTool({ serverId: id, name: 'tool_1999' })).content[0].text, 'called:tool_1999')
  assert.equal((await waitState(host, id, 'ready')).kind, 'ready')
})

test('default limits: all 2000 paginated tools are listed with distinct names', async (t) => {
  const { host } = newHost(t)
  const id = await addCatalogue(host, 'big', 'big')
  const tools = ofServer(host.listTools(), id)
  const expected = Array.from({ length: 2000 }, (_, i) => `tool_${String(i).padStart(4, '0')}`)
  assert.deepEqual(tools.map((x) => x.toolName), expected)
  assert.deepEqual(tools.map((x) => x.name), expected.map((n) => `mcp__big__${n}`))
  assert.equal(new Set(tools.map((x) => x.name)).size, 2000)
  assert.deepEqual(host.toolDiagnostics().filter((d) => d.serverId === id), [])
  assert.equal((await host.callTool({ name: 'mcp__big__tool_1999' })).content[0].text, 'called:tool_1999')
})

test('maxToolSchemaBytes: tools with larger schemas are omitted, smaller ones kept', async (t) => {
  const { host } = newHost(t, { limits: { maxToolSchemaBytes: 1000 } })
  const huge = await addCatalogue(host, 'huge', 'big', { COUNT: '3' }) // ~4096-byte schemas
  const small = await addCatalogue(host, 'small', 'big', { COUNT: '3', SCHEMA_BYTES: '300' })

  assert.deepEqual(ofServer(host.listTools(), huge), [])
  const diags = host.toolDiagnostics().filter((d) => d.serverId === huge)
  assert.deepEqual(diags.map((d) => `${d.tool}:${d.action}`), ['tool_0000:omitted', 'tool_0001:omitted', 'tool_0002:omitted'])
  for (const d of diags) {
    assert.match(d.reason, /maxToolSchemaBytes/)
    assert.ok(d.reason.includes('1000'), d.reason)
  }

  assert.deepEqual(ofServer(host.listTools(), small).map((x) => x.toolName), ['tool_0000', 'tool_0001', 'tool_0002'])
  assert.deepEqual(host.toolDiagnostics().filter((d) => d.serverId === small), [])
})

test('maxJsonDepth: a schema nested past the bound is omitted, the other tools stay', async (t) => {
  const { host } = newHost(t)
  // DEPTH=40 nests tool_0000's schema ~80 levels: parseable, past maxJsonDepth (64).
  const id = await host.addServer({ name: 'deep', config: { ...fixtureEntry('catalogue-server.mjs'), env: { MODE: 'big', COUNT: '3', DEPTH: '40' } } })
  await waitState(host, id, 'ready')
  assert.deepEqual(ofServer(host.listTools(), id).map((x) => x.toolName), ['tool_0001', 'tool_0002'])
  const diags = host.toolDiagnostics().filter((d) => d.serverId === id)
  assert.equal(diags.length, 1, `diagnostics: ${JSON.stringify(diags)}`)
  assert.equal(diags[0].tool, 'tool_0000')
  assert.equal(diags[0].action, 'omitted')
  assert.match(diags[0].reason, /maxJsonDepth \(64\)/)
})

test('a tools/list too deep to parse fails at once with a diagnostic; the server stays ready', async (t) => {
  const { host, logs } = newHost(t, { limits: { startupTimeoutMs: 120_000 } })
  // DEPTH=200 nests ~400 levels, past what a JSON-RPC message may have (128):
  // the reader discards it and the listing fails without waiting for a timeout.
  const id = await host.addServer({ name: 'deeper', config: { ...fixtureEntry('catalogue-server.mjs'), env: { MODE: 'big', COUNT: '3', DEPTH: '200' } } })
  await waitState(host, id, 'ready', { timeout: 60_000 })
  assert.deepEqual(ofServer(host.listTools(), id), [])
  const diags = host.toolDiagnostics().filter((d) => d.serverId === id)
  assert.equal(diags.length, 1, `diagnostics: ${JSON.stringify(diags)}`)
  assert.match(diags[0].reason, /levels deep/)
  assert.ok(logs.some((l) => l.serverId === id && l.target === 'host.stdio' && /discarded the response to request/.test(l.message)))
})

test('JSON Schema 2020-12 input schemas are kept as the server sent them; the documented normalizations still apply with a diagnostic', async (t) => {
  const { SCHEMA_2020 } = await import('./fixtures/schema-2020.mjs')
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'schemas', config: { ...fixtureEntry('catalogue-server.mjs'), env: { MODE: 'schema2020' } } })
  await waitState(host, id, 'ready')
  const modern = host.listTools().find((x) => x.toolName === 'modern')
  // Deep-equal and in the same key order, at every level ($ref not dereferenced).
  assert.equal(JSON.stringify(modern.inputSchema), JSON.stringify(SCHEMA_2020))
  assert.ok(!host.toolDiagnostics().some((d) => d.tool === 'modern'), JSON.stringify(host.toolDiagnostics()))
  const merged = host.listTools().find((x) => x.toolName === 'legacy_anyof')
  assert.equal(merged.inputSchema.type, 'object')
  assert.ok(host.toolDiagnostics().some((d) => d.tool === 'legacy_anyof'), 'the anyOf merge is reported')
})
