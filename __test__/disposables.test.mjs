// VS Code-style subscriptions (lib/host/subscriptions.js): one `onX` per
// event of `McpHostEvents` (index.d.ts), each returning a Disposable whose
// dispose() removes that listener only. `on` keeps Node's semantics and
// returns the host, which is itself disposable: `host.on('log', f).dispose()`
// disposes the whole host (the review's bug), while `host.onLog(f).dispose()`
// removes f and nothing else.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, fixtureEntry, waitFor, ROOT, HostError } from './helpers/host.mjs'

const TOOLS = fixtureEntry('tools-server.mjs')

/** The event names of `McpHostEvents` in index.d.ts. */
function hostEvents() {
  const dts = readFileSync(join(ROOT, 'index.d.ts'), 'utf8')
  const body = /export interface McpHostEvents \{([\s\S]*?)\n\}/.exec(dts)[1]
  return [...body.matchAll(/^ {2}(\w+): \[/gm)].map((m) => m[1])
}

const methodOf = (event) => `on${event[0].toUpperCase()}${event.slice(1)}`

test('one onX method per McpHostEvents event; each returns a Disposable that is not the host', (t) => {
  const { host } = newHost(t)
  const events = hostEvents()
  assert.deepEqual(events, ['action', 'log', 'authorizationUrl', 'toolsChanged', 'listChanged', 'resourceUpdated', 'channelMessage'])
  for (const event of events) {
    const method = methodOf(event)
    assert.equal(typeof host[method], 'function', method)
    const before = host.listenerCount(event)
    const sub = host[method](() => {})
    assert.notEqual(sub, host, `${method} must not return the host`)
    assert.equal(typeof sub.dispose, 'function')
    assert.equal(typeof sub[Symbol.dispose], 'function')
    assert.equal(host.listenerCount(event), before + 1, method)
    sub.dispose()
    assert.equal(host.listenerCount(event), before, method)
    sub.dispose() // idempotent
    sub[Symbol.dispose]()
    assert.equal(host.listenerCount(event), before, method)
  }
  // `on` is Node's: it returns the host (whose dispose() would end it).
  const f = () => {}
  assert.equal(host.on('log', f), host)
  host.off('log', f)
})

test('onLog(f).dispose() stops f only; other listeners, the same function registered elsewhere, and the host keep working', async (t) => {
  const { host } = newHost(t)
  const fromSub = []
  const fromOther = []
  const twice = []
  const sub = host.onLog((record) => fromSub.push(record))
  host.onLog((record) => fromOther.push(record))
  // The same function subscribed twice and added with `on`: disposing one subscription removes that one only.
  const same = (record) => twice.push(record)
  const first = host.onLog(same)
  host.on('log', same)

  const a = await host.addServer({ name: 'a', config: TOOLS })
  await host.whenReady(a)
  await host.callTool({ serverId: a, name: 'sleep', arguments: { ms: 1 } }) // writes a stderr line (a log record)
  await waitFor(() => fromSub.some((r) => r.serverId === a && r.message.includes('sleep-start')), { what: 'the stderr line of a' })
  const seen = fromSub.length
  assert.ok(seen > 0 && fromOther.length === seen && twice.length === 2 * seen, `${seen} ${fromOther.length} ${twice.length}`)

  sub.dispose()
  first.dispose()
  const b = await host.addServer({ name: 'b', config: TOOLS })
  await host.whenReady(b) // the host keeps working
  await host.callTool({ serverId: b, name: 'sleep', arguments: { ms: 1 } })
  await waitFor(() => fromOther.some((r) => r.serverId === b && r.message.includes('sleep-start')), { what: 'the stderr line of b' })
  assert.equal(fromSub.length, seen, 'a disposed listener is not called')
  assert.equal(twice.length, 2 * seen + (fromOther.length - seen), 'the `on` registration of the same function stays')
  assert.equal(host.processCount, 2)
})

test('a subscription disposed through [Symbol.dispose] (what `using` calls); listeners get the host as this', async (t) => {
  const { host, actions } = newHost(t)
  let self
  const calls = []
  {
    const sub = host.onAction(function (envelope) {
      self = this
      calls.push(envelope.action.type)
    })
    try {
      await host.addServer({ name: 'x', config: TOOLS })
      await waitFor(() => calls.length > 0, { what: 'an action' })
    } finally {
      sub[Symbol.dispose]()
    }
  }
  const count = calls.length
  assert.equal(self, host)
  await host.whenReady('x')
  // The ready state reached the host's other listener, not the disposed one.
  await waitFor(() => actions.some((e) => e.action.type === 'session/mcpServerStateChanged' && e.action.state.kind === 'ready'), { what: 'the ready action' })
  assert.equal(calls.length, count)
})

test('a listener that is not a function: HostError invalid_argument naming it', (t) => {
  const { host } = newHost(t)
  for (const bad of [undefined, null, 42, {}]) {
    assert.throws(() => host.onToolsChanged(bad), (err) => err instanceof HostError && err.code === 'invalid_argument' && /^listener: must be a function \(onToolsChanged\)/.test(err.message))
  }
})
