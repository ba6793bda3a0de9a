// Blocking start (issue 29, item 6; AHP 1.0 `McpServerStartingState.blocking`
// and `session/mcpServerBackgroundRequested`): a `required` server's
// `starting` is published with `blocking: true`; a client's background
// request is accepted and makes it `blocking: false` while the server goes
// on starting; `whenReady` over many servers (a list, the whole host, the
// blocking ones) settles with one outcome each. Real SDK servers held in
// their handshake by a coordinator on 127.0.0.1 (gate-server.mjs); every
// state is checked against a mirror replaying the envelopes through the
// `ahp` reducers.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { isDeepStrictEqual } from 'node:util'
import { createRequire } from 'node:module'
import {
  ROOT, newHost, fixtureEntry, waitFor, waitState, findCustomization, tmpDir, writePlugin, NODE, FIXTURES,
} from './helpers/host.mjs'

const require = createRequire(import.meta.url)
const { AhpStateMirror } = require(`${ROOT}/index.js`)
const SESSION = 'ahp-session:/blocking-start'

/** A coordinator holding each gate server's start until `release(i)`. */
async function coordinator(t) {
  const held = new Map()
  const released = new Set()
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1')
    const i = url.searchParams.get('i')
    if (url.pathname === '/start' && !released.has(i)) held.set(i, res)
    else res.end('go')
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const res of held.values()) res.end('go')
    server.closeAllConnections()
    server.close()
  })
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    started: (i) => held.has(String(i)),
    release(i) {
      released.add(String(i))
      held.get(String(i))?.end('go')
      held.delete(String(i))
    },
  }
}

function gate(gates, i) {
  return fixtureEntry('gate-server.mjs', [String(i), gates.base])
}

/** A host whose envelopes feed an AhpStateMirror (the `ahp` reducers). */
function mirroredHost(t) {
  const made = newHost(t, { session: SESSION })
  const mirror = new AhpStateMirror({ session: SESSION, clientId: 'blocking-ui' })
  made.host.on('action', (envelope) => mirror.receive(envelope))
  return { ...made, mirror }
}

async function replayed(host, mirror) {
  await waitFor(() => mirror.pending === 0 && isDeepStrictEqual(mirror.session, host.getState()), {
    what: 'the replayed state equals host.getState()',
    describe: () => `mirror ${JSON.stringify(mirror.session)}\nhost ${JSON.stringify(host.getState())}`,
  })
}

const stateOf = (host, id) => findCustomization(host.getState(), id)?.state

test('a required server starts blocking; a client background request unblocks it, whenReady({blocking}) says background, and it still becomes ready', async (t) => {
  const gates = await coordinator(t)
  const { host, mirror, actions } = mirroredHost(t)
  await host.addServer({ name: 'needed', config: gate(gates, 1), required: true })
  await host.addServer({ name: 'extra', config: gate(gates, 2) })
  await waitFor(() => gates.started(1) && gates.started(2), { what: 'both servers in their handshake' })
  assert.deepEqual(stateOf(host, 'needed'), { kind: 'starting', blocking: true })
  assert.deepEqual(stateOf(host, 'extra'), { kind: 'starting' })
  await replayed(host, mirror)

  // The harness holds its turn on the blocking start only.
  const held = host.whenReady({ blocking: true })
  let settled = false
  held.then(() => { settled = true }, () => { settled = true })
  await new Promise((r) => setTimeout(r, 50))
  assert.equal(settled, false, 'still blocking')

  const { clientSeq, action } = mirror.dispatch(SESSION, { type: 'session/mcpServerBackgroundRequested', id: 'needed' })
  const echo = host.dispatch(action, { clientId: mirror.clientId, clientSeq })
  assert.equal(echo.rejectionReason, undefined)
  assert.deepEqual(await held, [{ serverId: 'needed', status: 'background' }])
  assert.deepEqual(stateOf(host, 'needed'), { kind: 'starting', blocking: false })
  await replayed(host, mirror)

  // It goes on starting, and becomes ready once let through.
  gates.release(1)
  gates.release(2)
  await waitState(host, 'needed', 'ready')
  await waitState(host, 'extra', 'ready')
  await replayed(host, mirror)
  // The background request is not repeated as a state: only its echo.
  const changes = actions.filter((e) => e.action.type === 'session/mcpServerStateChanged' && e.action.id === 'needed')
  assert.deepEqual(changes.map((e) => e.action.state), [{ kind: 'ready' }])

  // The next start (a restart request) blocks again.
  host.dispatch({ type: 'session/mcpServerStartRequested', id: 'needed' }, { clientId: 'c', clientSeq: 1 })
  await waitFor(() => isDeepStrictEqual(stateOf(host, 'needed'), { kind: 'starting', blocking: true }), {
    what: 'the restart blocks', describe: () => JSON.stringify(stateOf(host, 'needed')),
  })
  const outcomes = await host.whenReady({ blocking: true, timeoutMs: 20_000 })
  assert.deepEqual(outcomes.map((o) => [o.serverId, o.status]), [['needed', 'ready']])
  assert.equal(outcomes[0].info.name, 'gate-1')
  await replayed(host, mirror)
})

