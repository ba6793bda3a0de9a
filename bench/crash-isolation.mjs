// `npm run crash-isolation`: one server crashing does not touch the others
// (docs/reliability.md, "Crash isolation").
//
// One host, 10 stdio servers (__test__/fixtures/tools-server.mjs, official
// SDK), each under continuous `echo` calls with 4 in flight. After a
// warm-up, server #4's process (its pid from the fixture's `pid` tool) gets
// SIGKILL; the calls go on for a while. Printed per server: calls made, ok,
// failed (by error code); for the killed server its state changes and the
// calls that succeeded after it came back (a new pid).
//
// CRASH_SERVERS (10), CRASH_INFLIGHT (4), CRASH_WARMUP_S (5), CRASH_AFTER_S
// (15) set the sizes. No assertions: this only prints
// (__test__/crash-isolation.test.mjs asserts the property at small scale).

import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, cpus, loadavg } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')
const { McpHost } = require(join(ROOT, 'index.js'))
const SERVER = join(ROOT, '__test__', 'fixtures', 'tools-server.mjs')

const SERVERS = Number(process.env.CRASH_SERVERS ?? 10)
const INFLIGHT = Number(process.env.CRASH_INFLIGHT ?? 4)
const WARMUP_S = Number(process.env.CRASH_WARMUP_S ?? 5)
const AFTER_S = Number(process.env.CRASH_AFTER_S ?? 15)
const VICTIM = Math.min(3, SERVERS - 1)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const dataDir = mkdtempSync(join(tmpdir(), 'ahp-crash-'))
const host = new McpHost({ dataDir, env: 'allowList', clientInfo: { name: 'ahp-crash-isolation', version: '1.0.0' } })
process.on('exit', () => {
  try { host.disposeSync() } catch {}
  rmSync(dataDir, { recursive: true, force: true })
})

const names = Array.from({ length: SERVERS }, (_, i) => `crash-${String(i).padStart(2, '0')}`)
const stateLog = new Map(names.map((n) => [n, []]))
const ready = new Map()
host.on('action', ({ action }) => {
  const id = action.type === 'session/mcpServerStateChanged' ? action.id
    : action.type === 'session/customizationUpdated' ? action.customization?.id : undefined
  const state = action.type === 'session/mcpServerStateChanged' ? action.state : action.customization?.state
  if (!id || !state || !stateLog.has(id)) return
  const log = stateLog.get(id)
  if (log.at(-1)?.kind !== state.kind) log.push({ kind: state.kind, at: Date.now() })
  if (state.kind === 'ready') ready.get(id)?.()
})

console.log(`crash isolation: node ${process.version}, ${cpus().length} cpus, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
console.log(`${SERVERS} stdio servers × ${INFLIGHT} calls in flight; SIGKILL ${names[VICTIM]} after ${WARMUP_S} s, then ${AFTER_S} s more`)

await Promise.all(names.map(async (name) => {
  const up = new Promise((r) => ready.set(name, r))
  await host.addServer({ name, config: { type: 'stdio', command: process.execPath, args: [SERVER, 'ahp-crash', name] } })
  await up
}))

const pidOf = async (id) => {
  const r = await host.callTool({ serverId: id, name: 'pid', arguments: {}, timeoutMs: 30_000 })
  return Number(r.content.find((c) => c.type === 'text').text)
}

const stats = new Map(names.map((n) => [n, { made: 0, ok: 0, failed: 0, codes: {}, okAfterRestart: 0 }]))
let running = true
let killedAt = Infinity
let victimNewPid
async function worker(id, w) {
  const s = stats.get(id)
  let n = 0
  while (running) {
    const message = `${w}-${n++}`
    s.made++
    try {
      const r = await host.callTool({ serverId: id, name: 'echo', arguments: { message }, timeoutMs: 30_000 })
      const text = r?.content?.find((c) => c.type === 'text')?.text
      if (text !== `echo:${message}`) throw Object.assign(new Error(`bad result ${JSON.stringify(r)}`), { code: 'wrong_result' })
      s.ok++
      if (id === names[VICTIM] && victimNewPid !== undefined) s.okAfterRestart++
    } catch (e) {
      s.failed++
      s.codes[e.code ?? 'no_code'] = (s.codes[e.code ?? 'no_code'] ?? 0) + 1
      await sleep(20) // a failing server answers at once: do not spin
    }
  }
}

const workers = names.flatMap((id) => Array.from({ length: INFLIGHT }, (_, w) => worker(id, w)))
await sleep(WARMUP_S * 1000)
const victim = names[VICTIM]
const oldPid = await pidOf(victim)
const before = new Map([...stats].map(([id, s]) => [id, { ...s }]))
killedAt = Date.now()
process.kill(oldPid, 'SIGKILL')
console.log(`SIGKILL ${victim} (pid ${oldPid})`)
// Learn the new pid once the victim is ready again, then keep calling.
const watchRestart = (async () => {
  while (running) {
    const log = stateLog.get(victim)
    if (log.some((e) => e.at >= killedAt && e.kind !== 'ready') && log.at(-1).kind === 'ready') {
      try {
        victimNewPid = await pidOf(victim)
        return
      } catch {}
    }
    await sleep(50)
  }
})()
await sleep(AFTER_S * 1000)
running = false
await Promise.all(workers)
await watchRestart

console.log('\nserver      made      ok  failed  failures by code            made/ok after the kill')
for (const id of names) {
  const s = stats.get(id)
  const b = before.get(id)
  const codes = Object.entries(s.codes).map(([c, n]) => `${c}:${n}`).join(' ') || '-'
  console.log(`${id.padEnd(10)} ${String(s.made).padStart(6)} ${String(s.ok).padStart(7)} ${String(s.failed).padStart(7)}  ${codes.padEnd(27)} ${s.made - b.made}/${s.ok - b.ok}${id === victim ? '  (killed)' : ''}`)
}
const others = names.filter((n) => n !== victim)
const lost = others.reduce((a, id) => a + stats.get(id).failed, 0)
const trail = stateLog.get(victim).filter((e) => e.at >= killedAt).map((e) => `${e.kind} +${e.at - killedAt} ms`)
console.log(`\nother ${others.length} servers: ${lost} failed calls of ${others.reduce((a, id) => a + stats.get(id).made, 0)}`)
console.log(`${victim}: states after the kill: ${trail.join(' → ') || '(none)'}`)
console.log(`${victim}: pid ${oldPid} → ${victimNewPid ?? '(not back)'}; ${stats.get(victim).okAfterRestart} calls ok after the restart`)
await host.dispose()
