// A mirror fed from a live host under a random workload (fixed seed): after
// every step, once the envelopes are delivered, the mirror's session equals
// `host.getState()`, and its chat equals the chat replayed in one pass, in
// serverSeq order, through `reduceChat` (the harness's own tool-call actions
// and every non-rejected envelope on the chat). The host does not own chat
// state, so there is no host-side chat state to compare with; the harness
// owns the chat, and after its own start/ready of a call it seeds the
// mirror's chat with its state (the host's chat actions then apply on top).
//
// Steps: servers added (fixture tools-server, sometimes server-everything),
// started, stopped, toggled, crashed (the child killed), removed; tool calls
// on a chat; client dispatches through `mirror.dispatch` (optimistic) that the
// host accepts (start/stop/toggle of a known server) or rejects (an unknown
// id, a toggle with its enablement out of order, and the harness's
// `chat/toolCallStart`, which this host does not take).

import test from 'node:test'
import assert from 'node:assert/strict'
import { isDeepStrictEqual } from 'node:util'
import { newHost, fixtureEntry, everythingEntry, waitFor, findCustomization, ROOT } from './helpers/host.mjs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { AhpStateMirror, reduceChat } = require(`${ROOT}/index.js`)

const SESSION = 'ahp-session:/mirror-live'
const CHAT = 'ahp-chat:/mirror-live'
const STEPS = Number(process.env.MIRROR_STEPS ?? 1000)
const SEED = 0x12c0ffee

/** mulberry32: a small seeded PRNG. */
function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const CHAT0 = {
  resource: CHAT, title: 'live', status: 8, modifiedAt: '1970-01-01T00:00:00.000Z', turns: [],
  activeTurn: { id: 'turn-1', startedAt: '1970-01-01T00:00:00.000Z', message: { text: 'go', origin: { kind: 'user' } }, responseParts: [] },
}

