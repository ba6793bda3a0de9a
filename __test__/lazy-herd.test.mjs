// Concurrent first calls on a lazy server, and the call's time limits
// during the lazy start (issue 29 red team F2, F5; these failed before the
// fix in src/host/lazy.rs `started` and the actor's `Command::Wake`).
//
// F2: every waiting call sent its own start; once one attempt failed, the
// queued starts restarted the server at once, the other calls saw
// `starting` again and failed after twice the startup timeout with a
// generic `timeout` instead of the start's code, and processes were spawned
// for nobody. Expected: concurrent first calls share one start; when it
// fails, every call waiting on it fails with its code (`server_exited`,
// `startup_timeout`) and no further start is made for them; a new call
// after the failure may start again.
//
// F5: `timeoutMs`, `maxTotalTimeoutMs`, the server's `callMaxTotalMs` and
// the host's `limits.callMaxTotalMs` did not bound the wait for the lazy
// start (a call with a 400 ms limit was served after the 2.5 s start).
// Expected: the call fails `timeout` with the limit's kind while the start
// goes on.
//
// Each test warms the tool cache with a working run of the fixture, then
// adds the same configuration (same digest: only env values differ) whose
// start exits at once, never answers, or is slow (START_MODE).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { NODE, FIXTURES, newHost, tmpDir, waitFor, waitState, serverState, rejectsWith } from './helpers/host.mjs'

const SCRIPT = join(FIXTURES, 'lazy-tools-server.mjs')

const starts = (log) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0)

/** A stdio entry of the fixture, logging its starts to `log`, started as `mode`. */
const entry = (log, mode) => ({ type: 'stdio', command: NODE, args: [SCRIPT], env: { START_LOG: log, START_MODE: mode } })

/**
 * A host (options `options`) with lazy server `srv` (options `server`) whose
 * tools come from the cache a working run left in its dataDir; no process
 * runs yet. Returns the host and the start log (1 line: the warm run).
 */
async function cold(t, mode, { options = {}, server = {} } = {}) {
  const log = join(tmpDir(t), 'starts.log')
  const dataDir = tmpDir(t, 'ahp-lazy-herd-data-')
  const warm = newHost(t, { dataDir, start: 'lazy' }).host
  await warm.addServer({ name: 'srv', config: entry(log, 'ok'), ...server })
  await waitState(warm, 'srv', 'ready')
  await warm.dispose()
  const { host } = newHost(t, { dataDir, start: 'lazy', ...options })
  await host.addServer({ name: 'srv', config: entry(log, mode), ...server })
  await waitFor(() => host.listTools().length === 3, { what: 'the cached tools' })
  assert.equal(serverState(host, 'srv')?.kind, 'stopped')
  assert.equal(starts(log), 1, 'only the warm run started it')
  return { host, log }
}

/** Each call's outcome: `ok`, or its error code. */
const outcome = (p) => p.then(() => 'ok', (e) => e.code)

const call = (host, extra = {}) => host.callTool({ serverId: 'srv', name: 'whoami', arguments: {}, ...extra })

test('concurrent first calls share one start; all succeed', async (t) => {
  const { host, log } = await cold(t, 'slow:800')
  const calls = Array.from({ length: 30 }, () => call(host).then((r) => r.content[0].text))
  const answers = await Promise.all(calls)
  assert.equal(new Set(answers).size, 1, `one process answered them all: ${[...new Set(answers)]}`)
  assert.equal(starts(log) - 1, 1, 'one start')
})

test('concurrent first calls on a lazy server that exits at once all fail server_exited, with one start', async (t) => {
  const { host, log } = await cold(t, 'exit', { server: { startupTimeoutMs: 1500 } })
  const codes = await Promise.all(Array.from({ length: 6 }, () => outcome(call(host))))
  assert.deepEqual(codes, Array(6).fill('server_exited'))
  assert.equal(starts(log) - 1, 1, 'one start for the six calls')
  assert.equal(serverState(host, 'srv')?.kind, 'error', 'not started again')
  await waitFor(() => host.processCount === 0, { what: 'no process' })
  // A call after the failure starts it again.
  assert.equal(await outcome(call(host)), 'server_exited')
  assert.equal(starts(log) - 1, 2)
})

test('first calls on a lazy server that never answers all fail startup_timeout with one start, a call that joined the start too', async (t) => {
  const { host, log } = await cold(t, 'hang', { server: { startupTimeoutMs: 1500 } })
  const first = Array.from({ length: 3 }, () => outcome(call(host)))
  await waitFor(() => starts(log) === 2, { what: 'the start under way' })
  assert.equal(serverState(host, 'srv')?.kind, 'starting')
  // Joins the start under way, and fails with it.
  const joined = outcome(call(host))
  assert.deepEqual(await Promise.all([...first, joined]), Array(4).fill('startup_timeout'))
  assert.equal(starts(log) - 1, 1, 'one start for the four calls')
  assert.equal(serverState(host, 'srv')?.kind, 'error')
})

/**
 * A first call on a server whose start takes 2.5 s fails `timeout` of
 * `kind` by its 400 ms limit (given by `extra`, `server` or `options`),
 * while the server is still starting; the start goes on and serves the
 * next call.
 */
async function boundedWait(t, kind, { extra = {}, server = {}, options = {} }) {
  const { host, log } = await cold(t, 'slow:2500', { server, options })
  const err = await rejectsWith(() => call(host, extra), 'timeout')
  assert.equal(serverState(host, 'srv')?.kind, 'starting', 'failed while the server started')
  assert.deepEqual(err.data, { kind, ms: 400 })
  assert.match(err.message, /the start goes on/)
  await waitState(host, 'srv', 'ready', { timeout: 20_000 })
  assert.match((await call(host)).content[0].text, /^pid \d+$/)
  assert.equal(starts(log) - 1, 1)
}

test('a call\'s timeoutMs bounds the wait for the lazy start (kind inactivity), the start goes on', async (t) => {
  await boundedWait(t, 'inactivity', { extra: { timeoutMs: 400 } })
})

test('a call\'s maxTotalTimeoutMs bounds the wait for the lazy start (kind total)', async (t) => {
  await boundedWait(t, 'total', { extra: { maxTotalTimeoutMs: 400 } })
})

test('a server\'s callMaxTotalMs bounds the wait for its lazy start', async (t) => {
  await boundedWait(t, 'total', { server: { callMaxTotalMs: 400 } })
})

test('the host\'s limits.callMaxTotalMs bounds the wait for a lazy start', async (t) => {
  await boundedWait(t, 'total', { options: { limits: { callMaxTotalMs: 400 } } })
})
