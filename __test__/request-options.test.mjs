// Per-request options (`RequestOptions`: signal, timeoutMs) on every request
// method, `onProgress` on callTool, and one abort listener per AbortSignal
// whatever the number of requests sharing it (issue 14, item 5).
//
// The server (fixtures/request-options-server.mjs) never answers the
// requests below, so only an abort or a timeout ends them; it logs every
// request and every notifications/cancelled it receives.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { getEventListeners } from 'node:events'
import net from 'node:net'
import { newHost, waitState, waitFor, fixtureEntry, tmpDir, findCustomization, readJsonLines } from './helpers/host.mjs'
import { startOAuthWorld, redirectPort, startAuthorize } from './fixtures/oauth-world.mjs'

// A test that fails must fail, not hang (on main these requests ignore their options).
const LIMIT = { timeout: 60_000 }

async function optionsServer(t, hostOptions = {}) {
  // The host first: after hooks run in the order they were added, so the
  // host (and its server, which writes into the folder) is disposed before
  // the folder is removed.
  const { host, logs } = newHost(t, hostOptions)
  const file = join(tmpDir(t), 'requests.log')
  const entry = { ...fixtureEntry('request-options-server.mjs'), env: { REQ_LOG: file } }
  const id = await host.addServer({ name: 'ro', config: entry })
  await waitState(host, id, 'ready')
  return { host, id, file, logs }
}

// Each method family with a request the server never answers: [the MCP
// method the server sees (and its filter), how to start it].
const FAMILIES = {
  listResources: ['resources/list', (e) => e.cursor === 'p2', (host, id, o) => host.listResources(id, o)],
  listResourceTemplates: ['resources/templates/list', () => true, (host, id, o) => host.listResourceTemplates(id, o)],
  listPrompts: ['prompts/list', () => true, (host, id, o) => host.listPrompts(id, o)],
  readResource: ['resources/read', () => true, (host, id, o) => host.readResource(id, 'hang://r', o)],
  subscribeResource: ['resources/subscribe', () => true, (host, id, o) => host.subscribeResource(id, 'hang://s', o)],
  unsubscribeResource: ['resources/unsubscribe', () => true, async (host, id, o) => {
    await host.subscribeResource(id, 'ok://u')
    return host.unsubscribeResource(id, 'ok://u', o)
  }],
  readAppResource: ['resources/read', (e) => e.uri === 'ui://app/hang', (host, id, o) => host.readAppResource({ serverId: id, uri: 'ui://app/hang' }, o)],
  callTool: ['tools/call', (e) => e.name === 'wait', (host, id, o) => host.callTool({ serverId: id, name: 'wait', ...o })],
}

/** Starts `start`, waits until the server logged the request, returns [promise, its JSON-RPC id]. */
async function inFlight(file, method, filter, start) {
  const before = readJsonLines(file).length
  const pending = start()
  pending.catch(() => {})
  let entry
  await waitFor(() => (entry = readJsonLines(file).slice(before).find((e) => e.method === method && filter(e))), { what: `the server received ${method}` })
  return [pending, entry.requestId]
}

/** notifications/cancelled the server received for `requestId`. */
const cancelsOf = (file, requestId) => readJsonLines(file).filter((e) => 'cancelled' in e && e.cancelled === requestId).length

for (const [name, [method, filter, start]] of Object.entries(FAMILIES)) {
  test(`${name}: abort rejects cancelled (cause: the reason) and the server gets notifications/cancelled once; an aborted signal sends nothing`, LIMIT, async (t) => {
    const { host, id, file } = await optionsServer(t, { mcpApps: true })
    const controller = new AbortController()
    const reason = new Error(`stop ${name}`)
    const [pending, requestId] = await inFlight(file, method, filter, () => start(host, id, { signal: controller.signal }))
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1)
    controller.abort(reason)
    const err = await pending.then(() => assert.fail('it resolved'), (e) => e)
    assert.equal(err.name, 'HostError')
    assert.equal(err.code, 'cancelled', err.message)
    assert.equal(err.cause, reason)
    assert.match(err.message, new RegExp(`stop ${name}`))
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
    await waitFor(() => cancelsOf(file, requestId) > 0, { what: `notifications/cancelled for ${method}` })
    // An already-aborted signal rejects before anything is sent.
    const sent = () => readJsonLines(file).filter((e) => e.method === method && filter(e)).length
    const before = sent()
    await assert.rejects(start(host, id, { signal: controller.signal }), (e) => e.code === 'cancelled' && e.cause === reason)
    // The server keeps answering (and read everything before this answer).
    assert.equal((await host.callTool({ serverId: id, name: 'echo', arguments: { text: 'after' } })).content[0].text, 'after')
    assert.equal(sent(), before)
    assert.equal(cancelsOf(file, requestId), 1)
    if (name === 'listResources') {
      // The walk had its first page: the cancelled request was page 2.
      assert.ok(readJsonLines(file).some((e) => e.method === method && e.cursor === null))
    }
  })
}

