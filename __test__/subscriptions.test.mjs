// Changes and caching in both eras (issue 10, "Subscriptions and caching").
//
// 2025 era (SDK v1 fixture legacy-changes-server.mjs): free-standing
// notifications/*/list_changed, resources/subscribe + notifications/resources/updated.
// 2026-07-28 (SDK v2 fixture listen-server.mjs, stdio and Streamable HTTP):
// nothing arrives unasked; the host keeps a subscriptions/listen stream open
// for the list changes the server declared and one per subscribed resource,
// reopens them when they end, and closes them when the server stops.
// Either way the catalogue, `toolsChanged`, `listChanged` and
// `resourceUpdated` behave the same. Results carrying `ttlMs` (SEP-2549) are
// reused without a request until a change notification makes them stale.
//
// The fixtures have one tool surface: add_tool, notify, bump, stats (the
// requests they received, the listen streams open now) and, in 2026-07-28,
// end_listens (the server ends every listen stream).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  newHost, fixtureEntry, waitState, waitFor, startHttpFixture, callText, rejectsWith, NODE, FIXTURES,
} from './helpers/host.mjs'
import { join } from 'node:path'

const LISTS = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }
const A = 'counter://a'
const B = 'counter://b'

const ERAS = [
  { name: '2025-11-25 (SDK v1, stdio)', version: '2025-11-25', config: async () => fixtureEntry('legacy-changes-server.mjs') },
  { name: '2026-07-28 (SDK v2, stdio)', version: '2026-07-28', config: async (t, env) => stdioV2(env) },
  {
    name: '2026-07-28 (SDK v2, Streamable HTTP)',
    version: '2026-07-28',
    http: true,
    config: async (t, env) => {
      const server = await startHttpFixture(t, 'listen-server.mjs', env, ['http'])
      return { type: 'streamable-http', url: server.url, server }
    },
  },
]
const MODERN = ERAS.filter((e) => e.version === '2026-07-28')

function stdioV2(env = {}) {
  return { type: 'stdio', command: NODE, args: [join(FIXTURES, 'listen-server.mjs'), 'stdio'], env }
}

/** Adds the era's server; resolves `{host, id, events, logs, server}` once it is ready. */
async function start(t, era, env = {}) {
  const { host, logs, actions } = newHost(t)
  const { server, ...config } = await era.config(t, env)
  const events = []
  for (const name of ['toolsChanged', 'listChanged', 'resourceUpdated']) {
    host.on(name, (e) => events.push({ event: name, ...e }))
  }
  const id = await host.addServer({ name: 'changes', config })
  await waitState(host, id, 'ready')
  assert.equal(host.serverInfo(id).protocolVersion, era.version)
  return { host, id, events, logs, actions, server }
}

const stats = async (host, id) => JSON.parse(await callText(host, id, 'stats'))
const of = (events, id, event) => events.filter((e) => e.serverId === id && e.event === event)

