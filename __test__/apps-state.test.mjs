// MCP Apps in the AHP state (issue 11; AHP "MCP Servers › MCP Apps",
// SEP-1865): with the host option `mcpApps`, servers are told the
// `io.modelcontextprotocol/ui` extension (both eras), a server that hosts
// Apps carries `mcpApp.capabilities` derived from what it declares, every
// ready server carries an `mcp://` `channel` (new after each restart, gone
// whenever it is not ready), and the tool-call actions of an App tool call
// carry the tool's `_meta.ui`. Without the option none of it happens.
//
// Real servers: the published `@modelcontextprotocol/server-basic-vanillajs`
// and `fixtures/apps-state-server.mjs` (SDK v2, both eras). Every test
// replays the session actions the host emitted through `ahp`'s session
// reducer (helpers/replay.mjs) and compares them with `host.getState()`.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { isDeepStrictEqual } from 'node:util'
import { join } from 'node:path'
import {
  newHost, fixtureEntry, waitFor, waitState, stateHistory, callText, ROOT, NODE,
} from './helpers/host.mjs'
import { replaySession } from './helpers/replay.mjs'

const SESSION = 'ahp-session:/apps'
const CHAT = 'ahp-chat:/apps'
const EXTENSION = 'io.modelcontextprotocol/ui'
const MIME = 'text/html;profile=mcp-app'
const VANILLA = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'index.js')
const vanillaEntry = () => ({ type: 'stdio', command: NODE, args: [VANILLA, '--stdio'] })
const SHOW_UI = { resourceUri: 'ui://show/view.html', visibility: ['model', 'app'], 'x-order': { b: 1, a: 2 } }

// ─── replay through ahp's session reducer (helpers/replay.mjs) ───────────────

/** The session state replayed from `actions` (every envelope since the host began). */
const replay = (actions) => replaySession(actions, SESSION)
const hostView = (host) => host.getState()

/** Waits until the replayed actions give the host's state, and asserts it. */
async function replayMatches(host, actions) {
  // One snapshot of both sides: the host may move on (a later action not yet
  // delivered) between two reads, so the assertion checks the matching pair.
  const pair = await waitFor(() => {
    const replayed = replay(actions)
    const state = hostView(host)
    return isDeepStrictEqual(replayed, state) ? { replayed, state } : undefined
  }, {
    what: 'the replayed actions to give the host state',
    describe: () => `replayed ${JSON.stringify(replay(actions))}\nhost ${JSON.stringify(hostView(host))}`,
  })
  assert.deepEqual(pair.replayed, pair.state)
}

// ─── helpers ──────────────────────────────────────────────────────────────────

function findServer(customizations, id) {
  for (const c of customizations) {
    if (c.id === id) return c.type === 'mcpServer' ? c : undefined
    const child = (c.children ?? []).find((x) => x.id === id)
    if (child) return child.type === 'mcpServer' ? child : undefined
  }
  return undefined
}

function server(host, id) {
  return findServer(host.getState().customizations ?? [], id)
}

async function ready(host, id) {
  await waitState(host, id, 'ready')
  return server(host, id)
}

function start(t, options = {}) {
  return newHost(t, { session: SESSION, ...options })
}

let seq = 0
const dispatch = (host, action) => host.dispatch(action, { clientId: 'apps-state', clientSeq: ++seq })

/**
 * Waits until every envelope emitted so far reached the `action` listener
 * (events and promises travel separately): dispatches a client action the
 * host refuses and waits for its echo.
 */
async function delivered(host, actions) {
  const echo = dispatch(host, { type: 'session/mcpServerStartRequested', id: 'no-such-server' })
  await waitFor(() => actions.some((e) => e.serverSeq === echo.serverSeq), { what: 'the barrier echo' })
}

/** The host's chat actions of tool call `toolCallId`, in order. */
function chatActions(actions, toolCallId) {
  return actions
    .filter((e) => e.channel === CHAT && e.action.toolCallId === toolCallId)
    .sort((a, b) => a.serverSeq - b.serverSeq)
    .map((e) => e.action)
}

/**
 * The tool call's `_meta` after the harness's `chat/toolCallStart` (with
 * `startMeta`) and the host's actions, by the chat reducer's rule (an
 * action's `_meta`, when it has one, replaces the call's).
 */
