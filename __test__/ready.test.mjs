// host.whenReady(serverId, {signal, timeoutMs}) (lib/host/ready.js): the
// outcome of a server's start, awaited. `addServer` / `addPlugin` resolve
// while their servers are still `starting` (no tools yet), and for a missing
// command, a crashing server and a non-MCP program alike; `once(host,
// 'toolsChanged')` never settles when the server fails. whenReady resolves
// with the ServerInfo on `ready` and rejects with the code of every other
// outcome, never hanging. Real child processes and a real OAuth world on
// 127.0.0.1 (fixtures/oauth/mini-world.mjs).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { once, getEventListeners } from 'node:events'
import { join } from 'node:path'
import { newHost, fixtureEntry, serverState, waitState, writePlugin, tmpDir, NODE, HostError } from './helpers/host.mjs'
import { startMiniWorld } from './fixtures/oauth/mini-world.mjs'

const TOOLS = fixtureEntry('tools-server.mjs')
const MISSING = { type: 'stdio', command: 'ahp-no-such-command-for-whenready' }
const CRASHING = { type: 'stdio', command: NODE, args: ['-e', 'process.exit(3)'] }
// Not an MCP server: prints lines that are no JSON-RPC, never answers.
const GARBAGE = { type: 'stdio', command: NODE, args: ['-e', 'setInterval(() => console.log("hello, this is not MCP"), 20)'] }
// A program that echoes what it reads: `initialize` comes back as a request, never an answer.
const CAT = { type: 'stdio', command: 'cat' }
// Answers `initialize` with a JSON-RPC error.
const REFUSER = fixtureEntry('init-error-server.mjs')
// Never answers: stays `starting` for as long as the test needs.
const SILENT = { type: 'stdio', command: NODE, args: ['-e', 'setInterval(() => {}, 1000)'] }
const LONG = 600_000

test('whenReady resolves with the ServerInfo once the server is ready; its tools are listed then, and callTool works', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'tools', config: TOOLS })
  const info = await host.whenReady(id)
  assert.equal(info.name, 'ahp-test-tools')
  assert.equal(info.version, '1.0.0')
  assert.ok(['initialize', 'discover'].includes(info.handshake))
  assert.equal(serverState(host, id).kind, 'ready')
  const tools = host.listTools().filter((tool) => tool.customizationId === id)
  assert.deepEqual(tools.map((tool) => tool.toolName).sort(), ['add_tool', 'echo', 'pid', 'sleep'])
  const result = await host.callTool({ serverId: id, name: 'echo', arguments: { message: 'hi' } })
  assert.equal(result.content[0].text, 'echo:hi')
  // Already ready: resolves again, with the same identity.
  assert.deepEqual(await host.whenReady(id), info)
})

test('addPlugin resolves its server ids; whenReady on each settles each one', async (t) => {
  const { host } = newHost(t)
  const root = writePlugin(join(tmpDir(t), 'mixed'), { mcpServers: { good: TOOLS, gone: MISSING } })
  const plugin = await host.addPlugin({ root })
  assert.deepEqual(plugin.servers.sort(), ['mixed/gone', 'mixed/good'])
  const [good, gone] = await Promise.allSettled(['mixed/good', 'mixed/gone'].map((id) => host.whenReady(id)))
  assert.equal(good.status, 'fulfilled')
  assert.equal(good.value.name, 'ahp-test-tools')
  assert.equal(gone.status, 'rejected')
  assert.equal(gone.reason.code, 'command_not_found')
  // A plugin id is no server.
  await assert.rejects(host.whenReady('mixed'), (err) => err instanceof HostError && err.code === 'not_found' && /not an MCP server/.test(err.message))
})