for (const era of ERAS) {
  test(`${era.name}: a tools change re-lists the catalogue; toolsChanged says listChanged`, async (t) => {
    const { host, id, events } = await start(t, era)
    const tools = () => host.listTools().filter((x) => x.customizationId === id).map((x) => x.toolName).sort()
    assert.ok(!tools().includes('fresh'))
    assert.equal(await callText(host, id, 'add_tool', { name: 'fresh' }), 'added:fresh')
    await waitFor(() => tools().includes('fresh'), { what: 'fresh to be listed', describe: () => JSON.stringify(tools()) })
    // The event reaches JS after the catalogue shows the change: wait for it.
    const listChanged = () => of(events, id, 'toolsChanged').filter((e) => e.reason === 'listChanged')
    await waitFor(() => listChanged().length > 0, { what: 'the toolsChanged event', describe: () => JSON.stringify(events) })
    const changed = listChanged()
    assert.equal(changed.length, 1, JSON.stringify(events))
    assert.equal(changed[0].tools, tools().length)
    assert.equal(await callText(host, id, 'fresh'), 'dynamic:fresh')
    // A second change is followed as well.
    await callText(host, id, 'add_tool', { name: 'second' })
    await waitFor(() => tools().includes('second'), { what: 'second to be listed' })
  })

  test(`${era.name}: prompts and resources list changes become listChanged events`, async (t) => {
    const { host, id, events } = await start(t, era)
    assert.equal(await callText(host, id, 'notify', { list: 'prompts' }), 'notified:prompts')
    await waitFor(() => of(events, id, 'listChanged').length >= 1, { what: 'prompts listChanged' })
    assert.equal(await callText(host, id, 'notify', { list: 'resources' }), 'notified:resources')
    await waitFor(() => of(events, id, 'listChanged').length >= 2, { what: 'resources listChanged' })
    assert.deepEqual(of(events, id, 'listChanged'), [
      { event: 'listChanged', serverId: id, list: 'prompts' },
      { event: 'listChanged', serverId: id, list: 'resources' },
    ])
  })

  test(`${era.name}: subscribeResource: updates arrive as resourceUpdated, none after unsubscribeResource`, async (t) => {
    const { host, id, events } = await start(t, era)
    const updates = () => of(events, id, 'resourceUpdated').map((e) => e.uri)
    await host.subscribeResource(id, A)
    await host.subscribeResource(id, B)
    await host.subscribeResource(id, A) // again: a no-op
    await callText(host, id, 'bump', { uri: A })
    await waitFor(() => updates().length >= 1, { what: 'the update of a' })
    assert.deepEqual(updates(), [A])
    assert.deepEqual(of(events, id, 'resourceUpdated')[0], { event: 'resourceUpdated', serverId: id, uri: A })
    assert.match((await host.readResource(id, A)).contents[0].text, /^counter:\/\/a 1$/)

    await host.unsubscribeResource(id, A)
    await host.unsubscribeResource(id, A) // again: a no-op
    const seen = await stats(host, id)
    if (era.version === '2025-11-25') {
      assert.deepEqual(seen.subscribed, [B])
      assert.equal(seen.counts['resources/subscribe'], 2)
      assert.equal(seen.counts['resources/unsubscribe'], 1)
      assert.equal(seen.counts['subscriptions/listen'], undefined)
    } else {
      // The list changes stream and b's stream are open; a's was cancelled.
      await waitFor(async () => (await stats(host, id)).listens.length === 2, { what: "a's stream to be closed" })
      assert.deepEqual((await stats(host, id)).listens, [LISTS, { resourceSubscriptions: [B] }])
      assert.equal(seen.counts['resources/subscribe'], undefined)
    }
    await callText(host, id, 'bump', { uri: A })
    await callText(host, id, 'bump', { uri: B })
    await waitFor(() => updates().length >= 2, { what: 'the update of b' })
    if (!era.http) {
      // One channel (stdio): b's update came after a's second bump.
      assert.deepEqual(updates(), [A, B])
    }
    // A's second bump is nowhere (HTTP: b's update travels on another stream, so check again after a round trip).
    await stats(host, id)
    assert.deepEqual(updates(), [A, B])
  })

  test(`${era.name}: subscriptions are kept across a restart of the server`, async (t) => {
    const { host, id, events } = await start(t, era)
    await host.subscribeResource(id, B)
    host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'c', clientSeq: 1 })
    await waitState(host, id, 'stopped')
    // The echo's reducer says `stopped` at once; the actor withdraws the tools once the connection is closed.
    await waitFor(() => !host.listTools().some((x) => x.customizationId === id), { what: 'the connection to be closed' })
    await rejectsWith(() => host.subscribeResource(id, A), 'server_not_ready')
    host.dispatch({ type: 'session/mcpServerStartRequested', id }, { clientId: 'c', clientSeq: 2 })
    await waitState(host, id, 'ready')
    await waitFor(async () => {
      const seen = await stats(host, id)
      return era.version === '2025-11-25' ? seen.subscribed.includes(B) : seen.listens.length === 2
    }, { what: 'b subscribed again on the new connection' })
    await callText(host, id, 'bump', { uri: B })
    await waitFor(() => of(events, id, 'resourceUpdated').length >= 1, { what: 'the update of b' })
    assert.deepEqual(of(events, id, 'resourceUpdated').map((e) => e.uri), [B])
  })
}

