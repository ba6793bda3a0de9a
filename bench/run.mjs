// `npm run bench`: the host (this addon) vs the official TypeScript SDK client
// (@modelcontextprotocol/sdk) against the same benchmark server
// (bench/server.mjs), over stdio and over Streamable HTTP on 127.0.0.1.
//
// Measured per client × transport, one after the other in this process:
//   - connect + initialize + full tools/list (1001 tools), median of 5 runs
//     after one untimed warm-up run. The host has no separate tools/list
//     command: it lists tools while starting a server and reports `ready`
//     afterwards, so for both clients the time is end to end:
//       host: addServer → `ready` → listTools() has the 1001 tools;
//       SDK:  new Client + transport, connect, listTools following nextCursor.
//   - echo latency p50/p99: 200 warm-up calls, then 2000 sequential calls.
//   - client CPU per sequential call: process.cpuUsage() over the timed loop
//     (the host's Rust threads run inside this process and are included; the
//     servers are child processes and are not).
//   - throughput with 16 calls in flight for 5 s (after 500 warm-up calls), and
//     client CPU per call during it.
// The connect runs alternate host/SDK; each client × transport call block
// gets a fresh server process (same script).
// BENCH_QUICK=1 shrinks every count. No assertions: this only prints.

import { createRequire } from 'node:module'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, readFileSync, readdirSync, statSync, openSync, readSync, closeSync } from 'node:fs'
import { tmpdir, cpus, loadavg, totalmem, release } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const require = createRequire(import.meta.url)
const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')
const { McpHost } = require(join(ROOT, 'index.js'))
const SERVER = join(HERE, 'server.mjs')
const NODE = process.execPath
const MARKER = `ahpbench${randomBytes(6).toString('hex')}`

const QUICK = Boolean(process.env.BENCH_QUICK && process.env.BENCH_QUICK !== '0')
const C = QUICK
  ? { warmup: 50, calls: 300, inflight: 16, tpWarmup: 100, tpSeconds: 1, listRuns: 2 }
  : { warmup: 200, calls: 2000, inflight: 16, tpWarmup: 500, tpSeconds: 5, listRuns: 5 }
const EXPECTED_TOOLS = 1001 // echo + tool_0000 … tool_0999
const ECHO = { name: 'echo', arguments: { message: 'hello' } }

// Node warnings (the SDK's HTTP client triggers MaxListenersExceededWarning
// under load) are counted and summarized instead of interleaving with output.
const warnings = new Map()
process.removeAllListeners('warning')
process.on('warning', (w) => warnings.set(w.name, (warnings.get(w.name) ?? 0) + 1))

// ─── cleanup ────────────────────────────────────────────────────────────────

const httpServers = new Set() // child processes we spawned
const hosts = new Set()
function killEverythingSync() {
  for (const h of hosts) {
    try { h.disposeSync() } catch {}
  }
  for (const child of httpServers) {
    try { child.kill('SIGKILL') } catch {}
  }
}
process.on('exit', killEverythingSync)
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    killEverythingSync()
    process.exit(130)
  })
}

// ─── helpers ────────────────────────────────────────────────────────────────

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const ms = (a, b) => b - a

function percentile(sorted, q) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}
function median(values) {
  return percentile([...values].sort((a, b) => a - b), 0.5)
}
function cpuMicros(before) {
  const d = process.cpuUsage(before)
  return d.user + d.system
}

function checkEcho(result, who) {
  const text = result?.content?.find((c) => c.type === 'text')?.text
  if (text !== 'echo:hello') throw new Error(`${who}: unexpected echo result ${JSON.stringify(result)}`)
}