for (const [name, [method, filter, start]] of Object.entries(FAMILIES)) {
  if (name === 'callTool') continue // its timeoutMs is the native inactivity limit (toolcall.test.mjs)
  test(`${name}: timeoutMs rejects timeout ({kind: 'total', ms}) and cancels the request upstream`, LIMIT, async (t) => {
    const { host, id, file } = await optionsServer(t, { mcpApps: true })
    const [pending, requestId] = await inFlight(file, method, filter, () => start(host, id, { timeoutMs: 300 }))
    const err = await pending.then(() => assert.fail('it resolved'), (e) => e)
    assert.equal(err.code, 'timeout', err.message)
    assert.deepEqual(err.data, { kind: 'total', ms: 300 })
    await waitFor(() => cancelsOf(file, requestId) > 0, { what: `notifications/cancelled for ${method}` })
  })
}

test('options are checked first: invalid_argument naming the field', LIMIT, async (t) => {
  const { host, id } = await optionsServer(t)
  const bad = [
    [() => host.listResources(id, { timeoutMs: -1 }), /^options\.timeoutMs: must be a positive number of ms/],
    [() => host.listPrompts(id, { timeoutMs: '5' }), /^options\.timeoutMs: must be a positive number of ms/],
    [() => host.readResource(id, 'x://y', { signal: {} }), /^options\.signal: must be an AbortSignal/],
    [() => host.addServer({ name: 'x', config: fixtureEntry('tools-server.mjs') }, 7), /^requestOptions: must be an object/],
    [() => host.readAppResource({ serverId: id, uri: 'ui://x' }, { timeoutMs: 0 }), /^requestOptions\.timeoutMs: must be a positive number of ms/],
    [() => host.remove(id, { timeoutMs: Infinity }), /^options\.timeoutMs: must be a positive number of ms/],
    [() => host.callTool({ serverId: id, name: 'echo', onProgress: 'no' }), /^onProgress: must be a function/],
    [() => host.callTool({ serverId: id, name: 'echo', signal: 'no' }), /^signal: must be an AbortSignal/],
    [() => host.authorize(id, { signal: 1 }), /^options\.signal: must be an AbortSignal/],
  ]
  for (const [call, message] of bad) {
    await assert.rejects(call(), (e) => e.code === 'invalid_argument' && message.test(e.message), String(message))
  }
})

test('addServer, addPlugin, remove, setRoots, authenticate: an aborted signal rejects cancelled before anything happens', LIMIT, async (t) => {
  const { host, id } = await optionsServer(t, { roots: [] })
  const controller = new AbortController()
  const reason = new Error('too late')
  controller.abort(reason)
  const signal = controller.signal
  const isCancelled = (e) => e.code === 'cancelled' && e.cause === reason && /too late/.test(e.message)
  await assert.rejects(host.addServer({ name: 'never', config: fixtureEntry('tools-server.mjs') }, { signal }), isCancelled)
  await assert.rejects(host.addPlugin({ name: 'never-plugin', root: tmpDir(t) }, { signal }), isCancelled)
  await assert.rejects(host.remove(id, { signal }), isCancelled)
  await assert.rejects(host.setRoots([{ uri: 'file:///never' }], { signal }), isCancelled)
  await assert.rejects(host.authenticate({ resource: 'http://127.0.0.1:1/x', token: 't' }, { signal }), isCancelled)
  const state = host.getState()
  assert.equal(findCustomization(state, 'never'), undefined)
  assert.equal(findCustomization(state, 'never-plugin'), undefined)
  assert.ok(findCustomization(state, id), 'the server was removed')
  // Not aborted: they work as before.
  const live = new AbortController().signal
  await host.setRoots([{ uri: 'file:///tmp' }], { signal: live, timeoutMs: 10_000 })
  const added = await host.addServer({ name: 'later', config: fixtureEntry('tools-server.mjs') }, { signal: live })
  assert.equal(await host.remove(added, { signal: live }), null)
  assert.equal(getEventListeners(live, 'abort').length, 0)
})

// rmcp hands each notification to a task of its own, so two progress
// notifications can reach the host out of order; the host passes on only
// increasing `progress` (MCP 2025-11-25 "Progress": it MUST increase), so a
// notification overtaken by a later one is dropped. What onProgress gets:
// notifications the server sent for this call, `progress` increasing,
// ending with the last one (delivered before the call resolves).
function assertProgress(seen) {
  assert.ok(seen.length >= 1, 'no progress')
  for (const [i, p] of seen.entries()) {
    assert.deepEqual(p, { progress: p.progress, total: 3, message: `step ${p.progress}` })
    if (i > 0) assert.ok(p.progress > seen[i - 1].progress, `not increasing: ${JSON.stringify(seen)}`)
  }
  assert.equal(seen.at(-1).progress, 3)
}