test('a background request for a server that does not block is accepted and changes nothing', async (t) => {
  const gates = await coordinator(t)
  gates.release(3)
  const { host, mirror } = mirroredHost(t)
  await host.addServer({ name: 'plain', config: gate(gates, 3) })
  await waitState(host, 'plain', 'ready')
  const before = host.getState()
  const echo = host.dispatch({ type: 'session/mcpServerBackgroundRequested', id: 'plain' }, { clientId: 'c', clientSeq: 1 })
  assert.equal(echo.rejectionReason, undefined)
  assert.deepEqual(host.getState(), before)
  const missing = host.dispatch({ type: 'session/mcpServerBackgroundRequested', id: 'nope' }, { clientId: 'c', clientSeq: 2 })
  assert.match(missing.rejectionReason, /nope/)
  await replayed(host, mirror)
})

test('whenReady over a list and over the whole host: one outcome per server, in order; failures never reject', async (t) => {
  const gates = await coordinator(t)
  gates.release(4)
  const { host } = newHost(t)
  await host.addServer({ name: 'good', config: gate(gates, 4) })
  await host.addServer({ name: 'broken', config: { type: 'stdio', command: NODE, args: ['-e', 'process.exit(3)'] } })
  const root = tmpDir(t)
  writePlugin(root, { mcpServers: { s: { type: 'stdio', command: NODE, args: [`${FIXTURES}/gate-server.mjs`, '5', gates.base] } } })
  gates.release(5)
  const plugin = await host.addPlugin({ root, name: 'p', servers: { s: { required: true } } })
  assert.deepEqual(plugin.servers, ['p/s'])

  const listed = await host.whenReady(['broken', 'good', 'missing'])
  assert.deepEqual(listed.map((o) => [o.serverId, o.status]), [['broken', 'failed'], ['good', 'ready'], ['missing', 'failed']])
  assert.equal(listed[0].error.code, 'server_exited')
  assert.equal(listed[2].error.code, 'not_found')
  assert.equal(listed[1].info.name, 'gate-4')

  const all = await host.whenReady()
  assert.deepEqual(all.map((o) => [o.serverId, o.status]), [['good', 'ready'], ['broken', 'failed'], ['p/s', 'ready']])
  // Nothing blocks now: the blocking form resolves empty at once.
  assert.deepEqual(await host.whenReady({ blocking: true }), [])
  assert.deepEqual(await host.whenReady([]), [])
})

test('whenReady over many: timeout names the undecided servers; abort rejects cancelled; bad arguments name the field', async (t) => {
  const gates = await coordinator(t)
  const { host } = newHost(t)
  await host.addPlugin({ root: writeGatePlugin(t, gates, 6), name: 'q', servers: { s: { required: true } } })
  await waitFor(() => gates.started(6), { what: 'the server in its handshake' })
  assert.deepEqual(stateOf(host, 'q/s'), { kind: 'starting', blocking: true })
  const err = await host.whenReady({ blocking: true, timeoutMs: 30 }).then(() => assert.fail('resolved'), (e) => e)
  assert.equal(err.code, 'timeout')
  assert.deepEqual(err.data, { kind: 'ready', ms: 30, serverIds: ['q/s'] })
  const controller = new AbortController()
  const aborted = host.whenReady(['q/s'], { signal: controller.signal })
  controller.abort(new Error('user left'))
  const e2 = await aborted.then(() => assert.fail('resolved'), (e) => e)
  assert.equal(e2.code, 'cancelled')
  assert.deepEqual(e2.data, { serverIds: ['q/s'] })
  for (const [args, field] of [
    [[['ok', '']], /serverIds\[1\]/],
    [[[3]], /serverIds\[0\]/],
    [[{ blocking: 'yes' }], /options\.blocking/],
    [[['q/s'], { timeoutMs: -1 }], /options\.timeoutMs/],
    [[{}, {}], /one argument/],
  ]) {
    const bad = await host.whenReady(...args).then(() => assert.fail(`resolved: ${JSON.stringify(args)}`), (e) => e)
    assert.equal(bad.code, 'invalid_argument', JSON.stringify(args))
    assert.match(bad.message, field)
  }
  gates.release(6)
  const [outcome] = await host.whenReady(['q/s'], { blocking: true })
  assert.equal(outcome.status, 'ready')
})

function writeGatePlugin(t, gates, i) {
  const root = tmpDir(t)
  writePlugin(root, { mcpServers: { s: { type: 'stdio', command: NODE, args: [`${FIXTURES}/gate-server.mjs`, String(i), gates.base] } } })
  return root
}