test(`a mirror fed from a live host equals its state after each of ${STEPS} random steps (seed ${SEED})`, { timeout: 600_000 }, async (t) => {
  const { host, actions } = newHost(t, { session: SESSION, limits: { maxRestarts: 0 } })
  const mirror = new AhpStateMirror({ session: SESSION, clientId: 'live-ui', snapshot: { serverSeq: 0, chats: { [CHAT]: CHAT0 } } })
  const gaps = []
  mirror.on('gap', (g) => gaps.push(g))
  host.on('action', (e) => mirror.receive(e))
  const random = prng(SEED)
  const pick = (xs) => xs[Math.floor(random() * xs.length)]
  // The reference chat, built in one pass in serverSeq order: every
  // non-rejected chat envelope, and the harness's own start/ready of each
  // call at the point it dispatched them.
  let refChat = CHAT0
  let consumed = 0
  const advance = () => {
    for (; consumed < actions.length; consumed++) {
      const e = actions[consumed]
      if (e.channel === CHAT && e.rejectionReason === undefined) refChat = reduceChat(refChat, e.action).state
    }
    return refChat
  }
  const counts = {}
  const everything = new Set()
  let next = 0
  let calls = 0

  const ids = () => (host.getState().customizations ?? []).map((c) => c.id)
  const send = (channel, action) => {
    const sent = mirror.dispatch(channel, action)
    host.dispatch(action, { clientId: mirror.clientId, clientSeq: sent.clientSeq })
  }
  const ready = () => ids().filter((id) => findCustomization(host.getState(), id)?.state.kind === 'ready')

  const ops = {
    async add() {
      if (ids().length >= 4) return
      const big = random() < 0.1
      const id = await host.addServer({ name: `s${next++}`, config: big ? everythingEntry() : fixtureEntry('tools-server.mjs') })
      if (big) everything.add(id)
    },
    start() { const id = pick(ids()); if (id) send(SESSION, { type: 'session/mcpServerStartRequested', id }) },
    stop() { const id = pick(ids()); if (id) send(SESSION, { type: 'session/mcpServerStopRequested', id }) },
    toggle() {
      const id = pick(ids())
      if (id) send(SESSION, { type: 'session/customizationToggled', id, enablement: [{ kind: 'session', enabled: random() < 0.6 }] })
    },
    // Rejected: entries out of order (the reducer alone would apply it).
    badToggle() {
      const id = pick(ids())
      if (id) send(SESSION, { type: 'session/customizationToggled', id, enablement: [{ kind: 'global', enabled: false }, { kind: 'session', enabled: true }] })
    },
    unknown() { send(SESSION, { type: 'session/mcpServerStartRequested', id: `nope-${next}` }) },
    async crash() {
      const id = pick(ready().filter((x) => !everything.has(x)))
      if (!id) return
      const pid = await host.callTool({ serverId: id, name: 'pid' }).then((r) => Number(r.content[0].text), () => 0)
      if (pid) try { process.kill(pid, 'SIGKILL') } catch {}
    },
    // Lets started servers come up (or fail) so calls and crashes find ready ones.
    async settle() {
      await waitFor(() => !ids().some((id) => findCustomization(host.getState(), id)?.state.kind === 'starting'), { timeout: 20_000, what: 'no server starting' })
    },
    async remove() { const id = pick(ids()); if (id) await host.remove(id).catch(() => {}) },
    async call() {
      const id = pick(ready().filter((x) => !everything.has(x)))
      if (!id) return
      const toolCallId = `tc-${calls++}`
      const start = { type: 'chat/toolCallStart', turnId: 'turn-1', toolCallId, toolName: 'echo', displayName: 'Echo', contributor: { kind: 'mcp', customizationId: id } }
      // The mirror shows the start at once; this host refuses chat actions
      // from clients (its echo rolls it back); the harness owns the chat.
      send(CHAT, start)
      // The harness applies its start and ready to the chat it owns and
      // seeds the mirror with it (the mirror has every envelope up to its serverSeq).
      refChat = reduceChat(advance(), start).state
      refChat = reduceChat(refChat, { type: 'chat/toolCallReady', turnId: 'turn-1', toolCallId, invocationMessage: 'Echo', confirmed: 'not-needed' }).state
      mirror.seed({ serverSeq: mirror.serverSeq, chats: { [CHAT]: refChat } })
      await host.callTool({ serverId: id, name: 'echo', arguments: { message: toolCallId }, chat: CHAT, turnId: 'turn-1', toolCallId }).catch(() => {})
    },
  }
  const weights = [['add', 2], ['start', 2], ['stop', 2], ['toggle', 2], ['unknown', 1], ['badToggle', 2], ['crash', 1], ['remove', 1], ['call', 8], ['settle', 3]]
  const total = weights.reduce((s, [, w]) => s + w, 0)
  const choose = () => {
    let r = random() * total
    for (const [name, w] of weights) if ((r -= w) < 0) return name
    return weights[0][0]
  }

  for (let step = 0; step < STEPS; step++) {
    const op = choose()
    counts[op] = (counts[op] ?? 0) + 1
    await ops[op]()
    // Once the envelopes are delivered, the mirror meets the host (and the reference chat).
    await waitFor(() => isDeepStrictEqual(mirror.session, host.getState()) && mirror.pending === 0 && isDeepStrictEqual(mirror.chat(CHAT), advance()), {
      timeout: 20_000,
      what: `step ${step} (${op}): mirror session = host.getState()`,
      describe: () => `mirror ${JSON.stringify(mirror.session)}\nhost ${JSON.stringify(host.getState())}\npending ${mirror.pending}`,
    })
    // (No second session comparison here: servers change state on their own
    // between two reads; the wait above fails the test if they never meet.)
    assert.deepEqual(mirror.chat(CHAT), advance(), `step ${step} (${op}): chat`)
  }
  assert.deepEqual(gaps, [])
  t.diagnostic(`steps ${STEPS}, seed ${SEED}, envelopes ${actions.length}, tool calls ${calls}, ops ${JSON.stringify(counts)}`)
  console.log(`mirror-live: steps ${STEPS}, seed ${SEED}, envelopes ${actions.length}, tool calls ${calls}, ops ${JSON.stringify(counts)}`)
})
