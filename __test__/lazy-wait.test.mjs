// A call waiting for a lazy server's start honours what happens to the
// server meanwhile (issue 29 review; these failed before the fix in
// src/host/lazy.rs `started`).
//
//   1. Toggled off while the call waits: the waiting call sees `stopped`,
//      has not "asked" yet, and sends `Start` itself (src/host/lazy.rs,
//      `started`: `Shown::Stopped if !asked`). A disabled server is started,
//      becomes ready, its tools are published again and the call (and later
//      ones) are served. Expected: `server_disabled` (or `server_stopped`),
//      the server stays stopped, no process.
//   2. Stop request while the call waits: same path, the stop is undone by
//      the call. Expected (lazy.rs doc of `wake`): `server_stopped`.
//   3. Removed while the call waits: the call holds the `ServerHandle` and
//      so the watch sender, `changed()` never errors; the call waits for
//      twice the startup timeout (60 s by default) and fails `timeout`
//      instead of `server_removed`.
//   4. (red team of issue 29, F1) A tool switched off (setToolEnabled)
//      while the call waits: the filter was checked only before the wait,
//      so the call was sent once the server was ready. Expected:
//      `tool_disabled`, as for a call made after the switch.
//
// The server starts slowly (1.5 s before the SDK fixture is imported) so
// each action lands while the call waits.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { NODE, FIXTURES, newHost, sleep, waitFor, serverState, rejectsWith } from './helpers/host.mjs'

const SCRIPT = join(FIXTURES, 'lazy-tools-server.mjs')
const slow = () => ({ type: 'stdio', command: NODE, args: ['-e', `setTimeout(() => import(${JSON.stringify(SCRIPT)}), 1500)`] })

async function waitingCall(t, options = {}) {
  const { host } = newHost(t, { start: 'lazy', ...options })
  await host.addServer({ name: 'slow', config: slow() })
  const call = host.callTool({ serverId: 'slow', name: 'whoami', arguments: {} })
  call.catch(() => {})
  await sleep(300)
  assert.equal(serverState(host, 'slow')?.kind, 'starting')
  return { host, call }
}

test('a lazy server toggled off while a call waits for its start is not started again by that call', async (t) => {
  const { host, call } = await waitingCall(t)
  host.dispatch({ type: 'session/customizationToggled', id: 'slow', enablement: [{ kind: 'session', enabled: false }] }, { clientId: 'c', clientSeq: 1 })
  await rejectsWith(() => call, 'server_disabled').catch(async (e) => {
    // server_stopped is acceptable too; being served is not.
    if (!/server_stopped/.test(e.message)) throw e
  })
  await sleep(2500)
  assert.equal(serverState(host, 'slow')?.kind, 'stopped', 'the disabled server stays stopped')
  assert.equal(host.processCount, 0, 'no process for a disabled server')
  assert.equal(host.listTools().filter((x) => x.customizationId === 'slow').length, 0, 'its tools are not published')
})

test('a stop request while a call waits for a lazy start fails the call with server_stopped and is not undone', async (t) => {
  const { host, call } = await waitingCall(t)
  host.dispatch({ type: 'session/mcpServerStopRequested', id: 'slow' }, { clientId: 'c', clientSeq: 1 })
  await rejectsWith(() => call, 'server_stopped')
  await sleep(2500)
  assert.equal(serverState(host, 'slow')?.kind, 'stopped')
  assert.equal(host.processCount, 0)
})

test('removing a lazy server while a call waits for its start fails the call promptly with server_removed', async (t) => {
  const { host, call } = await waitingCall(t, { limits: { startupTimeoutMs: 20_000 } })
  const t0 = Date.now()
  await host.remove('slow')
  const settled = await Promise.race([call.then(() => 'served', (e) => e.code), sleep(5000).then(() => 'still pending after 5 s')])
  assert.equal(settled, 'server_removed', `settled after ${Date.now() - t0} ms`)
  await waitFor(() => host.processCount === 0, { what: 'no process' })
})

test('a tool switched off while a call waits for the lazy start is refused tool_disabled, not sent', async (t) => {
  const { host, call } = await waitingCall(t)
  host.setToolEnabled({ serverId: 'slow', tool: 'whoami', enabled: false })
  await rejectsWith(() => call, 'tool_disabled')
  // The server came up meanwhile; its other tools are served, this one is not.
  await waitFor(() => serverState(host, 'slow')?.kind === 'ready', { what: 'the server ready' })
  await rejectsWith(() => host.callTool({ serverId: 'slow', name: 'whoami', arguments: {} }), 'tool_disabled')
  const echoed = await host.callTool({ serverId: 'slow', name: 'echo', arguments: { text: 'hi' } })
  assert.equal(echoed.content[0].text, 'hi')
})