for (const era of MODERN) {
  test(`${era.name}: one subscriptions/listen stream for the declared list changes, one per subscribed resource`, async (t) => {
    const { host, id } = await start(t, era)
    await waitFor(async () => (await stats(host, id)).listens.length === 1, { what: 'the list changes stream' })
    assert.deepEqual((await stats(host, id)).listens, [LISTS])
    await host.subscribeResource(id, A)
    const seen = await stats(host, id)
    assert.deepEqual(seen.listens, [LISTS, { resourceSubscriptions: [A] }])
    assert.equal(seen.counts['subscriptions/listen'], 2)
  })

  test(`${era.name}: a stream the server ends is opened again, and changes keep arriving`, async (t) => {
    const { host, id, events, logs } = await start(t, era)
    await host.subscribeResource(id, A)
    await waitFor(async () => (await stats(host, id)).listens.length === 2, { what: 'two streams' })
    assert.equal(await callText(host, id, 'end_listens'), 'ended:2')
    await waitFor(async () => (await stats(host, id)).counts['subscriptions/listen'] === 4, {
      what: 'both streams opened again',
      describe: () => JSON.stringify(logs.filter((l) => l.target === 'host.listen')),
    })
    await waitFor(async () => (await stats(host, id)).listens.length === 2, { what: 'two streams again' })
    assert.ok(logs.some((l) => l.target === 'host.listen' && l.serverId === id && /opening it again/.test(l.message)))
    await callText(host, id, 'add_tool', { name: 'after_reopen' })
    await waitFor(() => host.listTools().some((x) => x.customizationId === id && x.toolName === 'after_reopen'), {
      what: 'the tool added after the reopen',
    })
    await callText(host, id, 'bump', { uri: A })
    await waitFor(() => of(events, id, 'resourceUpdated').length >= 1, { what: 'the update after the reopen' })
  })
}

test('2026-07-28 (SDK v2, Streamable HTTP): stopping the server closes its listen streams; starting it opens them again', async (t) => {
  const era = MODERN.find((e) => e.http)
  const { host, id, server } = await start(t, era)
  await host.subscribeResource(id, A)
  await waitFor(async () => (await server.stats()).listens.length === 2, { what: 'two streams' })
  host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'c', clientSeq: 1 })
  await waitState(host, id, 'stopped')
  await waitFor(async () => (await server.stats()).listens.length === 0, { what: 'no stream left open' })
  const opened = (await server.stats()).counts['subscriptions/listen']
  host.dispatch({ type: 'session/mcpServerStartRequested', id }, { clientId: 'c', clientSeq: 2 })
  await waitState(host, id, 'ready')
  await waitFor(async () => (await server.stats()).listens.length === 2, { what: 'both streams opened again' })
  assert.equal((await server.stats()).counts['subscriptions/listen'], opened + 2)
})