async function startHttpServer() {
  const child = spawn(NODE, [SERVER, 'http', MARKER], { stdio: ['pipe', 'pipe', 'inherit'] })
  httpServers.add(child)
  child.once('exit', () => httpServers.delete(child))
  const port = await new Promise((resolve, reject) => {
    let buf = ''
    const timer = setTimeout(() => reject(new Error('HTTP bench server did not start within 15 s')), 15_000)
    child.stdout.on('data', (d) => {
      buf += d
      const m = /PORT (\d+)/.exec(buf)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
    child.once('exit', (code) => reject(new Error(`HTTP bench server exited early (${code})`)))
  })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    const t = setTimeout(() => child.kill('SIGKILL'), 3000)
    await exited
    clearTimeout(t)
  }
  return { url: `http://127.0.0.1:${port}/mcp`, stop }
}

function serverConfig(transport, url) {
  return transport === 'stdio'
    ? { type: 'stdio', command: NODE, args: [SERVER, 'stdio', MARKER] }
    : { type: 'streamable-http', url }
}

// ─── clients ────────────────────────────────────────────────────────────────

/** Host side: one McpHost per block; each "connection" is an addServer. */
function hostClient(dataDir, protocol = 'auto') {
  // env 'allowList': stdio servers get a short environment, like the SDK's
  // StdioClientTransport default (getDefaultEnvironment), so both clients'
  // servers boot the same way. The host default ('inherit') would pass e.g.
  // NODE_EXTRA_CA_CERTS, which makes every Node server start ~80 ms slower.
  const host = new McpHost({ dataDir, env: 'allowList', clientInfo: { name: 'ahp-bench-host', version: '1.0.0' } })
  hosts.add(host)
  let seq = 0

  // addServer, then wait for `ready` (the host lists tools before `ready`).
  async function addReady(config) {
    const name = `bench-${++seq}`
    const ready = new Promise((resolve, reject) => {
      const onAction = ({ action }) => {
        const state =
          action.type === 'session/mcpServerStateChanged' && action.id === name ? action.state
            : action.type === 'session/customizationUpdated' && action.customization?.id === name ? action.customization.state
              : undefined
        if (!state) return
        if (state.kind === 'ready') {
          host.off('action', onAction)
          resolve()
        } else if (state.kind === 'error' || state.kind === 'authRequired' || state.kind === 'stopped') {
          host.off('action', onAction)
          reject(new Error(`host: server ${name} went ${state.kind}: ${JSON.stringify(state)}`))
        }
      }
      host.on('action', onAction)
    })
    const id = await host.addServer({ name, config, startupTimeoutMs: 30_000, protocol })
    await ready
    return id
  }

  return {
    label: 'host',
    async connectAndList(config) {
      const t0 = performance.now()
      const id = await addReady(config)
      const tReady = performance.now()
      const tools = host.listTools().filter((t) => t.customizationId === id)
      const t1 = performance.now()
      if (tools.length !== EXPECTED_TOOLS) throw new Error(`host: listed ${tools.length} tools, expected ${EXPECTED_TOOLS}`)
      await host.remove(id)
      return { ms: ms(t0, t1), catalogueMs: ms(tReady, t1), pages: 'n/a' }
    },
    async connect(config) {
      const id = await addReady(config)
      const args = { serverId: id, ...ECHO }
      return {
        call: () => host.callTool(args),
        close: () => host.remove(id),
      }
    },
    async dispose() {
      await host.dispose()
      const deadline = Date.now() + 15_000
      while (host.processCount > 0 && Date.now() < deadline) await sleep(25)
      hosts.delete(host)
    },
  }
}

/** SDK side: a new Client + transport per connection. */
function sdkClient() {
  async function open(config) {
    const client = new Client({ name: 'ahp-bench-sdk', version: '1.0.0' })
    const transport = config.type === 'stdio'
      ? new StdioClientTransport({ command: config.command, args: config.args, stderr: 'inherit' })
      : new StreamableHTTPClientTransport(new URL(config.url))
    await client.connect(transport)
    const close = async () => {
      if (config.type !== 'stdio') await transport.terminateSession().catch(() => {})
      await client.close()
    }
    return { client, close }
  }
  async function listAll(client) {
    const tools = []
    let cursor
    let pages = 0
    do {
      const r = await client.listTools(cursor ? { cursor } : undefined)
      pages++
      tools.push(...r.tools)
      cursor = r.nextCursor
    } while (cursor)
    return { tools, pages }
  }
  return {
    label: 'SDK',
    async connectAndList(config) {
      const t0 = performance.now()
      const { client, close } = await open(config)
      const { tools, pages } = await listAll(client)
      const t1 = performance.now()
      await close()
      if (tools.length !== EXPECTED_TOOLS) throw new Error(`SDK: listed ${tools.length} tools, expected ${EXPECTED_TOOLS}`)
      return { ms: ms(t0, t1), pages }
    },
    async connect(config) {
      const { client, close } = await open(config)
      await listAll(client) // as an app would; untimed
      return { call: () => client.callTool(ECHO), close }
    },
    async dispose() {},
  }
}

// ─── one block: a client over a transport ───────────────────────────────────

/**
 * connect + initialize + tools/list, host and SDK runs interleaved (so slow
 * drift in machine load hits both alike), one server script for both.
 */
async function runListing(transport, dataDir) {
  const server = transport === 'http' ? await startHttpServer() : undefined
  const config = serverConfig(transport, server?.url)
  // hostLegacy: the same host with protocol 'legacy' (no server/discover
  // probe), to show what the probe costs against this 2025-era server.
  const clients = { host: hostClient(dataDir), hostLegacy: hostClient(dataDir, 'legacy'), sdk: sdkClient() }
  const runs = { host: [], hostLegacy: [], sdk: [] }
  const catalogue = []
  let pages
  try {
    for (const c of Object.values(clients)) await c.connectAndList(config) // warm-up, untimed
    for (let i = 0; i < C.listRuns; i++) {
      const order = i % 2 === 0 ? ['host', 'hostLegacy', 'sdk'] : ['sdk', 'hostLegacy', 'host']
      for (const key of order) {
        const r = await clients[key].connectAndList(config)
        runs[key].push(r.ms)
        if (key === 'host') catalogue.push(r.catalogueMs)
        else pages = r.pages
      }
    }
  } finally {
    for (const c of Object.values(clients)) await c.dispose()
    await server?.stop()
  }
  const summary = (v) => ({ median: median(v), min: Math.min(...v), max: Math.max(...v) })
  return {
    host: { list: summary(runs.host), legacyList: summary(runs.hostLegacy), catalogueMs: median(catalogue) },
    sdk: { list: summary(runs.sdk), pages },
  }
}

/** Calls: sequential latency, then throughput; a fresh server per block. */
async function runBlock(makeClient, transport, dataDir) {
  const server = transport === 'http' ? await startHttpServer() : undefined
  const config = serverConfig(transport, server?.url)
  const client = makeClient(dataDir)
  const out = {}
  try {
    const conn = await client.connect(config)
    try {
      checkEcho(await conn.call(), client.label)

      // sequential latency
      for (let i = 0; i < C.warmup; i++) await conn.call()
      const lat = new Float64Array(C.calls)
      const cpu0 = process.cpuUsage()
      for (let i = 0; i < C.calls; i++) {
        const t0 = performance.now()
        await conn.call()
        lat[i] = performance.now() - t0
      }
      out.seqCpu = cpuMicros(cpu0) / C.calls
      lat.sort()
      out.p50 = percentile(lat, 0.5)
      out.p99 = percentile(lat, 0.99)

      // throughput, C.inflight in flight
      let left = C.tpWarmup
      await Promise.all(Array.from({ length: C.inflight }, async () => {
        while (left-- > 0) await conn.call()
      }))
      let count = 0
      const tpCpu0 = process.cpuUsage()
      const start = performance.now()
      const deadline = start + C.tpSeconds * 1000
      await Promise.all(Array.from({ length: C.inflight }, async () => {
        while (performance.now() < deadline) {
          await conn.call()
          count++
        }
      }))
      const elapsed = (performance.now() - start) / 1000
      out.tpCpu = cpuMicros(tpCpu0) / count
      out.tp = count / elapsed
    } finally {
      await conn.close()
    }
  } finally {
    await client.dispose()
    await server?.stop()
  }
  return out
}

// ─── machine / build facts ──────────────────────────────────────────────────

function elfSectionNames(file) {
  // ELF64 little-endian: section headers at e_shoff; names in section e_shstrndx.
  const fd = openSync(file, 'r')
  try {
    const read = (pos, len) => {
      const b = Buffer.alloc(len)
      readSync(fd, b, 0, len, pos)
      return b
    }
    const eh = read(0, 64)
    if (eh.readUInt32BE(0) !== 0x7f454c46 || eh[4] !== 2 || eh[5] !== 1) return []
    const shoff = Number(eh.readBigUInt64LE(0x28))
    const shentsize = eh.readUInt16LE(0x3a)
    const shnum = eh.readUInt16LE(0x3c)
    const shstrndx = eh.readUInt16LE(0x3e)
    const sh = read(shoff, shentsize * shnum)
    const strHdr = shstrndx * shentsize
    const strtab = read(Number(sh.readBigUInt64LE(strHdr + 0x18)), Number(sh.readBigUInt64LE(strHdr + 0x20)))
    const names = []
    for (let i = 0; i < shnum; i++) {
      const off = sh.readUInt32LE(i * shentsize)
      names.push(strtab.toString('latin1', off, strtab.indexOf(0, off)))
    }
    return names
  } finally {
    closeSync(fd)
  }
}

function addonFacts() {
  const file = join(ROOT, 'ahp-mcp-host.linux-x64-gnu.node')
  try {
    const size = statSync(file).size
    const debugInfo = elfSectionNames(file).includes('.debug_info')
    const mib = (size / 2 ** 20).toFixed(0)
    const guess = debugInfo && size > 50 * 2 ** 20
      ? 'has .debug_info and is large: looks like the dev profile (`npm run build`, opt-level 0), not `npm run build:release`'
      : debugInfo ? 'has .debug_info' : 'no .debug_info (release-like)'
    return `${mib} MiB, ${guess}`
  } catch (e) {
    return `unknown (${e.message})`
  }
}

function sdkVersion() {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version
  } catch {
    return '?'
  }
}

