// An abort at any moment after a request started (issue 13 case 8): in the
// same tick as `callTool()` / `readResource()` / `getPrompt()`, 1 ms later,
// or after the server received the request, it rejects promptly with code
// `cancelled` and the signal's reason as `cause` (never the full timeout),
// and the server hears `notifications/cancelled` exactly once for every
// request that reached it (never for one it did not receive, never twice).
// The server (fixtures/cancel-server.mjs) never answers these requests, so a
// lost abort could only end in `timeout` (30 s here: a generous bound that
// only catches "the abort was lost").

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { newHost, tmpDir, fixtureEntry, waitFor, waitState, sleep, readJsonLines } from './helpers/host.mjs'

const RUNS = 50
const TIMEOUT_MS = 30_000

/** The request kinds that take a signal: each starts one never-answered request. */
const KINDS = {
  'tools/call': (host, id, signal) => host.callTool({ serverId: id, name: 'wait', timeoutMs: TIMEOUT_MS, signal }),
  'resources/read': (host, id, signal) => host.readResource(id, 'slow://wait', { signal }),
  'prompts/get': (host, id, signal) => host.getPrompt(id, 'slow', undefined, { signal }),
}

/** When the abort comes, after the request started. */
const MOMENTS = {
  'in the same tick': async () => {},
  '1 ms later': () => sleep(1),
  'after the server received it': (received) => waitFor(received, { what: 'the server received the request' }),
}

async function cancelServer(t) {
  const file = join(tmpDir(t), 'cancel.log')
  const entry = { ...fixtureEntry('cancel-server.mjs'), env: { CANCEL_LOG: file } }
  const { host } = newHost(t, { limits: { callTimeoutMs: TIMEOUT_MS } })
  const id = await host.addServer({ name: 'cancel', config: entry })
  await waitState(host, id, 'ready')
  return { host, id, file }
}

for (const [method, start] of Object.entries(KINDS)) {
  test(`${method}: an abort at any moment after the request started cancels it; notifications/cancelled once if it was received`, async (t) => {
    const { host, id, file } = await cancelServer(t)
    const received = () => readJsonLines(file).filter((e) => e.method === method).length
    const outcomes = {}
    for (const [moment, wait] of Object.entries(MOMENTS)) {
      outcomes[moment] = { sent: 0 }
      for (let i = 0; i < RUNS; i++) {
        const before = received()
        const controller = new AbortController()
        const reason = new Error(`stop ${moment} #${i}`)
        const request = start(host, id, controller.signal)
        await wait(() => received() > before)
        controller.abort(reason)
        const err = await request.then(() => assert.fail('it resolved'), (e) => e)
        assert.equal(err.code, 'cancelled', `${moment} #${i}: ${err.code}: ${err.message}`)
        assert.equal(err.cause, reason)
        assert.match(err.message, new RegExp(`stop ${moment} #${i}`))
        if (received() > before) outcomes[moment].sent++
      }
    }
    assert.equal(outcomes['after the server received it'].sent, RUNS)
    // A request answered after every cancellation: the server read them all first.
    assert.equal((await host.callTool({ serverId: id, name: 'echo', arguments: { text: 'after' } })).content[0].text, 'after')
    const log = readJsonLines(file)
    const requests = log.filter((e) => e.method === method && e.name !== 'echo').map((e) => e.requestId)
    const cancels = new Map()
    for (const e of log.filter((e) => 'cancelled' in e)) cancels.set(e.cancelled, (cancels.get(e.cancelled) ?? 0) + 1)
    for (const requestId of requests) assert.equal(cancels.get(requestId), 1, `request ${requestId}: notifications/cancelled ${cancels.get(requestId) ?? 0} times`)
    for (const requestId of cancels.keys()) assert.ok(requests.includes(requestId), `notifications/cancelled for request ${requestId}, which the server never received`)
    t.diagnostic(`${method}: requests that reached the server before the abort: ${JSON.stringify(outcomes)}`)
  })
}