for (const era of MODERN) {
  test(`${era.name}: results with ttlMs are reused until a change notification makes them stale`, async (t) => {
    const { host, id, events } = await start(t, era)
    const count = async (method) => (await stats(host, id)).counts[method] ?? 0
    // Lists: a second walk within the TTL sends nothing.
    assert.equal((await host.listResources(id)).length, 2)
    assert.equal((await host.listResources(id)).length, 2)
    assert.equal(await count('resources/list'), 1)
    await host.listPrompts(id)
    await host.listPrompts(id)
    assert.equal(await count('prompts/list'), 1)
    await host.listResourceTemplates(id)
    await host.listResourceTemplates(id)
    assert.equal(await count('resources/templates/list'), 1)
    // Reads, by URI; the reused result's ttlMs is the time it has left.
    const first = await host.readResource(id, A)
    assert.equal(first.ttlMs, 60000)
    const again = await host.readResource(id, A)
    assert.deepEqual(again.contents, first.contents)
    assert.ok(again.ttlMs <= 60000 && again.ttlMs >= 0, `ttlMs ${again.ttlMs}`)
    await host.readResource(id, B)
    assert.equal(await count('resources/read'), 2)

    // resources/list_changed: the lists go, reads stay.
    await callText(host, id, 'notify', { list: 'resources' })
    await waitFor(() => of(events, id, 'listChanged').length === 1, { what: 'resources listChanged' })
    await host.listResources(id)
    await host.listResourceTemplates(id)
    await host.readResource(id, A)
    assert.equal(await count('resources/list'), 2)
    assert.equal(await count('resources/templates/list'), 2)
    assert.equal(await count('resources/read'), 2)

    // resources/updated: that read goes.
    await host.subscribeResource(id, A)
    await callText(host, id, 'bump', { uri: A })
    await waitFor(() => of(events, id, 'resourceUpdated').length === 1, { what: 'resourceUpdated' })
    assert.match((await host.readResource(id, A)).contents[0].text, /^counter:\/\/a 1$/)
    assert.equal(await count('resources/read'), 3)
    await host.readResource(id, B)
    assert.equal(await count('resources/read'), 3)

    // prompts/list_changed.
    await callText(host, id, 'notify', { list: 'prompts' })
    await waitFor(() => of(events, id, 'listChanged').length === 2, { what: 'prompts listChanged' })
    await host.listPrompts(id)
    assert.equal(await count('prompts/list'), 2)

    // tools/list carries a TTL too: a tools change still re-lists.
    const toolLists = await count('tools/list')
    await callText(host, id, 'add_tool', { name: 'cached_fresh' })
    await waitFor(() => host.listTools().some((x) => x.customizationId === id && x.toolName === 'cached_fresh'), {
      what: 'cached_fresh to be listed',
    })
    assert.equal(await count('tools/list'), toolLists + 1)
  })
}

test('ttlMs 0 (2026-07-28) and no ttlMs (2025 era): every list and read is sent', async (t) => {
  for (const era of [ERAS[0], ERAS[1]]) {
    const { host, id } = await start(t, era, { TTL_MS: '0' })
    await host.listResources(id)
    await host.listResources(id)
    await host.readResource(id, A)
    await host.readResource(id, A)
    const { counts } = await stats(host, id)
    assert.equal(counts['resources/list'], 2, era.name)
    assert.equal(counts['resources/read'], 2, era.name)
  }
})

test('subscribeResource errors: not_supported without resources.subscribe, not_found, invalid_argument', async (t) => {
  const { host } = newHost(t)
  const modern = await host.addServer({ name: 'modern', config: fixtureEntry('modern-server.mjs', ['stdio']) })
  const legacy = await host.addServer({ name: 'legacy', config: fixtureEntry('tools-server.mjs') })
  for (const id of [modern, legacy]) {
    await waitState(host, id, 'ready')
    const err = await rejectsWith(() => host.subscribeResource(id, A), 'not_supported')
    assert.match(err.message, new RegExp(`${id}.*resources\\.subscribe`), err.message)
  }
  await rejectsWith(() => host.subscribeResource('nope', A), 'not_found')
  await rejectsWith(() => host.unsubscribeResource('nope', A), 'not_found')
  await rejectsWith(() => host.subscribeResource(modern, ''), 'invalid_argument')
  await rejectsWith(() => host.subscribeResource(modern, 'x'.repeat(8 * 1024 + 1)), 'invalid_argument')
})
