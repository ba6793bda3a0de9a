// `npm run bench` (the scale block, issue 29 item 7) and `node bench/scale.mjs`:
// one plugin of 100 stdio servers (bench/server.mjs, the official SDK's
// low-level server, 50 tools each: 5,000 tools), measured in fresh
// processes, each printing one JSON line:
//   empty      RSS of a process holding an empty host (the baseline);
//   sdk        A: 100 official TypeScript SDK v1 clients connected by hand
//              (what an app without this package writes): time until the
//              first tool is callable, until every list is read, RSS;
//   eager      C, every server started by addPlugin: the same times and RSS,
//              the bytes of AHP actions of one re-list (one server's
//              `tools/list_changed`), listToolSummaries vs listTools bytes;
//   lazy-cold  C, `start: 'lazy'` on an empty dataDir (no cache: every
//              server starts to list its tools, which are cached);
//   lazy-warm  C, `start: 'lazy'` on that dataDir: RSS with 100 lazy
//              servers not started (the cached tools published), time until
//              the first tool is callable (one server started by the call;
//              the pause that settled the RSS reading left out), RSS again
//              once that server is stopped, and after one listTools(), and
//              searchTools p50 / p99 over 5,000 tools.
// Goals (issue 29): first tool callable ≤ 1 s after addPlugin of 100 lazy
// servers with a warm cache; RSS with 100 lazy servers not started ≤ 10 MiB
// over an empty host; searchTools p50 ≤ 2 ms over 5,000 tools (release).
//
//   node bench/scale.mjs [--servers N] [--queries N] [--repeats N]
//
// empty and lazy-warm run `--repeats` times (3; 1 with `npm run bench --
// --quick`), interleaved; their figures are the medians.
//
// SCALE_SERVERS / SCALE_QUERIES (env) set the same. Prints a markdown table.

import { spawn } from 'node:child_process'
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { randomBytes } from 'node:crypto'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')
const SERVER = join(HERE, 'server.mjs')
const NODE = process.execPath
const EXTRA = 47 // + 3 base tools = 50 per server
const WORDS = ['echo', 'filler', 'number', 'benchmark', 'tool', 'big', 'touch', 'message', 'answers', 'descriptions']

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const kib = () => {
  globalThis.gc?.()
  return Math.round(process.memoryUsage.rss() / 1024)
}

/** Settles, collects garbage twice, and reads RSS (KiB). */
async function settledRss() {
  await sleep(300)
  globalThis.gc?.()
  await sleep(100)
  return kib()
}

/** The private (anonymous) part of RSS, KiB (Linux; else undefined): RSS less the file-backed pages (code) shared with other processes. */
function anonKib() {
  try {
    return Number(/RssAnon:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1])
  } catch {
    return undefined
  }
}

// ─── child modes ─────────────────────────────────────────────────────────────

