// Windows: a stdio server's lifecycle under the Job Object process layer
// (src/transport/process_windows.rs): start, stop request, start again,
// restart after a crash, and no process left after a stop, including a
// detached grandchild (its own process group, no console).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import {
  newHost, tmpDir, waitState, waitFor, callText, stateHistory, alive, winServerEntry, notedPids,
} from './helpers.mjs'

test('a server starts, answers, stops on request (its process gone) and starts again', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'win', config: winServerEntry() })
  await waitState(host, id, 'ready')
  const pid = Number(await callText(host, id, 'pid'))
  assert.ok(pid > 0 && alive(pid), `server pid ${pid}`)
  assert.equal(host.processCount, 1)
  host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'win', clientSeq: 1 })
  await waitState(host, id, 'stopped')
  await waitFor(() => !alive(pid), { what: `server ${pid} gone after the stop` })
  await waitFor(() => host.processCount === 0, { what: 'processCount 0' })
  host.dispatch({ type: 'session/mcpServerStartRequested', id }, { clientId: 'win', clientSeq: 2 })
  await waitState(host, id, 'ready')
  const again = Number(await callText(host, id, 'pid'))
  assert.ok(again !== pid && alive(again), `restarted pid ${again}`)
})

test('a crashed server is reported with its exit code and restarted', async (t) => {
  const { host, actions } = newHost(t, { limits: { restartBackoffMs: 100 } })
  const id = await host.addServer({ name: 'phoenix', config: winServerEntry() })
  await waitState(host, id, 'ready')
  const pid = Number(await callText(host, id, 'pid'))
  const before = stateHistory(actions, id).length
  await assert.rejects(host.callTool({ serverId: id, name: 'crash', arguments: { code: 7 } }), { code: 'server_exited' })
  await waitFor(() => stateHistory(actions, id).slice(before).some((s) => s.kind === 'ready'), {
    what: 'ready again after the crash',
    describe: () => JSON.stringify(stateHistory(actions, id)),
  })
  const since = stateHistory(actions, id).slice(before)
  assert.deepEqual(since.map((s) => s.kind), ['error', 'starting', 'ready'], JSON.stringify(since))
  assert.equal(since[0].error.errorType, 'server_exited')
  assert.match(since[0].error.message, /code 7/)
  assert.ok(!alive(pid))
  assert.notEqual(Number(await callText(host, id, 'pid')), pid)
})

test('a stop ends the whole job: a detached grandchild goes with the server', async (t) => {
  const pids = join(tmpDir(t), 'pids.jsonl')
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'tree', config: winServerEntry([], { env: { AHP_WIN_PIDS: pids } }) })
  await waitState(host, id, 'ready')
  const server = Number(await callText(host, id, 'pid'))
  const grandchild = Number(await callText(host, id, 'spawn_grandchild'))
  assert.deepEqual(notedPids(pids), { servers: [server], grandchildren: [grandchild] })
  assert.ok(alive(grandchild), 'the grandchild runs')
  host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'win', clientSeq: 1 })
  await waitState(host, id, 'stopped')
  await waitFor(() => !alive(server) && !alive(grandchild), {
    what: 'server and grandchild gone after the stop',
    describe: () => `server ${server} ${alive(server)}, grandchild ${grandchild} ${alive(grandchild)}`,
  })
})
