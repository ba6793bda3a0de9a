// Server lifecycle: early exit, startup timeout, crash isolation, restart
// with backoff and its limit, and client-dispatched stop / start / toggle.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import {
  newHost, tmpDir, writePlugin, fixtureEntry, everythingEntry, waitState, waitFor, callText, stateHistory, sleep,
  MarkedProcesses, uniqueMarker, pidAlive, NODE, HostError,
} from './helpers/host.mjs'

function killGroup(pid) {
  // Every stdio server leads its own process group (pgid = pid).
  process.kill(-pid, 'SIGKILL')
}

test('early exit: a server that exits before initialize is in error with exit code and stderr', async (t) => {
  const { host, actions } = newHost(t)
  const id = await host.addServer({
    name: 'boom',
    config: { type: 'stdio', command: 'sh', args: ['-c', 'echo boom >&2; exit 3'] },
    // Far longer than the wait below: reaching error proves the exit was noticed, not the timeout.
    startupTimeoutMs: 600_000,
  })
  const state = await waitState(host, id, 'error', { timeout: 15_000 })
  assert.equal(state.error.errorType, 'server_exited')
  assert.notEqual(state.error.errorType, 'startup_timeout')
  assert.match(state.error.message, /code 3/)
  assert.match(state.error.message, /boom/)
  assert.equal(host.processCount, 0)
  // A failed start is not retried automatically.
  await sleep(500)
  assert.deepEqual(stateHistory(actions, id).map((s) => s.kind), ['error'])
})

test('startup timeout: a server that never answers initialize is killed and reported', async (t) => {
  const marker = uniqueMarker('never')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const { host } = newHost(t)
  const id = await host.addServer({
    name: 'silent',
    config: { type: 'stdio', command: NODE, args: ['-e', 'setInterval(() => {}, 1e6)', `silent-${marker}`] },
    startupTimeoutMs: 500,
  })
  // The process is really started first.
  await waitFor(() => procs.scan().live.length === 1, { what: 'the silent process to run' })
  const state = await waitState(host, id, 'error', { timeout: 20_000 })
  assert.equal(state.error.errorType, 'startup_timeout')
  assert.match(state.error.message, /500 ms/)
  await waitFor(() => host.processCount === 0, { what: 'processCount 0', describe: () => `processCount ${host.processCount}` })
  await procs.waitGone()
})

test('crash isolation: killing one server fails its in-flight call, the other keeps answering', async (t) => {
  const marker = uniqueMarker('iso')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  // Long backoff: the crashed server stays in error for the whole test.
  const { host, logs, actions } = newHost(t, { limits: { restartBackoffMs: 600_000 } })
  const a = await host.addServer({ name: 'victim', config: fixtureEntry('tools-server.mjs', [`a-${marker}`]) })
  const b = await host.addServer({ name: 'bystander', config: fixtureEntry('tools-server.mjs', [`b-${marker}`]) })
  await waitState(host, a, 'ready')
  await waitState(host, b, 'ready')
  assert.equal(host.processCount, 2)
  const pidA = Number(await callText(host, a, 'pid'))
  const pidB = Number(await callText(host, b, 'pid'))
  assert.ok(pidA > 1 && pidB > 1 && pidA !== pidB)

  const inflight = host.callTool({ serverId: a, name: 'sleep', arguments: { ms: 600_000 } })
  const settled = inflight.then(() => 'resolved', (e) => e)
  await waitFor(() => logs.some((l) => l.serverId === a && l.target === 'server.stderr' && l.message === 'sleep-start 600000'), {
    what: 'the in-flight call to reach the server',
  })

  killGroup(pidA)

  const err = await settled
  assert.ok(err instanceof HostError, `in-flight call: ${err}`)
  assert.equal(err.code, 'server_exited')
  assert.match(err.message, /SIGKILL|signal 9/)

  const state = await waitState(host, a, 'error')
  assert.equal(state.error.errorType, 'server_exited')
  assert.match(state.error.message, /SIGKILL/)
  assert.match(state.error.message, /signal 9/)
  await waitFor(() => !pidAlive(pidA), { what: 'victim process gone' })

  // The other server is unaffected.
  assert.equal((await waitState(host, b, 'ready')).kind, 'ready')
  assert.equal(await callText(host, b, 'echo', { message: 'still here' }), 'echo:still here')
  assert.equal(Number(await callText(host, b, 'pid')), pidB)
  assert.deepEqual(stateHistory(actions, b).map((s) => s.kind), ['ready'])

  // Calls to the crashed server fail fast while it is down.
  await assert.rejects(host.callTool({ serverId: a, name: 'pid', arguments: {} }), { code: 'server_not_ready' })
  // Its tools are gone from the catalogue, the bystander's stay.
  assert.ok(!host.listTools().some((t) => t.customizationId === a))
  assert.ok(host.listTools().some((t) => t.customizationId === b))
  await waitFor(() => host.processCount === 1, { what: 'processCount 1' })
})