async function child(mode, root, dataDir, servers, queries) {
  const require = createRequire(import.meta.url)
  const { McpHost } = require(join(ROOT, 'index.js'))
  const out = {}
  if (mode === 'sdk') return sdkClients(root, servers)
  const host = new McpHost({ dataDir, env: 'allowList', start: mode.startsWith('lazy') ? 'lazy' : 'eager', limits: { idleStopMs: 0 } })
  const changed = []
  host.on('toolsChanged', (e) => changed.push(e))
  if (mode === 'empty') {
    out.rssKib = await settledRss()
    out.anonKib = anonKib()
    host.disposeSync()
    return out
  }
  const t0 = performance.now()
  const plugin = await host.addPlugin({ root, name: 'scale' })
  const probe = plugin.servers[Math.floor(servers / 2)]
  if (mode === 'eager') {
    while (!changed.some((e) => e.reason === 'ready')) await sleep(1)
    const first = changed.find((e) => e.reason === 'ready').serverId
    await host.callTool({ serverId: first, name: 'echo', arguments: { message: 'x' } })
    out.firstCallableMs = performance.now() - t0
    await host.whenReady(plugin.servers)
    out.allListedMs = performance.now() - t0
    out.rssKib = await settledRss()
    out.anonKib = anonKib()
    out.tools = host.listTools().length
    Object.assign(out, sizes(host))
    out.relistBytes = await relistBytes(host, probe)
  } else if (mode === 'lazy-cold') {
    await host.whenReady(plugin.servers)
    out.allListedMs = performance.now() - t0
    const cache = join(dataDir, '.tool-cache')
    while (!existsSync(cache) || readdirSync(cache).filter((f) => f.endsWith('.json')).length < servers) await sleep(20)
    out.cachedMs = performance.now() - t0
  } else if (mode === 'lazy-warm') {
    // Published from the cache: one `cached` toolsChanged per server (no polling of listTools).
    while (changed.filter((e) => e.reason === 'cached').length < servers) await sleep(1)
    out.cachedToolsMs = performance.now() - t0
    out.processesBeforeCall = host.processCount
    // The goal's figure: every server configured, none started yet. (The
    // settling wait comes after the time to the first call is taken.)
    const settledAt = performance.now()
    out.rssNotStartedKib = await settledRss()
    out.anonNotStartedKib = anonKib()
    const settling = performance.now() - settledAt
    await host.callTool({ serverId: probe, name: 'echo', arguments: { message: 'x' } })
    out.firstCallableMs = performance.now() - t0 - settling
    // RSS with every server not running (the one the call started stopped
    // again), before JS reads the catalogue (as in the eager column), then
    // after one listTools(): V8 keeps part of the heap it grew to parse
    // 5,000 tool objects committed after collecting them.
    host.dispatch({ type: 'session/mcpServerStopRequested', id: probe }, { clientId: 'bench', clientSeq: 1 })
    while (host.processCount > 0) await sleep(10)
    out.rssKib = await settledRss()
    out.anonKib = anonKib()
    out.tools = host.listTools().length
    out.rssListedKib = await settledRss()
    Object.assign(out, searchFigures(host, queries))
  }
  await host.dispose()
  return out
}

/** listToolSummaries vs listTools, JSON bytes. */
function sizes(host) {
  return {
    fullBytes: JSON.stringify(host.listTools()).length,
    summaryBytes: JSON.stringify(host.listToolSummaries()).length,
  }
}

/** JSON bytes of the AHP action envelopes one server's re-list emits. */
async function relistBytes(host, serverId) {
  let bytes = 0
  let done = false
  const onAction = (e) => { bytes += JSON.stringify(e).length }
  const onTools = (e) => { if (e.serverId === serverId && e.reason === 'listChanged') done = true }
  host.on('action', onAction)
  host.on('toolsChanged', onTools)
  await host.callTool({ serverId, name: 'touch_tools', arguments: {} })
  while (!done) await sleep(1)
  await sleep(200)
  host.off('action', onAction)
  host.off('toolsChanged', onTools)
  return bytes
}

/** searchTools over the whole catalogue: p50 and p99 (ms) of `n` queries. */
function searchFigures(host, n) {
  const times = []
  for (let i = 0; i < n; i++) {
    const query = `${WORDS[i % WORDS.length]} ${String(i % EXTRA).padStart(4, '0')}`
    const t = performance.now()
    host.searchTools(query, { limit: 20 })
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))]
  return { searchP50Ms: at(0.5), searchP99Ms: at(0.99) }
}

/** A: `servers` SDK clients over stdio, each connected and listed by hand. */
async function sdkClients(root, servers) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js')
  const t0 = performance.now()
  const out = {}
  const clients = []
  let first
  await Promise.all(Array.from({ length: servers }, async (_, i) => {
    const client = new Client({ name: 'scale-sdk', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: NODE, args: [SERVER, 'stdio', '--tools', String(EXTRA), `scale-${i}`, root] }))
    const { tools } = await client.listTools()
    clients.push([client, tools.length])
    if (!first) {
      first = client.callTool({ name: 'echo', arguments: { message: 'x' } }).then(() => { out.firstCallableMs = performance.now() - t0 })
    }
  }))
  await first
  out.allListedMs = performance.now() - t0
  out.tools = clients.reduce((n, [, t]) => n + t, 0)
  out.rssKib = await settledRss()
    out.anonKib = anonKib()
  await Promise.all(clients.map(([c]) => c.close()))
  return out
}

