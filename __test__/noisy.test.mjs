// A server that prints banners on stdout and floods stderr (several MB, part
// of it one unterminated 3 MB line) must still reach ready and answer calls.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, fixtureEntry, waitState, waitFor } from './helpers/host.mjs'

test('noisy server: stdout banners and a multi-MB stderr flood do not break the connection', async (t) => {
  const { host, logs, actions } = newHost(t)
  const id = await host.addServer({ name: 'noisy', config: fixtureEntry('noisy-server.mjs') })
  await waitState(host, id, 'ready', { timeout: 60_000 })

  const tool = host.listTools().find((t) => t.customizationId === id && t.toolName === 'add')
  assert.ok(tool, 'tool add is listed')

  for (let i = 0; i < 100; i++) {
    const r = await host.callTool({ serverId: id, name: 'add', arguments: { a: i, b: 1000 } })
    assert.equal(r.content[0].text, String(i + 1000), `call ${i}`)
    assert.ok(!r.isError)
  }
  assert.equal(host.getState().customizations.find((c) => c.id === id).state.kind, 'ready')
  // Never left ready along the way.
  const kinds = actions.filter((a) => a.action.type === 'session/mcpServerStateChanged').map((a) => a.action.state.kind)
  assert.deepEqual(kinds, ['ready'])

  // Non-JSON stdout lines were reported as (rate-limited) warnings.
  const stdio = logs.filter((l) => l.target === 'host.stdio')
  assert.ok(stdio.length >= 1, 'a host.stdio warning was emitted')
  assert.ok(stdio.every((l) => l.level === 'warn' && l.serverId === id), JSON.stringify(stdio.slice(0, 3)))
  assert.ok(stdio.some((l) => l.message.includes('Server running on stdio')), JSON.stringify(stdio.map((l) => l.message)))
  // Rate limited: far fewer warnings than banner lines (>= 100 "Handled call" lines alone).
  assert.ok(stdio.length < 50, `${stdio.length} host.stdio warnings`)

  // stderr lines arrive as server.stderr logs, including after the flood and during calls.
  const stderrLogs = () => logs.filter((l) => l.target === 'server.stderr' && l.serverId === id)
  await waitFor(() => stderrLogs().some((l) => l.message === 'NOISY-STDERR-FLOOD-DONE'), { what: 'flood marker log' })
  await waitFor(() => stderrLogs().some((l) => l.message === 'call 100: 99+1000'), { what: 'stderr line of the last call' })
  const records = stderrLogs()
  assert.ok(records.some((l) => l.message === 'noisy stderr line 0 ' + '-'.repeat(60)))
  assert.ok(records.some((l) => l.message === 'noisy stderr line 24999 ' + '-'.repeat(60)))
  // The unterminated 3 MB line was forwarded in bounded pieces, not as one record.
  const xs = records.filter((l) => /^x+$/.test(l.message))
  assert.equal(xs.reduce((n, l) => n + l.message.length, 0), 3 * 1024 * 1024)
  assert.ok(xs.every((l) => l.message.length <= 64 * 1024), `largest piece ${Math.max(...xs.map((l) => l.message.length))}`)
  assert.ok(records.every((l) => l.level === 'info'))
})
