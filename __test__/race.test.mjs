// Commands racing on one id (issue 9): `addPlugin` / `addServer` and
// `remove` of the same id apply in the order they were called (or the later
// one fails with a stable code naming the id); a removed id is never
// resurrected by work that was in flight; an id is never held twice.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import {
  newHost, tmpDir, writePlugin, fixtureEntry, waitFor, waitState, sleep, rejectsWith,
  MarkedProcesses, uniqueMarker, HostError,
} from './helpers/host.mjs'

/** Delays (ms) between the add and the remove, one per run. */
const DELAYS = [0, 1, 2, 3, 5, 5, 5, 8, 13, 20]

/**
 * A ~2 MB `mcp.json`: one real stdio server (`tools-server.mjs` marked with
 * `marker`) among 2 MB of JSON whitespace, so that reading and parsing the
 * file takes a while.
 */
function bigPlugin(root, marker) {
  const real = JSON.stringify(fixtureEntry('tools-server.mjs', [`race-${marker}`]))
  const pad = ' \n'.repeat(1_000_000)
  const text = `{"mcpServers": {${pad}"real": ${real}${pad}}}`
  assert.ok(text.length > 2_000_000, `mcp.json is ${text.length} bytes`)
  return writePlugin(root, text)
}

/** Whether envelope `e` mentions id `id` (the id itself or one of its children). */
function mentions(e, id) {
  const text = JSON.stringify(e.action)
  return text.includes(JSON.stringify(id)) || text.includes(`"${id}/`)
}

/** Replays the customization actions: the top-level ids present after them. */
function replayIds(actions) {
  const ids = new Set()
  for (const { action } of actions) {
    if (action.type === 'session/customizationUpdated') ids.add(action.customization.id)
    if (action.type === 'session/customizationRemoved') ids.delete(action.id)
  }
  return ids
}

/** Settles `p` into `{value}` or `{error}`. */
const settle = (p) => p.then((value) => ({ value }), (error) => ({ error }))

let clientSeq = 0

/**
 * Waits until every envelope emitted so far has reached the `action`
 * listener (events and promises travel separately): dispatches a client
 * action (refused: no such server) and waits for its echo.
 */
async function delivered(host, actions) {
  const echo = host.dispatch({ type: 'session/mcpServerStartRequested', id: 'no-such-server' }, { clientId: 'race', clientSeq: ++clientSeq })
  await waitFor(() => actions.some((e) => e.serverSeq === echo.serverSeq), { what: 'the barrier echo' })
  return echo.serverSeq
}

/**
 * Runs `add()` then, `delay` ms later, `remove(id)`, and checks the rule:
 * `remove` resolves (the add is then either complete or fails `cancelled`),
 * or it fails `not_found` because the add had not taken the id yet (then
 * the add is live and is removed again). Either way, once `remove`
 * resolved, nothing of `id` is left or runs, and the last action about it
 * is its `session/customizationRemoved` (none at all when the add stopped
 * before publishing anything).
 */
async function raceOnce(host, actions, id, add, delay) {
  const from = await delivered(host, actions)
  const added = settle(add())
  if (delay > 0) await sleep(delay)
  let removed = await settle(host.remove(id))
  if (removed.error) {
    assert.ok(removed.error instanceof HostError, `remove: ${removed.error}`)
    assert.equal(removed.error.code, 'not_found', removed.error.message)
    assert.ok(removed.error.message.includes(JSON.stringify(id)), removed.error.message)
    const a = await added
    assert.equal(a.error, undefined, `remove failed not_found, so the add must have applied: ${a.error}`)
    removed = await settle(host.remove(id))
    assert.equal(removed.error, undefined, `the second remove: ${removed.error}`)
  }
  const a = await added
  if (a.error) {
    assert.ok(a.error instanceof HostError, `add: ${a.error}`)
    assert.equal(a.error.code, 'cancelled', a.error.message)
    assert.ok(a.error.message.includes(JSON.stringify(id)), a.error.message)
  }
  // The add has settled: whatever it was going to publish is out.
  assert.equal((host.getState().customizations ?? []).find((c) => c.id === id), undefined,
    `delay ${delay}: ${id} is in the state after remove resolved`)
  await waitFor(() => host.processCount === 0, {
    what: 'processCount 0 after remove', describe: () => `processCount ${host.processCount}`,
  })
  const to = await delivered(host, actions)
  assert.ok(!replayIds(actions).has(id), `delay ${delay}: replaying the actions leaves ${id}`)
  const about = actions.filter((e) => e.serverSeq > from && e.serverSeq < to && mentions(e, id)).map((e) => e.action.type)
  if (about.length > 0) {
    assert.equal(about.at(-1), 'session/customizationRemoved', `delay ${delay}: actions about ${id}: ${about}`)
  }
  return { added: a, late: actions.length }
}