test('addServer / addPlugin aborted while they run reject cancelled at once, and what they added is removed again', LIMIT, async (t) => {
  const { host, actions } = newHost(t)
  const controller = new AbortController()
  const reason = new Error('changed my mind')
  // Native commands settle on a later tick: this abort lands while both run.
  const server = host.addServer({ name: 'undone', config: fixtureEntry('tools-server.mjs') }, { signal: controller.signal })
  const plugin = host.addPlugin({ name: 'undone-plugin', root: tmpDir(t) }, { signal: controller.signal })
  controller.abort(reason)
  for (const pending of [server, plugin]) {
    await assert.rejects(pending, (e) => e.code === 'cancelled' && e.cause === reason && /was aborted \(changed my mind\)/.test(e.message))
  }
  const removed = (id) => actions.some((a) => a.action.type === 'session/customizationRemoved' && a.action.id === id)
  await waitFor(() => removed('undone') && removed('undone-plugin'), { what: 'both adds undone' })
  assert.equal(findCustomization(host.getState(), 'undone'), undefined)
  assert.equal(findCustomization(host.getState(), 'undone-plugin'), undefined)
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
})

test('callTool onProgress gets the notifications/progress of its call in order, without an AHP chat', LIMIT, async (t) => {
  const { host, id, logs } = await optionsServer(t)
  const seen = []
  const result = await host.callTool({ serverId: id, name: 'progress', onProgress: (p) => seen.push(p) })
  assert.notEqual(JSON.parse(result.content[0].text).progressToken, null, 'the request carried no progressToken')
  assertProgress(seen)
  // Concurrent calls each get their own progress only.
  const a = []
  const b = []
  await Promise.all([
    host.callTool({ serverId: id, name: 'progress', onProgress: (p) => a.push(p) }),
    host.callTool({ serverId: id, name: 'progress', onProgress: (p) => b.push(p) }),
    host.callTool({ serverId: id, name: 'progress' }),
  ])
  assertProgress(a)
  assertProgress(b)
  // A throwing onProgress does not break the call: a warn log says so.
  const thrown = await host.callTool({ serverId: id, name: 'progress', onProgress: () => { throw new Error('listener bug') } })
  assert.equal(thrown.isError, undefined)
  const warned = logs.filter((l) => l.target === 'host.progress')
  assert.ok(warned.length >= 1)
  assert.equal(warned[0].level, 'warn')
  assert.match(warned[0].message, /listener bug/)
})

for (const count of [40, 1000]) {
  test(`${count} concurrent calls sharing one AbortSignal: one listener, no MaxListenersExceededWarning, none left after`, LIMIT, async (t) => {
    const { host, id } = await optionsServer(t)
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    process.on('warning', onWarning)
    t.after(() => process.off('warning', onWarning))
    const controller = new AbortController()
    const { signal } = controller
    const calls = Array.from({ length: count }, (_, i) => host.callTool({ serverId: id, name: 'echo', arguments: { text: `m${i}` }, signal }))
    assert.equal(getEventListeners(signal, 'abort').length, 1)
    const results = await Promise.all(calls)
    assert.equal(results[count - 1].content[0].text, `m${count - 1}`)
    assert.equal(getEventListeners(signal, 'abort').length, 0)
    // The same for requests that end by the abort, mixed families.
    const waiting = Array.from({ length: count }, (_, i) => (i % 2
      ? host.callTool({ serverId: id, name: 'wait', signal })
      : host.readResource(id, `hang://${i}`, { signal })))
    assert.equal(getEventListeners(signal, 'abort').length, 1)
    controller.abort(new Error('all of them'))
    const outcomes = await Promise.allSettled(waiting)
    assert.deepEqual(new Set(outcomes.map((o) => o.status === 'rejected' && o.reason.code)), new Set(['cancelled']))
    assert.equal(getEventListeners(signal, 'abort').length, 0)
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), [])
  })
}

/** True when nothing accepts TCP connections on 127.0.0.1:port. */
function portClosed(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port })
    s.once('connect', () => { s.destroy(); resolve(false) })
    s.once('error', () => { s.destroy(); resolve(true) })
  })
}

test('authorize: abort ends the sign-in wait (cancelled) and closes the redirect listener', LIMIT, async (t) => {
  const world = await startOAuthWorld()
  t.after(() => world.close())
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'oauth', config: { type: 'streamable-http', url: world.resource } })
  await waitState(host, id, 'authRequired')
  const controller = new AbortController()
  const reason = new Error('user closed the dialog')
  const { url, done } = await startAuthorize(host, id, { signal: controller.signal })
  assert.equal(await portClosed(redirectPort(url)), false, 'the redirect listener is not open')
  controller.abort(reason)
  await assert.rejects(done, (e) => e.code === 'cancelled' && e.cause === reason && /user closed the dialog/.test(e.message))
  await waitFor(() => portClosed(redirectPort(url)), { what: 'the redirect port to close' })
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
  assert.deepEqual(world.as.tokenRequests, [])
  await assert.rejects(host.authorize(id, { signal: controller.signal }), (e) => e.code === 'cancelled' && e.cause === reason)
})
