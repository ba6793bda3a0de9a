// Error states keep the first real cause of a failed start (issue 9, "Lost
// cause"): a JSON-RPC error answering `initialize` is `protocol_error` naming
// the server and the error, whatever the process does next (exits when its
// stdin closes, stays alive, exits at once); an invalid `initialize` result
// likewise; an exit before any answer stays `server_exited` with its exit
// status and stderr tail; a launch that cannot exec stays `spawn_failed`.
// Every case runs real child processes (or a real HTTP server) and checks
// the AHP state, the replayed `session/mcpServerStateChanged` actions and
// the `log` events.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  newHost, fixtureEntry, waitState, waitFor, stateHistory, startHttpFixture, tmpDir,
  MarkedProcesses, uniqueMarker,
} from './helpers/host.mjs'

const RPC_MESSAGE = 'license expired for tenant acme'

/** Starts `config` and waits for its error state; checks it is the only state change. */
async function failedStart(t, name, config) {
  const { host, actions, logs } = newHost(t)
  // Far longer than any wait here: an error state proves the cause was seen, not the timeout.
  const id = await host.addServer({ name, config, startupTimeoutMs: 600_000 })
  const state = await waitState(host, id, 'error', { timeout: 20_000 })
  // Actions reach JS after getState() shows the change: wait for the replay.
  await waitFor(() => stateHistory(actions, id).length > 0, { what: `the state actions of ${id}` })
  const history = stateHistory(actions, id)
  assert.deepEqual(history.map((s) => s.kind), ['error'], JSON.stringify(history))
  // The replayed action carries the same error as the state.
  assert.deepEqual(history[0], state)
  await waitFor(() => host.processCount === 0, { what: 'processCount 0', describe: () => `processCount ${host.processCount}` })
  return { host, id, state, logs }
}

/** The error log of the failed start (the actor's "start failed: …"). */
function startFailedLog(logs, id) {
  const found = logs.filter((l) => l.serverId === id && l.level === 'error' && /start failed/.test(l.message))
  assert.equal(found.length, 1, JSON.stringify(logs.filter((l) => l.serverId === id)))
  return found[0]
}

function assertJsonRpcCause(id, state, logs) {
  assert.equal(state.error.errorType, 'protocol_error', state.error.message)
  assert.match(state.error.message, /-32042/)
  assert.ok(state.error.message.includes(RPC_MESSAGE), state.error.message)
  assert.ok(state.error.message.includes(id), `names the server: ${state.error.message}`)
  assert.match(state.error.message, /initialize/)
  assert.doesNotMatch(state.error.message, /before completing initialize/)
  const log = startFailedLog(logs, id)
  assert.ok(log.message.includes(RPC_MESSAGE), log.message)
  assert.match(log.message, /-32042/)
}

for (const then of ['exit-on-eof', 'stay', 'exit-now']) {
  test(`initialize answered with a JSON-RPC error (then ${then}): protocol_error naming the server and the error`, async (t) => {
    const marker = uniqueMarker('initerr')
    const procs = new MarkedProcesses(marker)
    t.after(() => procs.killAll())
    const { id, state, logs } = await failedStart(t, 'refuser', fixtureEntry('init-error-server.mjs', [`--then=${then}`, marker]))
    assertJsonRpcCause(id, state, logs)
    // The server really ran and answered: its stderr line arrives. It comes
    // through a second pipe, drained on its own, so it may reach JS after
    // the error state: wait for it.
    await waitFor(
      () => logs.some((l) => l.serverId === id && l.target === 'server.stderr' && l.message === 'init-error-server: error'),
      { what: `the stderr line of ${id}`, describe: () => JSON.stringify(logs.filter((l) => l.serverId === id)) },
    )
    await procs.waitGone()
  })
}

test('initialize answered with a result that is not an InitializeResult: protocol_error, not the exit that follows', async (t) => {
  const { id, state, logs } = await failedStart(t, 'odd', fixtureEntry('init-error-server.mjs', ['--answer=bad-result']))
  assert.equal(state.error.errorType, 'protocol_error', state.error.message)
  assert.match(state.error.message, /initialize/)
  assert.ok(state.error.message.includes(id), state.error.message)
  assert.doesNotMatch(state.error.message, /exited with code 0/)
  assert.ok(startFailedLog(logs, id).message.includes('initialize'))
})

test('garbage on stdout, then an exit before any answer: server_exited with the exit status and stderr tail', async (t) => {
  // A guard (this already held): the noise is only a warning, the exit is the cause.
  const { id, state, logs } = await failedStart(t, 'garbled', fixtureEntry('init-error-server.mjs', ['--answer=garbage', '--then=exit-now']))
  assert.equal(state.error.errorType, 'server_exited', state.error.message)
  assert.match(state.error.message, /exited with code 4 before completing initialize/)
  assert.match(state.error.message, /init-error-server: garbage/)
  assert.ok(logs.some((l) => l.serverId === id && l.target === 'host.stdio' && /GARBAGE/.test(l.message)), JSON.stringify(logs))
  assert.ok(startFailedLog(logs, id).message.includes('code 4'))
})

test('a command that cannot be executed: spawn_failed with the OS error', async (t) => {
  // A guard (this already held): the launch error is the cause, nothing after it.
  const dir = tmpDir(t)
  const script = join(dir, 'no-interpreter.sh')
  writeFileSync(script, '#!/nonexistent/interpreter\n')
  chmodSync(script, 0o755)
  const { id, state, logs } = await failedStart(t, 'unstartable', { type: 'stdio', command: script, args: [] })
  assert.equal(state.error.errorType, 'spawn_failed', state.error.message)
  assert.match(state.error.message, /cannot start/)
  assert.ok(startFailedLog(logs, id).message.includes('cannot start'))
})

test('Streamable HTTP: initialize answered with a JSON-RPC error is protocol_error naming the server and the error', async (t) => {
  const server = await startHttpFixture(t, 'init-error-http-server.mjs')
  const { id, state, logs } = await failedStart(t, 'remote-refuser', { type: 'streamable-http', url: server.url })
  assertJsonRpcCause(id, state, logs)
})
