// `npm run soak`: many start/stop cycles in ONE host, watching what the
// Node process holds (docs/reliability.md, "Soak").
//
//   - stdio: one server (__test__/fixtures/tools-server.mjs, the official
//     SDK's McpServer) added once, then N cycles of
//     `session/mcpServerStopRequested` → `stopped`,
//     `session/mcpServerStartRequested` → `ready`, one `echo` call;
//   - Streamable HTTP: one server process (bench/server.mjs http, 127.0.0.1,
//     1003 tools at /mcp-1000) started once, then N cycles of addServer → `ready`, one
//     `echo` call, remove (a new connection, MCP session and tools/list
//     each time).
// The two phases run side by side in the one host, in blocks of N/5
// cycles; between blocks both are idle (server stopped / removed) and the
// process is sampled.
//
// Printed after a warm-up, every N/5 cycles and at the end: open fds
// (/proc/self/fd), threads (/proc/self/status Threads), RSS (VmRSS), the
// V8 heap in use (process.memoryUsage().heapUsed, to tell JS from native),
// the host's processCount and the live descendant processes of this Node
// process (by /proc/<pid>/stat ppid, the HTTP server's own process tree left
// out; zombies apart). "Flat" is the goal: the end equals the first sample
// after warm-up.
//
// SOAK_CYCLES=<n> (default 1000) sets N for both phases; SOAK_ONLY=stdio|http
// runs one. No assertions: this only prints.

import { createRequire } from 'node:module'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, readFileSync, readdirSync } from 'node:fs'
import { tmpdir, cpus, loadavg } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')
const { McpHost } = require(join(ROOT, 'index.js'))
const NODE = process.execPath
const STDIO_SERVER = join(ROOT, '__test__', 'fixtures', 'tools-server.mjs')
const HTTP_SERVER = join(HERE, 'server.mjs')

const CYCLES = Number(process.env.SOAK_CYCLES ?? 1000)
const ONLY = process.env.SOAK_ONLY
const SAMPLE_EVERY = Math.max(1, Math.floor(CYCLES / 5))

// ─── process accounting ─────────────────────────────────────────────────────

/** pid → ppid for every process visible in /proc. */
function processTable() {
  const table = new Map()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // pid (comm) state ppid …: comm may hold spaces and parentheses.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (rest[0] !== 'Z') table.set(Number(name), Number(rest[1]))
      else table.set(Number(name), Number(rest[1]) * -1 - 1) // zombie: counted apart
    } catch {}
  }
  return table
}

/** Live descendants and zombies of `root`, leaving out the trees of `skip`. */
export function descendants(root = process.pid, skip = new Set()) {
  const table = processTable()
  const children = new Map()
  let zombies = 0
  for (const [pid, ppid] of table) {
    const parent = ppid < 0 ? -(ppid + 1) : ppid
    if (!children.has(parent)) children.set(parent, [])
    children.get(parent).push([pid, ppid < 0])
  }
  const live = []
  const stack = [root]
  while (stack.length) {
    for (const [pid, zombie] of children.get(stack.pop()) ?? []) {
      if (skip.has(pid)) continue
      if (zombie) zombies++
      else live.push(pid)
      stack.push(pid)
    }
  }
  return { live, zombies }
}

/** fds, threads, RSS (MiB), host.processCount, descendants of this process. */
export function sample(host, skip) {
  const status = readFileSync('/proc/self/status', 'utf8')
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1])
  const { live, zombies } = descendants(process.pid, skip)
  const mem = process.memoryUsage()
  return {
    fds: readdirSync('/proc/self/fd').length,
    heapMiB: mem.heapUsed / 2 ** 20,
    threads: field('Threads'),
    rssMiB: field('VmRSS') / 1024,
    processCount: host.processCount,
    children: live.length,
    zombies,
  }
}

function row(label, s) {
  const cells = [label.padEnd(30), String(s.fds).padStart(5), String(s.threads).padStart(8),
    s.rssMiB.toFixed(1).padStart(9), s.heapMiB.toFixed(1).padStart(9), String(s.processCount).padStart(13), String(s.children).padStart(9),
    String(s.zombies).padStart(8)]
  console.log(cells.join(' '))
}
function header() {
  console.log(['point'.padEnd(30), '  fds', ' threads', ' RSS(MiB)', ' JS heap', ' processCount', ' children', ' zombies'].join(' '))
}

// ─── host plumbing ──────────────────────────────────────────────────────────

/** Resolves with the state when server `id` reaches one of `kinds`; rejects on `error`. */
function stateWaiter(host) {
  const waiting = new Set()
  host.on('action', ({ action }) => {
    const id = action.type === 'session/mcpServerStateChanged' ? action.id
      : action.type === 'session/customizationUpdated' ? action.customization?.id : undefined
    const state = action.type === 'session/mcpServerStateChanged' ? action.state : action.customization?.state
    if (!id || !state) return
    for (const w of [...waiting]) {
      if (w.id !== id) continue
      if (w.kinds.includes(state.kind)) {
        waiting.delete(w)
        w.resolve(state)
      } else if (state.kind === 'error' || state.kind === 'authRequired') {
        waiting.delete(w)
        w.reject(new Error(`server ${id} went ${state.kind}: ${JSON.stringify(state)}`))
      }
    }
  })
  return (id, kinds) => new Promise((resolve, reject) => waiting.add({ id, kinds, resolve, reject }))
}