function markedProcesses() {
  const live = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    let cmd
    try { cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8') } catch { continue }
    if (cmd.includes(MARKER)) live.push(Number(name))
  }
  return live
}

// ─── output ─────────────────────────────────────────────────────────────────

function fmt(v, unit) {
  if (!Number.isFinite(v)) return 'n/a'
  if (unit === 'calls/s') return String(Math.round(v))
  if (v >= 100) return v.toFixed(0)
  if (v >= 10) return v.toFixed(1)
  if (v >= 1) return v.toFixed(2)
  return v.toFixed(3)
}

function printTable(rows) {
  const head = ['metric', 'transport', 'unit', 'host', 'SDK', 'host/SDK']
  const cells = rows.map((r) => [r.metric, r.transport, r.unit, r.host, r.sdk, r.ratio])
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)))
  const right = [false, false, false, true, true, true]
  const line = (c) => '| ' + c.map((s, i) => (right[i] ? s.padStart(widths[i]) : s.padEnd(widths[i]))).join(' | ') + ' |'
  console.log(line(head))
  console.log('| ' + widths.map((w, i) => (right[i] ? '-'.repeat(w - 1) + ':' : '-'.repeat(w))).join(' | ') + ' |')
  for (const c of cells) console.log(line(c))
}

// ─── main ───────────────────────────────────────────────────────────────────

