// dispose(): idempotent, the SAME promise on every call (a second
// concurrent dispose() waits for the same shutdown, both resolve only once
// every server process is gone); requests in flight reject `disposed` (not
// the `server_exited` of the connection the shutdown closes); a server
// that keeps writing while it is stopped never writes into a closed pipe
// (the host drains its stdout until it exits), so no EPIPE lines.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, tmpDir, waitState, waitFor, fixtureEntry, rejectsWith } from './helpers/host.mjs'

test('two concurrent dispose() calls return the same promise; both resolve only after every server is gone', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'tools', config: fixtureEntry('tools-server.mjs') })
  await waitState(host, id, 'ready')
  assert.equal(host.processCount, 1)
  const first = host.dispose()
  const second = host.dispose()
  assert.equal(first, second, 'the same promise')
  const counts = []
  await Promise.all([
    first.then(() => counts.push(['first', host.processCount])),
    second.then(() => counts.push(['second', host.processCount])),
  ])
  assert.deepEqual(counts, [['first', 0], ['second', 0]])
  assert.equal(host.dispose(), first, 'the same promise after it settled, too')
  await rejectsWith(() => host.listResources(id), 'disposed')
})

test('requests in flight when dispose() is called reject disposed, not server_exited', async (t) => {
  const { host } = newHost(t)
  const calls = join(tmpDir(t), 'calls.jsonl')
  const config = { ...fixtureEntry('slow-server.mjs'), env: { CANCEL_LOG: calls } }
  const id = await host.addServer({ name: 'slow', config })
  await waitState(host, id, 'ready')
  const call = host.callTool({ serverId: id, name: 'wait', arguments: { ms: 60_000 } })
  const never = host.callTool({ serverId: id, name: 'never' })
  // Both calls reached the server.
  const received = () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n').length : 0)
  await waitFor(() => received() === 2, { what: 'both calls received' })
  const disposing = host.dispose()
  await Promise.all([call, never].map((pending) => assert.rejects(pending, (err) => {
    assert.equal(err.code, 'disposed', err.message)
    return true
  })))
  await disposing
  assert.equal(host.processCount, 0)
})

test('disposing while a tool streams progress: no EPIPE from the server, the call rejects disposed', async (t) => {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'stream', config: fixtureEntry('progress-stream-server.mjs') })
  await waitState(host, id, 'ready')
  const call = host.callTool({ serverId: id, name: 'stream' })
  await waitFor(() => logs.some((l) => l.target === 'server.stderr' && /stream-started/.test(l.message)), { what: 'stream-started' })
  // Let it stream for a while.
  await new Promise((r) => setTimeout(r, 200))
  const disposing = host.dispose()
  await assert.rejects(call, (err) => err.code === 'disposed')
  await disposing
  assert.equal(host.processCount, 0)
  const failedWrites = logs.filter((l) => /EPIPE|write failed/.test(l.message))
  assert.deepEqual(failedWrites, [], `${failedWrites.length} failed-write log lines`)
})

test('resources and prompts requests in flight reject disposed too', async (t) => {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'silent', config: fixtureEntry('silent-lists-server.mjs'), protocol: 'legacy' })
  await waitState(host, id, 'ready')
  const pending = [
    host.listResources(id),
    host.readResource(id, 'file:///r'),
    host.listPrompts(id),
    host.getPrompt(id, 'p'),
  ]
  const got = () => logs.filter((l) => l.target === 'server.stderr' && /^got /.test(l.message)).length
  await waitFor(() => got() === 4, { what: 'the four requests received' })
  const disposing = host.dispose()
  const codes = await Promise.all(pending.map((p) => p.then(() => 'resolved', (err) => err.code)))
  assert.deepEqual(codes, ['disposed', 'disposed', 'disposed', 'disposed'])
  await disposing
})