async function echo(host, serverId) {
  const r = await host.callTool({ serverId, name: 'echo', arguments: { message: 'soak' }, timeoutMs: 30_000 })
  const text = r?.content?.find((c) => c.type === 'text')?.text
  if (text !== 'echo:soak') throw new Error(`unexpected echo result ${JSON.stringify(r)}`)
}

async function startHttpServer() {
  // stdin piped: the server exits when its stdin ends.
  const child = spawn(NODE, [HTTP_SERVER, 'http', 'ahp-soak'], { stdio: ['pipe', 'pipe', 'inherit'] })
  const port = await new Promise((resolve, reject) => {
    let buf = ''
    child.stdout.on('data', (d) => {
      buf += d
      const m = /PORT (\d+)/.exec(buf)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', (code) => reject(new Error(`HTTP server exited early (${code})`)))
  })
  return { child, url: `http://127.0.0.1:${port}/mcp-1000` }
}

// ─── phases ─────────────────────────────────────────────────────────────────

/** The stdio phase: a server added, then `cycle()` = start, echo, stop. */
async function stdioPhase(host, waitKind) {
  const name = 'soak-stdio'
  const ready = waitKind(name, ['ready'])
  const id = await host.addServer({ name, config: { type: 'stdio', command: NODE, args: [STDIO_SERVER, 'ahp-soak'] } })
  await ready
  const stop = async () => {
    const stopped = waitKind(id, ['stopped'])
    host.dispatch({ type: 'session/mcpServerStopRequested', id })
    await stopped
  }
  await echo(host, id)
  await stop()
  return {
    async cycle() {
      const up = waitKind(id, ['ready'])
      host.dispatch({ type: 'session/mcpServerStartRequested', id })
      await up
      await echo(host, id)
      await stop()
    },
    end: () => host.remove(id),
  }
}

/** The HTTP phase: a server process, then `cycle()` = addServer, echo, remove. */
async function httpPhase(host, waitKind) {
  const server = await startHttpServer()
  const cycle = async () => {
    const name = 'soak-http'
    const ready = waitKind(name, ['ready'])
    const id = await host.addServer({ name, config: { type: 'streamable-http', url: server.url } })
    await ready
    await echo(host, id)
    await host.remove(id)
  }
  await cycle() // warm-up: the first connection loads what stays loaded
  return {
    cycle,
    skip: server.child.pid,
    async end() {
      const exited = new Promise((r) => server.child.once('exit', r))
      server.child.kill('SIGKILL')
      await exited
    },
  }
}

/**
 * Samples once the host has had up to 2 s to reap what it stopped (the
 * wait, in ms, is printed: the `stopped` state can come a moment before the
 * exit of the process is collected).
 */
async function settledRow(label, host, skip) {
  const t0 = performance.now()
  let s = sample(host, skip)
  while ((s.children > 0 || s.zombies > 0) && performance.now() - t0 < 2000) {
    await new Promise((r) => setTimeout(r, 20))
    s = sample(host, skip)
  }
  row(`${label} (+${Math.round(performance.now() - t0)} ms)`, s)
}

/** Both phases side by side, sampled every SAMPLE_EVERY cycles when both are idle. */
async function soak(host, waitKind) {
  const phases = []
  if (ONLY !== 'http') phases.push(['stdio', await stdioPhase(host, waitKind)])
  if (ONLY !== 'stdio') phases.push(['http', await httpPhase(host, waitKind)])
  const skip = new Set(phases.map(([, p]) => p.skip).filter(Boolean))
  console.log(`\n${CYCLES} cycles of: ${phases.map(([n]) => n).join(' and ')} (side by side, one host); sampled with every server stopped/removed`)
  header()
  await settledRow('after warm-up', host, skip)
  const t0 = performance.now()
  const times = new Map(phases.map(([n]) => [n, 0]))
  for (let done = 0; done < CYCLES;) {
    const n = Math.min(SAMPLE_EVERY, CYCLES - done)
    await Promise.all(phases.map(async ([name, p]) => {
      const t = performance.now()
      for (let i = 0; i < n; i++) await p.cycle()
      times.set(name, times.get(name) + performance.now() - t)
    }))
    done += n
    await settledRow(`after ${done} cycles`, host, skip)
  }
  const secs = (performance.now() - t0) / 1000
  for (const [, p] of phases) await p.end()
  await settledRow('phases ended', host, skip)
  const per = [...times].map(([n, t]) => `${n} ${(t / CYCLES).toFixed(0)} ms`).join(', ')
  console.log(`${CYCLES} cycles in ${secs.toFixed(0)} s; per cycle: ${per}`)
}

const dataDir = mkdtempSync(join(tmpdir(), 'ahp-soak-'))
const host = new McpHost({ dataDir, env: 'allowList', clientInfo: { name: 'ahp-soak', version: '1.0.0' } })
process.on('exit', () => {
  try { host.disposeSync() } catch {}
  rmSync(dataDir, { recursive: true, force: true })
})
const waitKind = stateWaiter(host)
console.log(`soak: node ${process.version}, ${cpus().length} cpus, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
console.log('before any server (host created):')
header()
row('host created', sample(host))
await soak(host, waitKind)
await host.dispose()
console.log('\nafter dispose:')
header()
await settledRow('disposed', host)
