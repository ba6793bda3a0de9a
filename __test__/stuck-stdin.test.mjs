// A server that stops reading its stdin (issue 24, item 3): once the pipe is
// full every write to it blocks. `timeoutMs` and `AbortSignal` are armed
// when a request is issued and never wait for a write (nor for the
// `notifications/cancelled` that follows them), so each request below ends
// with what it asked for long before the server exits on its own (after
// STALL_EXIT_MS). Each test checks that the server process is still alive
// when its requests have settled: a request held until the server exits
// (the old behaviour, even when its code is then `timeout`) fails that.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, waitState, fixtureEntry, rejectsWith, waitFor, tmpDir, pidAlive } from './helpers/host.mjs'

const LIMIT = { timeout: 90_000 }
const BIG = 'x'.repeat(1024 * 1024) // 1 MiB: far more than a pipe holds

async function stuckServer(t) {
  const { host, actions } = newHost(t)
  const pidFile = join(tmpDir(t), 'pid')
  const entry = { ...fixtureEntry('stuck-stdin-server.mjs'), env: { STALL_EXIT_MS: '45000', PID_FILE: pidFile } }
  const id = await host.addServer({ name: 'stuck', config: entry })
  await waitState(host, id, 'ready')
  const pid = Number(readFileSync(pidFile, 'utf8'))
  // The server stops reading; then one 1 MiB request fills the pipe.
  host.callTool({ serverId: id, name: 'stall' }).catch(() => {})
  const filler = host.callTool({ serverId: id, name: 'echo', arguments: { text: BIG }, timeoutMs: 60_000 })
  filler.catch(() => {})
  const stillRunning = () => assert.ok(pidAlive(pid), 'the requests settled only when the server exited')
  return { host, id, actions, stillRunning }
}

test('timeoutMs ends a call to a server whose stdin is full: small and 1 MiB arguments', LIMIT, async (t) => {
  const { host, id, stillRunning } = await stuckServer(t)
  const small = rejectsWith(() => host.callTool({ serverId: id, name: 'echo', arguments: { text: 'hi' }, timeoutMs: 1000 }), 'timeout')
  const big = rejectsWith(() => host.callTool({ serverId: id, name: 'echo', arguments: { text: BIG }, timeoutMs: 1000 }), 'timeout')
  const [a, b] = await Promise.all([small, big])
  assert.equal(a.data?.kind, 'inactivity')
  assert.equal(b.data?.kind, 'inactivity')
  stillRunning()
})

test('maxTotalTimeoutMs and resource timeouts end requests to a server whose stdin is full', LIMIT, async (t) => {
  const { host, id, stillRunning } = await stuckServer(t)
  const total = await rejectsWith(() => host.callTool({ serverId: id, name: 'echo', arguments: { text: 'hi' }, timeoutMs: 30_000, maxTotalTimeoutMs: 1000 }), 'timeout')
  assert.equal(total.data?.kind, 'total')
  await rejectsWith(() => host.listPrompts(id, { timeoutMs: 1000 }), 'timeout')
  stillRunning()
})

test('an AbortSignal ends a call to a server whose stdin is full, and its AHP tool call completes', LIMIT, async (t) => {
  const { host, id, actions, stillRunning } = await stuckServer(t)
  const controller = new AbortController()
  const chat = 'ahp-chat:/stuck-1'
  const call = rejectsWith(() => host.callTool({ serverId: id, name: 'echo', arguments: { text: 'hi' }, signal: controller.signal, chat, turnId: 't1', toolCallId: 'c1' }), 'cancelled')
  setTimeout(() => controller.abort(new Error('user pressed stop')), 500)
  await call
  const done = await waitFor(() => actions.find((e) => e.channel === chat && e.action.type === 'chat/toolCallComplete'), { what: 'chat/toolCallComplete of the aborted call' })
  assert.equal(done.action.toolCallId, 'c1')
  assert.equal(done.action.result.success, false)
  stillRunning()
})