// The start-up timeout is far longer than any wait where the cause is not a
// timeout: such an error state proves the cause was seen.
for (const [name, config, code, startupTimeoutMs] of [
  ['missing', MISSING, 'command_not_found', LONG],
  ['crashing', CRASHING, 'server_exited', LONG],
  ['refuser', REFUSER, 'protocol_error', LONG],
  ['garbage', GARBAGE, 'startup_timeout', 1_500],
  ['cat', CAT, 'startup_timeout', 1_500],
]) {
  test(`a ${name} server: addServer resolves, whenReady rejects with the error state's code ${code}`, async (t) => {
    const { host } = newHost(t)
    const id = await host.addServer({ name, config, startupTimeoutMs })
    const err = await host.whenReady(id).then(() => assert.fail('whenReady resolved'), (e) => e)
    assert.ok(err instanceof HostError)
    assert.equal(err.code, code)
    const state = serverState(host, id)
    assert.equal(state.kind, 'error')
    assert.equal(state.error.errorType, code)
    assert.deepEqual(err.data, { serverId: id, state })
    assert.ok(err.message.includes(state.error.message), err.message)
    // Called again afterwards: rejects at once with the same code.
    await assert.rejects(host.whenReady(id), { code })
  })
}

test('once(host, "toolsChanged") never settles for a server that fails; whenReady rejects instead', async (t) => {
  const { host } = newHost(t)
  const changes = []
  host.on('toolsChanged', ({ serverId }) => changes.push(serverId))
  const id = await host.addServer({ name: 'crashing', config: CRASHING })
  await assert.rejects(host.whenReady(id), { code: 'server_exited' })
  // The host has said all it will about the failed server: the next
  // toolsChanged is a later server's, none ever came for this one (so
  // awaiting once(host, 'toolsChanged') for it would wait for ever).
  const next = once(host, 'toolsChanged')
  const tools = await host.addServer({ name: 'tools', config: TOOLS })
  const [event] = await next
  assert.equal(event.serverId, tools)
  assert.deepEqual(changes, [tools])
  assert.ok(host.listTools().every((tool) => tool.customizationId !== id))
})

test('timeoutMs: rejects `timeout` (data.kind "ready") and leaves the server starting', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'silent', config: SILENT, startupTimeoutMs: LONG })
  const err = await host.whenReady(id, { timeoutMs: 100 }).then(() => assert.fail('resolved'), (e) => e)
  assert.equal(err.code, 'timeout')
  assert.deepEqual(err.data, { kind: 'ready', ms: 100, serverId: id })
  assert.equal(serverState(host, id).kind, 'starting')
})

test('signal: abort rejects `cancelled` with the reason as cause; 40 waits share one abort listener and leave none', async (t) => {
  const { host } = newHost(t)
  const warnings = []
  const onWarning = (w) => warnings.push(w)
  process.on('warning', onWarning)
  t.after(() => process.off('warning', onWarning))
  const id = await host.addServer({ name: 'silent', config: SILENT, startupTimeoutMs: LONG })
  const controller = new AbortController()
  const waits = Array.from({ length: 40 }, () => host.whenReady(id, { signal: controller.signal }).then(() => assert.fail('resolved'), (e) => e))
  assert.equal(getEventListeners(controller.signal, 'abort').length, 1)
  const reason = new Error('user closed the panel')
  controller.abort(reason)
  for (const err of await Promise.all(waits)) {
    assert.equal(err.code, 'cancelled')
    assert.equal(err.cause, reason)
    assert.match(err.message, /user closed the panel/)
  }
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning'), [])
  assert.equal(serverState(host, id).kind, 'starting')
  // An already-aborted signal rejects at once.
  await assert.rejects(host.whenReady(id, { signal: AbortSignal.abort('early') }), (err) => err.code === 'cancelled' && err.cause === 'early')
  // A wait that settles otherwise removes its listener too.
  const other = new AbortController()
  await assert.rejects(host.whenReady(id, { signal: other.signal, timeoutMs: 1 }), { code: 'timeout' })
  assert.equal(getEventListeners(other.signal, 'abort').length, 0)
})

