// `npm run bench` (last block): 10,000 session envelopes through
// AhpStateMirror with the native reducers, per-envelope cost, against taking
// a `host.getState()` snapshot instead (a host with no servers; the session
// of the mirror holds 8 servers, a little larger than that).

import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { AhpStateMirror, McpHost } = require('../index.js')

const SESSION = 'ahp-session:/bench'
const N = Number(process.env.BENCH_QUICK ? 1000 : 10_000)

function envelopes() {
  const out = []
  let seq = 0
  for (let s = 0; s < 8; s++) {
    out.push({ channel: SESSION, serverSeq: ++seq, action: { type: 'session/customizationUpdated', customization: { type: 'mcpServer', id: `s${s}`, uri: `file:///s${s}`, name: `s${s}`, state: { kind: 'stopped' } } } })
  }
  const kinds = ['starting', 'ready', 'stopped']
  while (seq < N) {
    const s = seq % 8
    out.push({ channel: SESSION, serverSeq: ++seq, action: { type: 'session/mcpServerStateChanged', id: `s${s}`, state: { kind: kinds[seq % 3] } } })
  }
  return out
}

export function benchMirror() {
  const list = envelopes()
  const warm = new AhpStateMirror({ session: SESSION })
  for (const e of list.slice(0, 500)) warm.receive(e)
  const mirror = new AhpStateMirror({ session: SESSION })
  const t0 = performance.now()
  for (const e of list) mirror.receive(e)
  const perEnvelope = ((performance.now() - t0) * 1000) / list.length
  const dataDir = mkdtempSync(join(tmpdir(), 'ahp-bench-mirror-'))
  const host = new McpHost({ session: SESSION, dataDir })
  for (let i = 0; i < 500; i++) host.getState()
  const t1 = performance.now()
  for (let i = 0; i < list.length; i++) host.getState()
  const perSnapshot = ((performance.now() - t1) * 1000) / list.length
  host.disposeSync()
  rmSync(dataDir, { recursive: true, force: true })
  const bytes = JSON.stringify(mirror.session).length
  console.log('')
  console.log(`| AHP state in JS (${list.length} envelopes) | µs per envelope / snapshot |`)
  console.log('| --- | ---: |')
  console.log(`| AhpStateMirror.receive (native reducers; session of ${bytes} bytes JSON) | ${perEnvelope.toFixed(1)} |`)
  console.log(`| host.getState() snapshot (empty session) | ${perSnapshot.toFixed(1)} |`)
  console.log('')
  console.log('- The mirror passes the whole state through JSON twice per envelope (to the addon and back), so its cost')
  console.log('  grows with the state size; a getState() snapshot has the same JSON cost once. A UI that renders after')
  console.log('  many envelopes can take one snapshot; one that needs every step (or runs without the host) uses the mirror.')
}

if (import.meta.url === `file://${process.argv[1]}`) benchMirror()