function replayedCallMeta(startMeta, actions) {
  let meta = startMeta
  for (const a of actions) if (a._meta !== undefined) meta = a._meta
  return meta
}

function chatCall(host, id, name, toolCallId, args = {}) {
  return host.callTool({ serverId: id, name, arguments: args, chat: CHAT, turnId: 'turn-1', toolCallId })
}

// ─── 1. the extension, declared to servers in both eras ──────────────────────

for (const era of [
  { name: '2025 era (initialize)', protocol: 'legacy' },
  { name: '2026-07-28 (per-request capabilities)', protocol: '2026-07-28' },
]) {
  for (const mcpApps of [true, false]) {
    test(`${era.name}: ${mcpApps ? 'with' : 'without'} mcpApps the server ${mcpApps ? 'receives' : 'is told nothing of'} the App MIME type`, async (t) => {
      const { host, actions } = start(t, { mcpApps })
      const id = await host.addServer({ name: 'caps', config: fixtureEntry('apps-state-server.mjs'), protocol: era.protocol })
      await ready(host, id)
      const seen = JSON.parse(await callText(host, id, 'seen'))
      const methods = seen.map((r) => r.method)
      const ui = (r) => r.capabilities?.extensions?.[EXTENSION]
      if (era.protocol === 'legacy') {
        assert.equal(methods[0], 'initialize', JSON.stringify(methods))
        assert.ok(!methods.includes('server/discover'), JSON.stringify(methods))
        const init = seen[0]
        if (mcpApps) assert.deepEqual(ui(init), { mimeTypes: [MIME] })
        else assert.equal(ui(init), undefined, JSON.stringify(init.capabilities))
      } else {
        assert.equal(methods[0], 'server/discover', JSON.stringify(methods))
        assert.ok(!methods.includes('initialize'), JSON.stringify(methods))
        assert.ok(methods.includes('tools/list') && methods.includes('tools/call'), JSON.stringify(methods))
        // Every request carries the client's capabilities (rmcp's per-request `_meta`).
        for (const r of seen) {
          assert.ok(r.capabilities, `${r.method} carries no client capabilities`)
          if (mcpApps) assert.deepEqual(ui(r), { mimeTypes: [MIME] }, r.method)
          else assert.equal(ui(r), undefined, `${r.method}: ${JSON.stringify(r.capabilities)}`)
        }
      }
      await replayMatches(host, actions)
    })
  }
}

// ─── 2. the real MCP Apps server ─────────────────────────────────────────────

test('server-basic-vanillajs: mcpApp and channel once ready; the App tool call carries _meta.ui', async (t) => {
  const { host, actions } = start(t, { mcpApps: true })
  const id = await host.addServer({ name: 'vanilla', config: vanillaEntry() })
  const s = await ready(host, id)
  assert.deepEqual(s.mcpApp, { capabilities: { serverTools: { listChanged: true }, serverResources: { listChanged: true } } })
  assert.match(s.channel, /^mcp:\/apps\/vanilla\/\d+$/)
  const listed = host.listTools().find((x) => x.customizationId === id && x.toolName === 'get-time')
  assert.deepEqual(listed._meta.ui, { resourceUri: 'ui://get-time/mcp-app.html' })
  // The harness starts the call with the catalogue entry's `_meta.ui` and the MCP contributor.
  const result = await chatCall(host, id, 'get-time', 'tc-time')
  assert.match(result.content[0].text, /^\d{4}-/)
  await waitFor(() => chatActions(actions, 'tc-time').some((a) => a.type === 'chat/toolCallComplete'), { what: 'the completion' })
  const [complete] = chatActions(actions, 'tc-time')
  assert.equal(complete.type, 'chat/toolCallComplete')
  assert.equal(complete.result.success, true)
  assert.deepEqual(complete._meta, { ui: listed._meta.ui })
  assert.deepEqual(replayedCallMeta({ ui: listed._meta.ui }, chatActions(actions, 'tc-time')), { ui: listed._meta.ui })
  // mcpApp was published before the ready state that carries the channel.
  const order = actions
    .filter((e) => e.channel === SESSION && JSON.stringify(e.action).includes('"vanilla"'))
    .map((e) => (e.action.type === 'session/mcpServerStateChanged' ? `state:${e.action.state.kind}:${e.action.channel ? 'channel' : '-'}` : `${e.action.type}:${e.action.customization?.mcpApp ? 'mcpApp' : '-'}`))
  const readyAt = order.indexOf('state:ready:channel')
  assert.ok(readyAt > 0 && order.slice(0, readyAt).includes('session/customizationUpdated:mcpApp'), order.join(' '))
  await replayMatches(host, actions)
})

