// What the host cuts of a server's stderr shows no piece of a secret value
// the cut split (src/transport/stderr.rs, `redact::hidden_cut` and
// `hidden_cut_start`): neither the start of the value before a long line's
// cut (the `log` record), nor the end of it where the kept 4 KiB tail
// begins (the `server_exited` error, its state in the actions, the logs).
// Red team of issue 28's stop 53 (F1, F2).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { newHost, uniqueMarker } from './helpers/host.mjs'

const SERVER = fileURLToPath(new URL('./fixtures/stderr-cut-server.mjs', import.meta.url))

test('a stderr line or tail cut inside a kept secret shows no piece of it in logs, errors or actions', async (t) => {
  // Random at both ends, so a 4-byte piece of either end is the value's.
  const secret = `${uniqueMarker('x')}-stderr-canary-${uniqueMarker('y')}`
  const { host, actions, logs } = newHost(t)
  for (const cut of [4, 9, secret.length - 4]) {
    const config = { type: 'stdio', command: process.execPath, args: [SERVER], env: { SECRET: secret, CUT: String(cut) } }
    const id = await host.addServer({ name: `cut-${cut}`, config })
    const failed = await host.whenReady(id, { timeoutMs: 20_000 }).then(() => null, (e) => e)
    assert.equal(failed?.code, 'server_exited', `cut ${cut}: ${failed?.message}`)
    const head = secret.slice(0, cut)
    const tail = secret.slice(secret.length - cut)
    const shown = JSON.stringify({ message: failed.message, data: failed.data, actions, logs })
    assert.ok(!shown.includes(head), `cut ${cut}: the start of the value before a line's cut is shown`)
    assert.ok(!shown.includes(tail), `cut ${cut}: the end of the value at the tail's start is shown`)
    assert.match(failed.message, /stderr: \[redacted\]b/, `cut ${cut}: ${failed.message.slice(0, 200)}`)
    assert.ok(logs.some((l) => /e\[redacted\]… \[truncated/.test(l.message)), `cut ${cut}: the cut line is logged, redacted`)
  }
})
