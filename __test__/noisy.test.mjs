// A server that prints banners on stdout and floods stderr (several MB, part
// of it one unterminated 3 MB line) must still reach ready and answer calls;
// its stderr reaches the app cut and paced, every line delivered or counted.

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

  // stderr lines arrive as server.stderr logs, paced (docs/reliability.md,
  // "Floods"): each of the 25,202 lines (the 3 MB one, 25,000, the marker,
  // two per call) is either delivered or counted in a suppression warning.
  const LINES = 1 + 25_000 + 1 + 2 * 100
  const stderrLogs = () => logs.filter((l) => l.target === 'server.stderr' && l.serverId === id)
  const delivered = () => stderrLogs().filter((l) => l.level === 'info').length
  const counted = () => stderrLogs().filter((l) => l.level === 'warn')
    .reduce((n, l) => n + Number(/^suppressed (\d+) lines/.exec(l.message)?.[1] ?? 0), 0)
  await waitFor(() => delivered() + counted() === LINES,
    { timeout: 60_000, what: 'every stderr line delivered or counted', describe: () => `${delivered()} delivered, ${counted()} counted` })
  const records = stderrLogs().filter((l) => l.level === 'info')
  assert.ok(records.some((l) => l.message === 'noisy stderr line 0 ' + '-'.repeat(60)))
  // The unterminated 3 MB line is one record, cut at 8 KiB (the rest skipped), not thousands.
  const xs = records.filter((l) => /^x+/.test(l.message))
  assert.equal(xs.length, 1)
  assert.match(xs[0].message, /^x{8192}… \[truncated: line longer than 8192 bytes\]$/)
  assert.ok(records.every((l) => l.message.length <= 8192 + 64), `largest record ${Math.max(...records.map((l) => l.message.length))}`)
  assert.ok(records.every((l) => l.level === 'info'))
})