test('stop, toggle off, remove and dispose while waiting reject server_stopped, server_disabled, server_removed, disposed', async (t) => {
  const { host } = newHost(t)
  const add = (name) => host.addServer({ name, config: SILENT, startupTimeoutMs: LONG })

  const stopped = await add('stopped')
  const stopWait = assert.rejects(host.whenReady(stopped), { code: 'server_stopped' })
  host.dispatch({ type: 'session/mcpServerStopRequested', id: stopped })
  await stopWait
  // Not running: rejects at once.
  await waitState(host, stopped, 'stopped')
  await assert.rejects(host.whenReady(stopped), { code: 'server_stopped' })

  const disabled = await add('disabled')
  const disableWait = assert.rejects(host.whenReady(disabled), { code: 'server_disabled' })
  host.dispatch({ type: 'session/customizationToggled', id: disabled, enablement: [{ kind: 'session', enabled: false }] })
  await disableWait
  await assert.rejects(host.whenReady(disabled), { code: 'server_disabled' })

  const removed = await add('removed')
  const removeWait = assert.rejects(host.whenReady(removed), { code: 'server_removed' })
  await host.remove(removed)
  await removeWait
  await assert.rejects(host.whenReady(removed), { code: 'not_found' })

  // A plugin's child: removing the plugin, or toggling the plugin off.
  const root = writePlugin(join(tmpDir(t), 'plug'), { mcpServers: { a: SILENT, b: SILENT } })
  await host.addPlugin({ root, startupTimeoutMs: LONG })
  const children = ['plug/a', 'plug/b'].map((id) => assert.rejects(host.whenReady(id), { code: 'server_disabled' }))
  host.dispatch({ type: 'session/customizationToggled', id: 'plug', enablement: [{ kind: 'session', enabled: false }] })
  await Promise.all(children)
  host.dispatch({ type: 'session/customizationToggled', id: 'plug', enablement: [{ kind: 'session', enabled: true }] })
  await waitState(host, 'plug/a', 'starting')
  const childWait = assert.rejects(host.whenReady('plug/a'), { code: 'server_removed' })
  await host.remove('plug')
  await childWait

  const last = await add('last')
  const disposeWait = assert.rejects(host.whenReady(last), { code: 'disposed' })
  await host.dispose()
  await disposeWait
  await assert.rejects(host.whenReady(last), { code: 'disposed' })
})

test('a start request after a failure: whenReady waits for the new attempt', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'again', config: CRASHING })
  await assert.rejects(host.whenReady(id), { code: 'server_exited' })
  host.dispatch({ type: 'session/mcpServerStartRequested', id })
  // The echo put it back to `starting`; the new attempt fails the same way.
  assert.equal(serverState(host, id).kind, 'starting')
  await assert.rejects(host.whenReady(id), { code: 'server_exited' })
})

test('authRequired rejects auth_required with the state (resource to sign in to)', async (t) => {
  const world = await startMiniWorld()
  t.after(() => world.close())
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'protected', config: { type: 'streamable-http', url: world.resource } })
  const err = await host.whenReady(id).then(() => assert.fail('resolved'), (e) => e)
  assert.equal(err.code, 'auth_required')
  assert.equal(err.data.serverId, id)
  assert.equal(err.data.state.kind, 'authRequired')
  assert.equal(err.data.state.resource.resource, world.resource)
  assert.deepEqual(err.data.state, serverState(host, id))
})

test('unknown ids and bad arguments', async (t) => {
  const { host } = newHost(t)
  await assert.rejects(host.whenReady('nobody'), (err) => err instanceof HostError && err.code === 'not_found' && /nobody/.test(err.message))
  for (const [args, field] of [
    [[''], /^serverId: /],
    [[42], /^serverId: /],
    [['x', 5], /^options: /],
    [['x', { signal: {} }], /^options\.signal: /],
    [['x', { timeoutMs: -1 }], /^options\.timeoutMs: /],
    [['x', { timeoutMs: 'soon' }], /^options\.timeoutMs: /],
    [['x', { timeoutMs: 2 ** 31 }], /^options\.timeoutMs: /],
  ]) {
    await assert.rejects(host.whenReady(...args), (err) => err instanceof HostError && err.code === 'invalid_argument' && field.test(err.message), JSON.stringify(args))
  }
})

