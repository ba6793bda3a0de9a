// What a server says about itself (serverInfo, instructions, capabilities)
// shows no kept secret value: a server may echo a configured env value,
// header value or URL query into it (src/mcp/identity.rs, `cut`). Checked
// in the actions, getState(), serverInfo(id) and the logs, with the
// instructions cut inside the value. Red team of issue 28's stop 54.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { newHost, uniqueMarker } from './helpers/host.mjs'

const SERVER = fileURLToPath(new URL('./fixtures/identity-echo-server.mjs', import.meta.url))

test("a server's name, instructions and capabilities show no kept secret value", async (t) => {
  const secret = `${uniqueMarker('x')}-identity-canary-${uniqueMarker('y')}`
  const { host, actions, logs } = newHost(t)
  for (const cut of [4, 9]) {
    const config = { type: 'stdio', command: process.execPath, args: [SERVER], env: { SECRET: secret, CUT: String(cut) } }
    const id = await host.addServer({ name: `who-${cut}`, config })
    await host.whenReady(id, { timeoutMs: 20_000 })
    const info = host.serverInfo(id)
    assert.match(info.name, /^name \[redacted\]$/, JSON.stringify(info.name))
    assert.match(info.instructions, /\[redacted\]$/, `cut ${cut}: the piece before the cut is redacted`)
    const shown = JSON.stringify({ info, state: host.getState(), actions, logs })
    assert.ok(!shown.includes(secret.slice(0, 4)), `cut ${cut}: a piece of the value is shown`)
  }
})