// ─── parent ──────────────────────────────────────────────────────────────────

function runChild(mode, root, dataDir, servers, queries) {
  return new Promise((resolve, reject) => {
    const args = ['--expose-gc', fileURLToPath(import.meta.url), '--child', mode, root, dataDir, String(servers), String(queries)]
    const proc = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    proc.stdout.on('data', (d) => { text += d })
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10 * 60_000)
    proc.once('exit', (code, signal) => {
      clearTimeout(timer)
      if (code !== 0) return reject(new Error(`scale ${mode}: exit ${code ?? signal}`))
      try { resolve(JSON.parse(text.trim().split('\n').pop())) } catch (e) { reject(new Error(`scale ${mode}: bad output ${text}: ${e.message}`)) }
    })
  })
}

/** Writes a plugin whose `mcp.json` has `servers` bench servers; returns its root. */
function writePlugin(dir, servers, marker) {
  const root = join(dir, 'scale-plugin')
  mkdirSync(root, { recursive: true })
  const mcpServers = {}
  for (let i = 0; i < servers; i++) {
    const name = `s${String(i).padStart(3, '0')}`
    mcpServers[name] = { type: 'stdio', command: NODE, args: [SERVER, 'stdio', '--tools', String(EXTRA), name, marker] }
  }
  writeFileSync(join(root, 'mcp.json'), JSON.stringify({ mcpServers }, null, 1))
  return root
}

/** Runs of `empty` and `lazy-warm` (see benchScale). */
const REPEATS = Number(process.env.SCALE_REPEATS ?? 3)

/** One object with, per numeric field of `outs`, the median of its values (other fields from the first). */
function medianFields(outs) {
  const out = { ...outs[0] }
  for (const [key, value] of Object.entries(out)) {
    if (typeof value !== 'number') continue
    const values = outs.map((o) => o[key]).filter((v) => typeof v === 'number').sort((a, b) => a - b)
    out[key] = values[Math.floor(values.length / 2)]
  }
  return out
}

const ms = (v) => (v === undefined ? '–' : v < 10 ? v.toFixed(2) : v.toFixed(0))
const mib = (k) => (k === undefined ? '–' : (k / 1024).toFixed(1))