// Issue 24, item 4: a crash whose restart is scheduled is on its way back.
test('whenReady during the restart backoff waits for the restarted server; the error state says a restart is coming', async (t) => {
  const { host, actions } = newHost(t, { limits: { restartBackoffMs: 1500 } })
  const id = await host.addServer({ name: 'tools', config: TOOLS })
  await host.whenReady(id)
  const first = await host.callTool({ serverId: id, name: 'pid' })
  const pid = Number(first.content[0].text)
  process.kill(-pid, 'SIGKILL')
  const crashed = await waitState(host, id, 'error')
  assert.deepEqual(crashed.error._meta?.['ahp-mcp-host/restart'], { delayMs: 1500, attempt: 1, maxRestarts: 3 })
  const info = await host.whenReady(id, { timeoutMs: 60_000 })
  assert.equal(info.name, 'ahp-test-tools')
  const again = await host.callTool({ serverId: id, name: 'pid' })
  assert.notEqual(Number(again.content[0].text), pid)
  assert.ok(actions.some((e) => e.action.type === 'session/mcpServerStateChanged' && e.action.id === id && e.action.state.error?._meta), 'the restart meta was published')
})

// Issue 24, item 4: the waiter settles only once the listeners have had the
// envelopes that made the server ready, so a mirror fed by them agrees.
/** A host on session `name` with a tools server `server` it waited for; `mirror` fed its actions when `mirrored`. */
async function readyWithMirror(t, AhpStateMirror, name, server, mirrored) {
  const session = `ahp-session:/${name}`
  const { host } = newHost(t, { session })
  const mirror = new AhpStateMirror({ session })
  if (mirrored) host.on('action', (e) => mirror.receive(e))
  const id = await host.addServer({ name: server, config: TOOLS })
  await host.whenReady(id)
  return { host, mirror, id }
}

test('whenReady settles only after the action listeners received the ready state (a state mirror shows it, 20 of 20)', async (t) => {
  const { AhpStateMirror } = await import('../index.js').then((m) => m.default ?? m)
  for (let run = 0; run < 20; run++) {
    const { host, mirror, id } = await readyWithMirror(t, AhpStateMirror, `ready-mirror-${run}`, `tools${run}`, true)
    const mirrored = mirror.session.customizations?.find((c) => c.id === id)
    assert.equal(mirrored?.state?.kind, 'ready', `run ${run}: the mirror shows ${JSON.stringify(mirrored?.state)}`)
    await host.dispose()
  }
})

test('whenReady settles once the ready server\'s tools are in the state too (getState and a mirror have them, 30 of 30)', async (t) => {
  // Red team of issue 28, F5: `ready` is published before the server's tools,
  // and whenReady settled at `ready` (getState().serverTools had none, 1 run in 30).
  const { AhpStateMirror } = await import('../index.js').then((m) => m.default ?? m)
  for (let run = 0; run < 30; run++) {
    // Half the runs without an `action` listener: the tools action may then go unparsed.
    const { host, mirror, id } = await readyWithMirror(t, AhpStateMirror, `ready-tools-${run}`, `tools${run}`, run % 2 === 0)
    const listed = host.listTools().filter((tool) => tool.customizationId === id).length
    assert.ok(listed > 0, `run ${run}: listTools has the server's tools`)
    const inState = (host.getState().serverTools ?? []).filter((d) => d._meta?.['ahp-mcp-host/source']?.customizationId === id)
    assert.equal(inState.length, listed, `run ${run}: getState().serverTools has them`)
    if (run % 2 === 0) assert.equal(mirror.session.serverTools?.length, listed, `run ${run}: the mirror has them`)
    await host.dispose()
  }
})