const load0 = loadavg()
const t0 = performance.now()
const cpu = cpus()
console.log(`ahp-mcp-host bench${QUICK ? ' (BENCH_QUICK: reduced counts, numbers are rough)' : ''}`)
console.log(`node ${process.version} (${process.platform}-${process.arch}, kernel ${release()}), ${cpu.length} CPUs (${cpu[0]?.model?.trim() ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`)
console.log(`@modelcontextprotocol/sdk ${sdkVersion()}; addon: ${addonFacts()}`)
console.log(`load average at start: ${load0.map((l) => l.toFixed(2)).join(' ')}`)
console.log('Note: a noisy shared 2-vCPU VM; differences under ~15% (and all p99 values) are within noise; one run, no rounds.')
console.log('')

const dataDir = mkdtempSync(join(tmpdir(), 'ahp-bench-data-'))
const results = {}
let failed = false
try {
  for (const transport of ['stdio', 'http']) {
    process.stderr.write(`… connect + tools/list over ${transport}, host and SDK interleaved\n`)
    const listing = await runListing(transport, dataDir)
    for (const [key, make] of [['host', hostClient], ['sdk', sdkClient]]) {
      process.stderr.write(`… ${key} calls over ${transport}\n`)
      results[`${key}:${transport}`] = { ...listing[key], ...(await runBlock(make, transport, dataDir)) }
    }
  }
} catch (err) {
  failed = true
  console.error(`bench failed: ${err?.stack ?? err}`)
} finally {
  for (const h of hosts) await h.dispose().catch(() => {})
  for (const child of httpServers) child.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
}