test('restart with backoff: restarts after crashes until the limit, then stays in error until a start request', async (t) => {
  const marker = uniqueMarker('restart')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const { host, actions } = newHost(t, { limits: { restartBackoffMs: 100, maxRestarts: 2 } })
  const id = await host.addServer({ name: 'phoenix', config: fixtureEntry('tools-server.mjs', [`phoenix-${marker}`]) })
  await waitState(host, id, 'ready')
  const kinds = () => stateHistory(actions, id).map((s) => s.kind)
  const readyCount = () => kinds().filter((k) => k === 'ready').length

  const pids = []
  for (let crash = 1; crash <= 2; crash++) {
    const pid = Number(await callText(host, id, 'pid'))
    pids.push(pid)
    const before = stateHistory(actions, id).length
    killGroup(pid)
    await waitFor(() => readyCount() === crash + 1, {
      what: `ready again after crash ${crash}`,
      describe: () => JSON.stringify(stateHistory(actions, id)),
    })
    const since = stateHistory(actions, id).slice(before)
    assert.deepEqual(since.map((s) => s.kind), ['error', 'starting', 'ready'], JSON.stringify(since))
    assert.equal(since[0].error.errorType, 'server_exited')
    assert.match(since[0].error.message, /SIGKILL/)
    assert.doesNotMatch(since[0].error.message, /restart limit/)
    assert.ok(!pidAlive(pid))
  }

  // Third crash in a row: over the limit of 2 restarts.
  const pid3 = Number(await callText(host, id, 'pid'))
  assert.ok(!pids.includes(pid3))
  const before = stateHistory(actions, id).length
  killGroup(pid3)
  const final = await waitFor(() => {
    const s = stateHistory(actions, id).slice(before)
    return s.find((x) => x.kind === 'error')
  }, { what: 'error after the third crash' })
  assert.equal(final.error.errorType, 'server_exited')
  assert.match(final.error.message, /restart limit reached/)
  assert.match(final.error.message, /SIGKILL/)

  // It stays there: longer than any backoff in play (100/200/400 ms), no new start.
  await sleep(1_500)
  assert.deepEqual(stateHistory(actions, id).slice(before).map((s) => s.kind), ['error'])
  assert.equal(host.getState().customizations.find((c) => c.id === id).state.kind, 'error')
  assert.equal(host.processCount, 0)
  await procs.waitGone()

  // A client start request brings it back.
  const echo = host.dispatch({ type: 'session/mcpServerStartRequested', id }, { clientId: 'test-client', clientSeq: 7 })
  assert.deepEqual(echo.origin, { clientId: 'test-client', clientSeq: 7 })
  assert.equal(echo.rejectionReason, undefined)
  await waitState(host, id, 'ready')
  const pid4 = Number(await callText(host, id, 'pid'))
  assert.ok(pidAlive(pid4))

  // The crash counter was reset by the start request: a crash restarts again.
  const mark = stateHistory(actions, id).length
  killGroup(pid4)
  await waitFor(() => stateHistory(actions, id).slice(mark).some((s) => s.kind === 'ready'), { what: 'restart after manual start' })
})

