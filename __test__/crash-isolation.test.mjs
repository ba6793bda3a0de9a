// Crash isolation at small scale (bench/crash-isolation.mjs measures it at 10
// servers; docs/reliability.md): three stdio servers under continuous calls,
// one of them SIGKILLed. The other two lose no call; the killed one is
// restarted by the host (a new process) and serves calls again. No timing
// thresholds: the waits are conditions with generous bounds.

import { test } from 'node:test'
import assert from 'node:assert/strict'

import { newHost, fixtureEntry, waitState, waitFor, callText, stateHistory, sleep } from './helpers/host.mjs'
import { replaySession } from './helpers/replay.mjs'

const SESSION = 'ahp-session:/crash-isolation'

test('SIGKILL of one stdio server: the others lose no call, the killed one restarts and serves again', async (t) => {
  const { host, actions } = newHost(t, { session: SESSION, limits: { restartBackoffMs: 100 } })
  const ids = []
  for (const name of ['iso-a', 'iso-b', 'iso-c']) {
    ids.push(await host.addServer({ name, config: fixtureEntry('tools-server.mjs', ['ahp-crash-test', name]) }))
  }
  for (const id of ids) await waitState(host, id, 'ready')
  const [victim, ...others] = ids
  const oldPid = Number(await callText(host, victim, 'pid'))

  const stats = new Map(ids.map((id) => [id, { made: 0, ok: 0, failures: [] }]))
  let running = true
  let killed = false
  const okAfterKill = new Map(ids.map((id) => [id, 0]))
  async function worker(id, w) {
    const s = stats.get(id)
    for (let n = 0; running; n++) {
      const message = `${w}-${n}`
      s.made++
      try {
        const text = await callText(host, id, 'echo', { message }, { timeoutMs: 30_000 })
        assert.equal(text, `echo:${message}`)
        s.ok++
        if (killed) okAfterKill.set(id, okAfterKill.get(id) + 1)
      } catch (e) {
        s.failures.push({ code: e.code ?? e.message, message: e.message })
        await sleep(20)
      }
    }
  }
  const workers = ids.flatMap((id) => [0, 1, 2].map((w) => worker(id, w)))
  try {
    await waitFor(() => ids.every((id) => stats.get(id).ok >= 20), { what: '20 calls on each server' })
    killed = true
    process.kill(oldPid, 'SIGKILL')
    // The victim leaves `ready` and comes back with a new process.
    await waitFor(() => stateHistory(actions, victim).some((s) => s.kind !== 'ready'), { what: 'the victim to leave ready' })
    await waitState(host, victim, 'ready')
    const newPid = Number(await callText(host, victim, 'pid'))
    assert.notEqual(newPid, oldPid)
    const okBefore = okAfterKill.get(victim)
    await waitFor(() => okAfterKill.get(victim) >= okBefore + 20, { what: 'the restarted victim to serve 20 calls' })
    await waitFor(() => others.every((id) => okAfterKill.get(id) >= 50), { what: 'the others to serve 50 calls after the kill' })
  } finally {
    running = false
    await Promise.all(workers)
  }
  for (const id of others) {
    const s = stats.get(id)
    assert.deepEqual(s.failures, [], `${id} lost calls`)
    assert.equal(s.ok, s.made)
  }
  // The killed server's failures are the calls the crash cut off, or made while it restarted.
  for (const { code, message } of stats.get(victim).failures) {
    assert.ok(['server_exited', 'not_ready', 'server_not_ready'].includes(code), `victim failure code ${code}: ${message}`)
  }
  // Every action replays through ahp's session reducer to the host's state.
  assert.deepEqual(replaySession(actions, SESSION), host.getState())
})