/** Runs every mode and prints the table; returns the figures. */
export async function benchScale({ servers = Number(process.env.SCALE_SERVERS ?? 100), queries = Number(process.env.SCALE_QUERIES ?? 1000), repeats = REPEATS } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ahp-bench-scale-'))
  const marker = `ahpscale${randomBytes(6).toString('hex')}`
  const root = writePlugin(dir, servers, marker)
  const lazyDir = join(dir, 'lazy-data')
  const r = {}
  // The goal's RSS figure is the difference of two readings (lazy-warm less
  // empty), each about ±0.3 MiB from run to run on a shared machine: those two
  // modes run `repeats` times, interleaved, and each of their figures is the
  // median of its runs.
  const runs = { empty: [], 'lazy-warm': [] }
  try {
    for (const mode of ['empty', 'sdk', 'eager', 'lazy-cold', 'lazy-warm']) {
      process.stderr.write(`… scale ${mode}\n`)
      const data = mode.startsWith('lazy') ? lazyDir : join(dir, `${mode}-data`)
      r[mode] = await runChild(mode, root, data, servers, queries)
      runs[mode]?.push(r[mode])
    }
    for (let i = 1; i < repeats; i++) {
      for (const mode of ['empty', 'lazy-warm']) {
        process.stderr.write(`… scale ${mode} (run ${i + 1} of ${repeats})\n`)
        runs[mode].push(await runChild(mode, root, mode === 'empty' ? join(dir, 'empty-data') : lazyDir, servers, queries))
      }
    }
    for (const mode of Object.keys(runs)) r[mode] = medianFields(runs[mode])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const { empty, sdk, eager, 'lazy-cold': cold, 'lazy-warm': warm } = r
  const over = (x) => (x === undefined ? undefined : x - empty.rssKib)
  const anonOver = (x) => (x === undefined || empty.anonKib === undefined ? undefined : x - empty.anonKib)
  console.log('')
  console.log(`| scale: ${servers} stdio servers, ${eager.tools} tools (issue 29) | A (SDK clients) | C eager | C lazy, warm cache | goal |`)
  console.log('| --- | ---: | ---: | ---: | --- |')
  console.log(`| first tool callable after the start (ms) | ${ms(sdk.firstCallableMs)} | ${ms(eager.firstCallableMs)} | ${ms(warm.firstCallableMs)} | lazy warm ≤ 1000 |`)
  console.log(`| every tool listed (ms) | ${ms(sdk.allListedMs)} | ${ms(eager.allListedMs)} | ${ms(warm.cachedToolsMs)} (from the cache) | |`)
  console.log(`| RSS of the client process (MiB) | ${mib(sdk.rssKib)} | ${mib(eager.rssKib)} | ${mib(warm.rssNotStartedKib)} (none started) | |`)
  console.log(`| RSS over an empty host (MiB) | ${mib(over(sdk.rssKib))} | ${mib(over(eager.rssKib))} | ${mib(over(warm.rssNotStartedKib))} (none started) | lazy ≤ 10 |`)
  console.log(`| private (anonymous) RSS over an empty host (MiB; without code pages) | ${mib(anonOver(sdk.anonKib))} | ${mib(anonOver(eager.anonKib))} | ${mib(anonOver(warm.anonNotStartedKib))} | |`)
  console.log(`| … after one call started a server, stopped again (MiB over an empty host; private) | – | – | ${mib(over(warm.rssKib))}; ${mib(anonOver(warm.anonKib))} | |`)
  console.log(`| … then after one listTools() in JS (MiB over an empty host) | – | – | ${mib(over(warm.rssListedKib))} | |`)
  console.log(`| server processes before the first call | ${servers} | ${servers} | ${warm.processesBeforeCall} | |`)
  console.log(`| searchTools p50 / p99 (ms, ${queries} queries) | – | – | ${ms(warm.searchP50Ms)} / ${ms(warm.searchP99Ms)} | p50 ≤ 2 |`)
  console.log(`| AHP action bytes of one server's re-list | – | ${eager.relistBytes} | – | |`)
  console.log(`| listToolSummaries / listTools (JSON bytes) | – | ${eager.summaryBytes} / ${eager.fullBytes} (${(eager.summaryBytes / eager.fullBytes).toFixed(2)}×) | – | |`)
  console.log('')
  console.log(`- empty host RSS ${mib(empty.rssKib)} MiB; the empty and lazy-warm figures are medians of ${repeats} interleaved runs; lazy, cold cache (every server starts once to list): every tool listed in ${ms(cold.allListedMs)} ms, all cached in ${ms(cold.cachedMs)} ms.`)
  console.log('- A re-list publishes `session/serverToolsChanged` with the whole catalogue (AHP full replacement), so its bytes grow with the catalogue, not the change.')
  return r
}

if (process.argv[2] === '--child') {
  const [, , , mode, root, dataDir, servers, queries] = process.argv
  const out = await child(mode, root, dataDir, Number(servers), Number(queries))
  process.stdout.write(JSON.stringify(out) + '\n')
  process.exit(0)
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const at = (name) => {
    const i = process.argv.indexOf(name)
    return i > 0 ? Number(process.argv[i + 1]) : undefined
  }
  await benchScale({ servers: at('--servers') ?? undefined, queries: at('--queries') ?? undefined, repeats: at('--repeats') ?? undefined })
}