test('dispatch: stop / start a server, toggle a plugin, refused actions carry rejectionReason', async (t) => {
  const marker = uniqueMarker('ctl')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const root = writePlugin(join(tmpDir(t), 'ctl'), {
    mcpServers: {
      a: fixtureEntry('tools-server.mjs', [`a-${marker}`]),
      b: fixtureEntry('tools-server.mjs', [`b-${marker}`]),
    },
  })
  const { host, actions } = newHost(t)
  const plugin = await host.addPlugin({ root })
  const [a, b] = plugin.servers
  assert.deepEqual(plugin.servers, ['ctl/a', 'ctl/b'])
  await waitState(host, a, 'ready')
  await waitState(host, b, 'ready')
  const pidA = Number(await callText(host, a, 'pid'))

  // Stop: the echo carries the client origin; then the authoritative `stopped`.
  let seq = 0
  const stopEcho = host.dispatch({ type: 'session/mcpServerStopRequested', id: a }, { clientId: 'c1', clientSeq: ++seq })
  assert.deepEqual(stopEcho.origin, { clientId: 'c1', clientSeq: 1 })
  assert.equal(stopEcho.rejectionReason, undefined)
  assert.deepEqual(stopEcho.action, { type: 'session/mcpServerStopRequested', id: a })
  // The echo is also delivered as an 'action' event (asynchronously).
  await waitFor(() => actions.some((e) => e.serverSeq === stopEcho.serverSeq && e.origin?.clientId === 'c1'), { what: 'echo as an action event' })
  await waitState(host, a, 'stopped')
  await waitFor(() => !pidAlive(pidA), { what: 'stopped server process gone' })
  await waitFor(() => host.processCount === 1, { what: 'processCount 1' })
  assert.equal(serverKind(host, b), 'ready')
  await assert.rejects(host.callTool({ serverId: a, name: 'pid', arguments: {} }), { code: 'server_not_ready' })
  assert.ok(!host.listTools().some((t) => t.customizationId === a))
  // A stopped server is never restarted on its own.
  await sleep(300)
  assert.equal(serverKind(host, a), 'stopped')

  // Start.
  const startEcho = host.dispatch({ type: 'session/mcpServerStartRequested', id: a }, { clientId: 'c1', clientSeq: ++seq })
  assert.deepEqual(startEcho.origin, { clientId: 'c1', clientSeq: 2 })
  await waitState(host, a, 'ready')
  assert.equal(await callText(host, a, 'echo', { message: 'back' }), 'echo:back')

  // Disable the plugin: all its servers stop.
  const off = host.dispatch(
    { type: 'session/customizationToggled', id: 'ctl', enablement: [{ kind: 'session', enabled: false }] },
    { clientId: 'c1', clientSeq: ++seq },
  )
  assert.equal(off.rejectionReason, undefined)
  assert.deepEqual(off.origin, { clientId: 'c1', clientSeq: 3 })
  await waitState(host, a, 'stopped')
  await waitState(host, b, 'stopped')
  await waitFor(() => host.processCount === 0, { what: 'processCount 0 after disable' })
  await procs.waitGone()
  const pluginEntry = host.getState().customizations.find((c) => c.id === 'ctl')
  assert.deepEqual(pluginEntry.enablement, [{ kind: 'session', enabled: false }])

  // Starting a server of a disabled plugin is refused.
  const refusedStart = host.dispatch({ type: 'session/mcpServerStartRequested', id: b }, { clientId: 'c1', clientSeq: ++seq })
  assert.match(refusedStart.rejectionReason ?? '', /disabled/)
  assert.deepEqual(refusedStart.origin, { clientId: 'c1', clientSeq: 4 })
  await sleep(300)
  assert.equal(serverKind(host, b), 'stopped')

  // Enable again: both come back.
  const on = host.dispatch(
    { type: 'session/customizationToggled', id: 'ctl', enablement: [{ kind: 'session', enabled: true }] },
    { clientId: 'c1', clientSeq: ++seq },
  )
  assert.equal(on.rejectionReason, undefined)
  await waitState(host, a, 'ready')
  await waitState(host, b, 'ready')
  assert.equal(await callText(host, b, 'echo', { message: 'b back' }), 'echo:b back')
  assert.equal(host.processCount, 2)

  // Refused: unknown id, and a host-only action.
  const before = host.getState()
  const unknown = host.dispatch({ type: 'session/mcpServerStopRequested', id: 'ctl/nope' }, { clientId: 'c1', clientSeq: ++seq })
  assert.equal(typeof unknown.rejectionReason, 'string')
  assert.match(unknown.rejectionReason, /ctl\/nope/)
  assert.deepEqual(unknown.origin, { clientId: 'c1', clientSeq: 6 })
  const hostOnly = host.dispatch(
    { type: 'session/mcpServerStateChanged', id: a, state: { kind: 'stopped' } },
    { clientId: 'c1', clientSeq: ++seq },
  )
  assert.match(hostOnly.rejectionReason ?? '', /session\/mcpServerStateChanged/)
  const unknownToggle = host.dispatch(
    { type: 'session/customizationToggled', id: 'nope', enablement: [{ kind: 'session', enabled: false }] },
    { clientId: 'c1', clientSeq: ++seq },
  )
  assert.match(unknownToggle.rejectionReason ?? '', /nope/)
  // Refused actions change nothing.
  await sleep(300)
  assert.deepEqual(host.getState().customizations, before.customizations)
  assert.equal(serverKind(host, a), 'ready')

  // serverSeq stays gapless across echoes and host actions.
  assert.deepEqual(actions.map((e) => e.serverSeq), actions.map((_, i) => i + 1))
})

function serverKind(host, id) {
  const state = host.getState()
  for (const c of state.customizations) {
    if (c.id === id) return c.state?.kind
    for (const ch of c.children ?? []) if (ch.id === id) return ch.state?.kind
  }
  return undefined
}

test('after a stop request, requests fail server_not_ready (server_exited when already sent), never with a transport error', async (t) => {
  const { host, actions } = newHost(t)
  const id = await host.addServer({ name: 'ev', config: everythingEntry() })
  await waitState(host, id, 'ready')
  // The echo shows `stopped` at once (the reducer is optimistic); the actor
  // then closes the connection, which takes a while (stdin, SIGTERM).
  host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'c1', clientSeq: 1 })
  const stoppedByHost = () => actions.some((e) => e.origin === undefined && e.action.type === 'session/mcpServerStateChanged' &&
    e.action.id === id && e.action.state.kind === 'stopped')
  const outcomes = []
  const attempt = async () => {
    try {
      await host.listResources(id)
      outcomes.push('ok')
    } catch (e) {
      outcomes.push(e.code === 'protocol_error' ? `protocol_error: ${e.message}` : e.code)
    }
  }
  while (!stoppedByHost()) await attempt()
  for (let i = 0; i < 3; i++) await attempt()
  const counts = {}
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1
  assert.ok(outcomes.every((o) => ['ok', 'server_not_ready', 'server_exited'].includes(o)), JSON.stringify(counts))
  assert.deepEqual(outcomes.slice(-3), ['server_not_ready', 'server_not_ready', 'server_not_ready'])
})