if (!failed) {
  const defs = [
    { key: 'list', metric: `connect + initialize + tools/list (${EXPECTED_TOOLS} tools), median of ${C.listRuns}`, unit: 'ms', pick: (r) => r.list.median, range: (r) => r.list },
    { key: 'p50', metric: `echo latency p50, ${C.calls} sequential calls`, unit: 'ms', pick: (r) => r.p50 },
    { key: 'p99', metric: `echo latency p99, ${C.calls} sequential calls`, unit: 'ms', pick: (r) => r.p99 },
    { key: 'seqCpu', metric: 'client CPU per sequential call', unit: 'µs', pick: (r) => r.seqCpu },
    { key: 'tp', metric: `throughput, ${C.inflight} calls in flight for ${C.tpSeconds} s (↑)`, unit: 'calls/s', pick: (r) => r.tp, higher: true },
    { key: 'tpCpu', metric: `client CPU per call at ${C.inflight} in flight`, unit: 'µs', pick: (r) => r.tpCpu },
  ]
  const rows = []
  for (const d of defs) {
    for (const transport of ['stdio', 'http']) {
      const h = results[`host:${transport}`]
      const s = results[`sdk:${transport}`]
      const hv = d.pick(h)
      const sv = d.pick(s)
      const cell = (r, v) => (d.range ? `${fmt(v, d.unit)} [${fmt(d.range(r).min, d.unit)}–${fmt(d.range(r).max, d.unit)}]` : fmt(v, d.unit))
      rows.push({ metric: d.metric, transport, unit: d.unit, host: cell(h, hv), sdk: cell(s, sv), ratio: `${(hv / sv).toFixed(2)}×` })
    }
  }
  console.log('host/SDK ratio: for ms and µs rows (lower is better) < 1 means the host is faster / cheaper;')
  console.log('for calls/s (↑, higher is better) > 1 means the host is faster.')
  console.log('')
  printTable(rows)
  console.log('')
  console.log(`- tools/list: end to end for both clients (the host lists tools while starting a server and has no separate`)
  console.log(`  tools/list command): host = addServer until \`ready\` with ${EXPECTED_TOOLS} tools in listTools(); SDK = new Client +`)
  console.log(`  connect + listTools following nextCursor (the SDK server sent ${results['sdk:stdio'].pages} page(s): it does not paginate).`)
  console.log(`  [min–max] over the ${C.listRuns} runs per client, host and SDK runs alternating (one server for both over http),`)
  console.log(`  after one untimed warm-up each; stdio includes spawning and booting the Node server.`)
  console.log(`  Of the host's time, the final host.listTools() call alone (native catalogue → JSON string → JSON.parse of ${EXPECTED_TOOLS}`)
  console.log(`  tools) took a median of ${fmt(results['host:stdio'].catalogueMs, 'ms')} ms (stdio) and ${fmt(results['host:http'].catalogueMs, 'ms')} ms (http).`)
  for (const transport of ['stdio', 'http']) {
    const h = results[`host:${transport}`]
    const range = (r) => `${fmt(r.median, 'ms')} [${fmt(r.min, 'ms')}–${fmt(r.max, 'ms')}]`
    console.log(`- The server/discover probe (protocol 'auto', the default) against this 2025-era server over ${transport}: connect + list`)
    console.log(`  ${range(h.list)} ms with 'auto' vs ${range(h.legacyList)} ms with protocol 'legacy' (no probe), same run, interleaved.`)
  }
  console.log('- CPU = user+system of this whole process over the timed loop; for the host that includes its Rust (tokio) threads.')
  console.log('  Servers are child processes and are not counted.')
  console.log(`- Calls: stdio host, stdio SDK, http host, http SDK, each with a fresh server process; ${C.warmup} warm-up calls before`)
  console.log(`  the sequential loop, ${C.tpWarmup} before the throughput loop. HTTP: stateful sessions, SDK server's default SSE responses.`)
  console.log(`- stdio servers get a short environment from both clients (host: env 'allowList'; SDK: its default environment),`)
  console.log(`  so server boot is the same for both${process.env.NODE_EXTRA_CA_CERTS ? '; NODE_EXTRA_CA_CERTS is set here and would add ~80 ms to each server start under the host default env \'inherit\'' : ''}.`)
  if (warnings.size) {
    console.log(`- Node warnings during the run (suppressed): ${[...warnings].map(([k, v]) => `${k} ×${v}`).join(', ')}`)
  }
}

// Every server gone?
let left = markedProcesses()
for (let i = 0; i < 100 && left.length; i++) {
  await sleep(50)
  left = markedProcesses()
}
const secs = ((performance.now() - t0) / 1000).toFixed(0)
console.log(`- load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}; run took ${secs} s; bench server processes left: ${left.length}${left.length ? ` (pids ${left.join(', ')})` : ''}`)
if (left.length) {
  for (const pid of left) {
    try { process.kill(pid, 'SIGKILL') } catch {}
  }
}
// AHP state in JS: the state mirror against getState() snapshots (bench/mirror.mjs).
(await import('./mirror.mjs')).benchMirror()
process.exitCode = failed || left.length ? 1 : 0