test('addPlugin then remove a few ms later (2 MB mcp.json): the removal is final, nothing is resurrected', async (t) => {
  const marker = uniqueMarker('race')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const root = bigPlugin(join(tmpDir(t, 'ahp-race-'), 'p'), marker)
  const { host, actions } = newHost(t)
  const marks = []
  for (const delay of DELAYS) {
    marks.push(await raceOnce(host, actions, 'plug', () => host.addPlugin({ root, name: 'plug' }), delay))
  }
  await procs.waitGone()
  // Nothing about `plug` after its last removal, even once every server task had time to act:
  // a fresh add of another plugin from the same file becomes ready (a barrier).
  const other = await host.addPlugin({ root, name: 'other' })
  await waitState(host, 'other/real', 'ready')
  assert.deepEqual(other.servers, ['other/real'])
  const last = marks.at(-1).late
  assert.deepEqual(actions.slice(last).filter((e) => mentions(e, 'plug')).map((e) => e.action.type), [])
  assert.deepEqual([...replayIds(actions)], ['other'])
})

test('addServer then remove a few ms later: the removal is final, nothing is resurrected', async (t) => {
  const marker = uniqueMarker('srace')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const { host, actions } = newHost(t)
  const config = fixtureEntry('tools-server.mjs', [`solo-${marker}`])
  for (const delay of DELAYS) {
    await raceOnce(host, actions, 'solo', () => host.addServer({ name: 'solo', config }), delay)
  }
  await procs.waitGone()
  assert.deepEqual([...replayIds(actions)], [])
})

/** Checks the `already_exists` error of a second add of `id`. */
async function heldTwice(fn, id) {
  const err = await rejectsWith(fn, 'already_exists')
  assert.ok(err.message.includes(JSON.stringify(id)), err.message)
}

test('an id is held once: a second addPlugin while the first is live, in flight or being removed is already_exists', async (t) => {
  const marker = uniqueMarker('held')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const root = bigPlugin(join(tmpDir(t, 'ahp-held-'), 'p'), marker)
  const { host, actions } = newHost(t)

  // In flight: two adds of one name at once; exactly one takes it.
  const both = await Promise.all([1, 2].map(() => settle(host.addPlugin({ root, name: 'plug' }))))
  const won = both.filter((r) => !r.error)
  assert.equal(won.length, 1, `exactly one add applies: ${both.map((r) => r.error?.code ?? 'ok')}`)
  const lost = both.find((r) => r.error).error
  assert.ok(lost instanceof HostError && lost.code === 'already_exists', `${lost}`)
  assert.ok(lost.message.includes('"plug"'), lost.message)
  assert.deepEqual(won[0].value.servers, ['plug/real'])
  await waitState(host, 'plug/real', 'ready')

  // Live.
  await heldTwice(() => host.addPlugin({ root, name: 'plug' }), 'plug')
  await heldTwice(() => host.addServer({ name: 'plug', config: fixtureEntry('tools-server.mjs') }), 'plug')

  // Being removed: the name stays taken until the removal has finished.
  // 1 ms: the removal has begun; stopping a node server takes far longer.
  const removing = host.remove('plug')
  await sleep(1)
  const during = await settle(host.addPlugin({ root, name: 'plug' }))
  await removing
  assert.ok(during.error instanceof HostError, `addPlugin during remove was accepted: ${JSON.stringify(during.value)}`)
  assert.equal(during.error.code, 'already_exists', during.error.message)
  await waitFor(() => host.processCount === 0, { what: 'processCount 0 after remove' })
  assert.ok(!replayIds(actions).has('plug'))
  assert.equal((host.getState().customizations ?? []).find((c) => c.id === 'plug'), undefined)

  // After the removal: accepted cleanly, and it runs.
  const again = await host.addPlugin({ root, name: 'plug' })
  assert.deepEqual(again.servers, ['plug/real'])
  await waitState(host, 'plug/real', 'ready')
  assert.equal(host.processCount, 1)
  await host.remove('plug')
  await procs.waitGone()
})

test('an id is held once: a second addServer while the first is live or being removed is already_exists', async (t) => {
  const marker = uniqueMarker('sheld')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const { host, actions } = newHost(t)
  const config = fixtureEntry('tools-server.mjs', [`solo-${marker}`])
  await host.addServer({ name: 'solo', config })
  await waitState(host, 'solo', 'ready')
  await heldTwice(() => host.addServer({ name: 'solo', config }), 'solo')

  const removing = host.remove('solo')
  await sleep(1)
  const during = await settle(host.addServer({ name: 'solo', config }))
  await removing
  assert.ok(during.error instanceof HostError, `addServer during remove was accepted: ${during.value}`)
  assert.equal(during.error.code, 'already_exists', during.error.message)
  await waitFor(() => host.processCount === 0, { what: 'processCount 0 after remove' })
  assert.ok(!replayIds(actions).has('solo'))

  assert.equal(await host.addServer({ name: 'solo', config }), 'solo')
  await waitState(host, 'solo', 'ready')
  await host.remove('solo')
  await procs.waitGone()
  assert.deepEqual([...replayIds(actions)], [])
})