test('server-basic-vanillajs without mcpApps: no mcpApp, no channel, no _meta.ui', async (t) => {
  const { host, actions } = start(t)
  const id = await host.addServer({ name: 'vanilla', config: vanillaEntry() })
  const s = await ready(host, id)
  assert.equal(s.mcpApp, undefined)
  assert.equal(s.channel, undefined)
  await chatCall(host, id, 'get-time', 'tc-plain')
  await waitFor(() => chatActions(actions, 'tc-plain').length > 0, { what: 'the completion' })
  assert.equal(chatActions(actions, 'tc-plain')[0]._meta, undefined)
  const text = JSON.stringify(actions.map((e) => e.action))
  assert.ok(!text.includes('"mcpApp"') && !text.includes('"channel"'), 'no action mentions mcpApp or channel')
  await replayMatches(host, actions)
})

// ─── 3. mcpApp.capabilities, derived ─────────────────────────────────────────

const sampling = async () => ({ role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' })

for (const c of [
  { name: 'listChanged only when declared; no logging, no sampling', flags: [], handlers: undefined, want: { serverTools: { listChanged: true } } },
  { name: 'logging when declared; sampling with a sampling handler', flags: ['no-list-changed', 'logging'], handlers: { sampling }, want: { serverTools: {}, logging: {}, sampling: {} } },
  { name: 'the declared extension without an App tool', flags: ['no-app', 'extension'], handlers: undefined, want: { serverTools: { listChanged: true } } },
  { name: 'no App tool and no extension: no mcpApp, but a channel', flags: ['no-app'], handlers: undefined, want: undefined },
]) {
  test(`mcpApp.capabilities: ${c.name}`, async (t) => {
    const { host, actions } = start(t, { mcpApps: true, handlers: c.handlers })
    const id = await host.addServer({ name: 'derived', config: fixtureEntry('apps-state-server.mjs', c.flags) })
    const s = await ready(host, id)
    assert.deepEqual(s.mcpApp, c.want === undefined ? undefined : { capabilities: c.want })
    assert.match(s.channel, /^mcp:\/apps\/derived\/\d+$/)
    await replayMatches(host, actions)
  })
}

// ─── 4. the channel follows the server's readiness ───────────────────────────

test('the channel is present only while ready: cleared on stop and on a crash, new after each restart; mcpApp is kept', async (t) => {
  const { host, actions } = start(t, { mcpApps: true, limits: { restartBackoffMs: 50 } })
  const id = await host.addServer({ name: 'life', config: fixtureEntry('apps-state-server.mjs') })
  const first = (await ready(host, id)).channel
  const app = server(host, id).mcpApp
  assert.ok(first && app)

  dispatch(host, { type: 'session/mcpServerStopRequested', id })
  await waitState(host, id, 'stopped')
  assert.equal(server(host, id).channel, undefined)
  assert.deepEqual(server(host, id).mcpApp, app, 'mcpApp is kept while not ready')
  await replayMatches(host, actions)

  dispatch(host, { type: 'session/mcpServerStartRequested', id })
  const second = (await ready(host, id)).channel
  assert.ok(second && second !== first, `${second} after ${first}`)

  const pid = Number(await callText(host, id, 'pid'))
  const beforeKill = stateHistory(actions, id).length
  process.kill(pid, 'SIGKILL')
  // The `error` state lasts only the 50 ms backoff: look for it in the
  // delivered actions, not by polling the current state (which can miss it).
  const crashed = await waitFor(
    () => stateHistory(actions, id).slice(beforeKill).find((s) => s.kind === 'error'),
    { timeout: 30_000, what: `an error state of ${id} after SIGKILL` },
  )
  assert.equal(crashed.kind, 'error')
  assert.equal(server(host, id).channel === undefined, server(host, id).state.kind !== 'ready')
  const third = (await ready(host, id)).channel
  assert.ok(third && third !== second && third !== first, `${third} after ${second}`)

  // Every state action: a channel exactly on `ready`, each a new one.
  await delivered(host, actions)
  const states = actions
    .filter((e) => e.action.type === 'session/mcpServerStateChanged' && e.action.id === id)
    .map((e) => [e.action.state.kind, e.action.channel])
  for (const [kind, channel] of states) assert.equal(kind === 'ready', channel !== undefined, JSON.stringify(states))
  const channels = states.filter(([, c]) => c).map(([, c]) => c)
  assert.deepEqual(channels, [first, second, third])
  await replayMatches(host, actions)
})

test('toggled off and removed: the channel goes with the ready state', async (t) => {
  const { host, actions } = start(t, { mcpApps: true })
  const id = await host.addServer({ name: 'toggled', config: fixtureEntry('apps-state-server.mjs') })
  assert.ok((await ready(host, id)).channel)
  dispatch(host, { type: 'session/customizationToggled', id, enablement: [{ kind: 'session', enabled: false }] })
  await waitState(host, id, 'stopped')
  assert.equal(server(host, id).channel, undefined)
  dispatch(host, { type: 'session/customizationToggled', id, enablement: [{ kind: 'session', enabled: true }] })
  assert.ok((await ready(host, id)).channel)
  await host.remove(id)
  assert.equal(server(host, id), undefined)
  await delivered(host, actions)
  const last = actions.filter((e) => e.action.type === 'session/mcpServerStateChanged' && e.action.id === id).at(-1)
  assert.equal(last.action.state.kind, 'stopped')
  assert.equal(last.action.channel, undefined)
  await replayMatches(host, actions)
})

// ─── 5. mcpApp follows a tools re-list ───────────────────────────────────────

for (const protocol of ['legacy', '2026-07-28']) {
  test(`${protocol}: a list_changed re-list that adds or removes the App tool re-publishes mcpApp (only when it changed)`, async (t) => {
    const { host, actions, logs } = start(t, { mcpApps: true })
    const id = await host.addServer({ name: 'relist', config: fixtureEntry('apps-state-server.mjs', ['no-app']), protocol })
    const relists = () => logs.filter((l) => l.serverId === id && /^tools\/list_changed: now/.test(l.message)).length
    const s = await ready(host, id)
    assert.equal(s.mcpApp, undefined)
    const channel = s.channel
    const updates = () => actions.filter((e) => e.action.type === 'session/customizationUpdated' && e.action.customization.id === id)
    await delivered(host, actions)
    const before = updates().length

    assert.equal(await callText(host, id, 'set_app', { present: true }), 'app:true')
    await waitFor(() => server(host, id).mcpApp, { what: 'mcpApp after the App tool was added' })
    assert.deepEqual(server(host, id).mcpApp, { capabilities: { serverTools: { listChanged: true } } })
    assert.equal(server(host, id).channel, channel, 'the channel stays while the connection lives')
    await delivered(host, actions)
    assert.equal(updates().length, before + 1)

    assert.equal(await callText(host, id, 'set_app', { present: false }), 'app:false')
    await waitFor(() => !server(host, id).mcpApp, { what: 'mcpApp removed with the App tool' })
    await delivered(host, actions)
    assert.equal(updates().length, before + 2)
    // A re-list that changes nothing of it publishes nothing: `plain` goes
    // and comes back (two re-lists) while the App tool stays away.
    const relisted = relists()
    const hasPlain = () => host.listTools().some((x) => x.customizationId === id && x.toolName === 'plain')
    assert.equal(await callText(host, id, 'set_plain', { present: false }), 'plain:false')
    await waitFor(() => !hasPlain(), { what: 'plain gone' })
    assert.equal(await callText(host, id, 'set_plain', { present: true }), 'plain:true')
    await waitFor(hasPlain, { what: 'plain back' })
    await delivered(host, actions)
    assert.equal(relists(), relisted + 2)
    assert.equal(updates().length, before + 2)
    assert.equal(await callText(host, id, 'set_app', { present: true }), 'app:true')
    await waitFor(() => server(host, id).mcpApp, { what: 'mcpApp again' })
    await delivered(host, actions)
    assert.equal(updates().length, before + 3)
    await replayMatches(host, actions)
  })
}

// ─── 6. _meta.ui on the tool-call actions of an App tool call ────────────────

test('an App tool call: _meta.ui on toolCallComplete and on each progress action ({progress, ui}); ordinary tools unchanged', async (t) => {
  const { host, actions } = start(t, { mcpApps: true })
  const id = await host.addServer({ name: 'calls', config: fixtureEntry('apps-state-server.mjs'), protocol: 'legacy' })
  await ready(host, id)
  await chatCall(host, id, 'show', 'tc-show', { steps: 2 })
  await chatCall(host, id, 'plain', 'tc-plain', { steps: 2 })
  await waitFor(() => chatActions(actions, 'tc-plain').some((a) => a.type === 'chat/toolCallComplete'), { what: 'both completions' })

  // The fixture sends its two progress notifications back to back; rmcp hands
  // each to a task of its own, so they may arrive swapped, and the host then
  // passes on only the newer one (progress only increases, MCP "Progress").
  const progressed = (list) => {
    const progress = list.slice(0, -1)
    assert.ok(progress.length >= 1 && progress.length <= 2, JSON.stringify(list))
    for (const a of progress) assert.equal(a.type, 'chat/toolCallContentChanged')
    const values = progress.map((a) => a._meta.progress.progress)
    assert.deepEqual(values, [...values].sort(), 'increasing')
    assert.equal(list.at(-1).type, 'chat/toolCallComplete')
    return progress
  }
  const show = chatActions(actions, 'tc-show')
  for (const p of progressed(show)) {
    assert.deepEqual(p._meta, { progress: { message: null, progress: p._meta.progress.progress, total: 2 }, ui: SHOW_UI })
  }
  const showDone = show.at(-1)
  assert.deepEqual(showDone._meta, { ui: SHOW_UI })
  // Verbatim: the server's key order too.
  assert.deepEqual(Object.keys(showDone._meta.ui['x-order']), ['b', 'a'])
  assert.deepEqual(replayedCallMeta({ ui: SHOW_UI }, show), { ui: SHOW_UI })

  const plain = chatActions(actions, 'tc-plain')
  for (const p of progressed(plain)) {
    assert.deepEqual(p._meta, { progress: { message: null, progress: p._meta.progress.progress, total: 2 } })
  }
  assert.equal(plain.at(-1)._meta, undefined)
  await replayMatches(host, actions)
})

test('an App tool call without mcpApps is an ordinary tool call', async (t) => {
  const { host, actions } = start(t)
  const id = await host.addServer({ name: 'calls', config: fixtureEntry('apps-state-server.mjs'), protocol: 'legacy' })
  await ready(host, id)
  await chatCall(host, id, 'show', 'tc-off', { steps: 1 })
  await waitFor(() => chatActions(actions, 'tc-off').length === 2, { what: 'the progress and completion' })
  const [progress, complete] = chatActions(actions, 'tc-off')
  assert.deepEqual(progress._meta, { progress: { message: null, progress: 1, total: 1 } })
  assert.equal(complete._meta, undefined)
  await replayMatches(host, actions)
})

test('a _meta.ui over limits.maxAppUiMetaBytes is left off with a warn log naming the server and tool', async (t) => {
  const { host, actions, logs } = start(t, { mcpApps: true, limits: { maxAppUiMetaBytes: 1024 } })
  const id = await host.addServer({ name: 'bounded', config: fixtureEntry('apps-state-server.mjs', ['big=2000']), protocol: 'legacy' })
  await ready(host, id)
  assert.equal(await callText(host, id, 'big', {}, { chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-big' }), 'big')
  assert.equal(await callText(host, id, 'show', {}, { chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-small' }), 'shown')
  await waitFor(() => chatActions(actions, 'tc-small').length === 1, { what: 'both completions' })
  const [big] = chatActions(actions, 'tc-big')
  assert.equal(big.type, 'chat/toolCallComplete')
  assert.equal(big._meta, undefined)
  assert.deepEqual(chatActions(actions, 'tc-small')[0]._meta, { ui: SHOW_UI })
  const warned = logs.filter((l) => l.level === 'warn' && l.target === 'host.apps')
  assert.equal(warned.length, 1, JSON.stringify(warned))
  assert.equal(warned[0].serverId, id)
  assert.match(warned[0].message, /tool "big"/)
  assert.match(warned[0].message, /maxAppUiMetaBytes \(1024\)/)
  // The catalogue still lists the tool with its whole _meta.
  assert.equal(host.listTools().find((x) => x.toolName === 'big')._meta.ui.pad.length, 2000)
  await replayMatches(host, actions)
})
