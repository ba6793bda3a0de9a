// `npm run bench`: one interleaved run of four clients against the same
// benchmark server (bench/server.mjs, the official SDK's low-level server):
//   A  = @modelcontextprotocol/sdk v1 client      (bench/clients.mjs)
//   A2 = @modelcontextprotocol/client v2 client    (bench/clients.mjs)
//   Bt = a plain rmcp client, current_thread tokio, pooled reqwest: the floor
//        of an rmcp-based client without a binding (bench/floor, Rust)
//   C  = this addon through its public JS API      (bench/clients.mjs)
// Every measurement runs in a fresh client process (bench/driver.mjs, or the
// floor binary), so client CPU is that process's own CPU time (all threads)
// and never the server's. Rounds interleave the clients: for each run of
// bench/figures.mjs, A, A2, Bt, C, then the next run; the table shows the
// median over the rounds, the ratios C/A and C/Bt, and the goals of issue 28.
//
//   npm run bench [-- --rounds N] [--quick] [--only <run id>[,<run id>…]] [--no-build] [--profile]
//
// --quick: short counts, 1 round by default (a smoke run; numbers are rough).
// --only:  runs of bench/figures.mjs, comma-separated (e.g. stdio-tp; one for profiling).
// --clients: a comma list of the clients to run (e.g. C; default all).
// --baseline <file.node>: also measure that addon as client C0 (the same
//          driver and JS API, NAPI_RS_NATIVE_LIBRARY_PATH), interleaved with
//          the others, for a before/after of one change in one run (C/C0).
// --profile: record each measurement of C (or of --profile-clients) with
//          `perf record --call-graph dwarf` and summarize it per thread
//          (bench/profile.mjs); default run with it: stdio-tp.
// Last, the AHP state mirror block (bench/mirror.mjs) and the scale block
// (bench/scale.mjs: 100 servers, 5,000 tools; 20 with --quick).
// It builds the release addon (when missing, a debug build, or older than
// the sources) and the floor crate first (bench/build.mjs). Prints the
// table and the machine on stdout; progress goes to stderr. BENCH_QUICK=1
// is the same as --quick.

import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem, release } from 'node:os'
import { join, dirname, resolve as resolvePath } from 'node:path'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { addonFile, addonStamp, ensureBuilt, FLOOR, ROOT } from './build.mjs'
import { CLIENTS, ROWS, runs as allRuns } from './figures.mjs'
import { renderTable, notes } from './report.mjs'
import { perfCommand, profileDir, profiled, summarize } from './profile.mjs'
import { DRIVER, specFor, startHttpServer } from './specs.mjs'

const NODE = process.execPath
const MARKER = `ahpbench${randomBytes(6).toString('hex')}`

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string' },
    quick: { type: 'boolean', default: Boolean(process.env.BENCH_QUICK && process.env.BENCH_QUICK !== '0') },
    only: { type: 'string' },
    clients: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    baseline: { type: 'string' },
    'profile-clients': { type: 'string' },
  },
})
const QUICK = opts.quick
const PICK = opts.clients?.split(',')
if (QUICK) process.env.BENCH_QUICK = '1' // bench/mirror.mjs reads it
const ROUNDS = Number(opts.rounds ?? (QUICK ? 1 : 3))
let RUNS = allRuns(QUICK).filter((r) => !(QUICK && r.skipQuick))
const PROFILE = opts.profile ? (opts['profile-clients'] ?? 'C').split(',') : undefined
if (PROFILE) {
  const perf = perfCommand()
  if (perf instanceof Error) throw perf
  opts.only ??= 'stdio-tp'
}
const profiles = []
if (opts.only) {
  const only = opts.only.split(',')
  const unknown = only.filter((id) => !allRuns(false).some((r) => r.id === id))
  if (unknown.length) throw new Error(`--only: no run ${unknown.join(', ')}; runs: ${allRuns(false).map((r) => r.id).join(', ')}`)
  RUNS = RUNS.filter((r) => only.includes(r.id))
}

// ─── processes ──────────────────────────────────────────────────────────────

const children = new Set()
process.on('exit', () => { for (const c of children) try { c.kill('SIGKILL') } catch {} })
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130))

const BASELINE = opts.baseline ? resolvePath(opts.baseline) : undefined
if (BASELINE && !existsSync(BASELINE)) throw new Error(`--baseline: no file ${BASELINE}`)

/**
 * One measurement: the client's process prints one JSON line (bench/driver.mjs);
 * with --profile and a profiled client, under `perf record` writing `record`.
 * C0 is client C on the --baseline addon.
 */
function measure(client, spec, record) {
  const kind = client === 'C0' ? 'C' : client
  let [cmd, args] = client === 'Bt' ? [FLOOR, [JSON.stringify(spec)]] : [NODE, [DRIVER, kind, JSON.stringify(spec)]]
  if (record) [cmd, args] = profiled(cmd, args, record, client !== 'Bt')
  const env = client === 'C0' ? { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: BASELINE } : process.env
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env })
    children.add(child)
    let out = ''
    child.stdout.on('data', (d) => { out += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      children.delete(child)
      if (code !== 0) return reject(new Error(`${client} ${spec.scenario}/${spec.transport}: exit ${code ?? signal}`))
      try { resolve(JSON.parse(out.trim().split('\n').pop())) } catch (e) { reject(new Error(`${client}: bad output ${out}: ${e.message}`)) }
    })
  })
}

function markedProcesses() {
  const live = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try { if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(MARKER)) live.push(Number(name)) } catch {}
  }
  return live
}

function version(pkg) {
  try { return JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')).version } catch { return '?' }
}

// ─── main ───────────────────────────────────────────────────────────────────

const built = opts['no-build'] ? checkBuilt() : ensureBuilt()

/**
 * `--no-build`: what is there must be measurable; a clear error otherwise
 * (`npm test` leaves a debug addon; only the bench builds the floor client).
 */
function checkBuilt() {
  const stamp = addonStamp()
  const wantC = !PICK || PICK.some((c) => c.startsWith('C'))
  if (wantC && (!addonFile() || !stamp || stamp.profile === 'debug')) {
    const what = !addonFile()
      ? 'there is no addon'
      : !stamp
        ? "the addon's build profile is not recorded"
        : 'the addon is a debug build (npm test builds one)'
    throw new Error(`--no-build: ${what}; run \`npm run build\` first, or the bench without --no-build`)
  }
  if ((!PICK || PICK.includes('Bt')) && !existsSync(FLOOR)) {
    throw new Error(`--no-build: the floor client Bt is not built (${FLOOR}); run the bench once without --no-build, or leave Bt out with --clients A,A2,C`)
  }
  return { stamp }
}
const t0 = performance.now()
const load0 = loadavg()
const cpu = cpus()
const facts = [
  `node ${process.version} (${process.platform}-${process.arch}), kernel ${release()}, ${cpu.length} CPUs (${cpu[0]?.model?.trim() ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
  `A = @modelcontextprotocol/sdk ${version('@modelcontextprotocol/sdk')}, A2 = @modelcontextprotocol/client ${version('@modelcontextprotocol/client')}, Bt = bench/floor (rmcp ${cargoRmcp()}), C = addon (${built.stamp?.profile ?? 'profile not recorded'} build${built.stamp?.pgo ? ', PGO' : ''})`,
  `${ROUNDS} round(s)${QUICK ? ' (--quick: short counts, rough numbers)' : ''}; load average at start ${load0.map((l) => l.toFixed(2)).join(' ')}`,
  ...(BASELINE ? [`C0 = client C on the baseline addon ${BASELINE}`] : []),
]

function cargoRmcp() {
  const m = /name = "rmcp"\nversion = "([^"]+)"/.exec(readFileSync(join(ROOT, 'Cargo.lock'), 'utf8'))
  return m?.[1] ?? '?'
}

const http = RUNS.some((r) => r.transport === 'http') ? await startHttpServer(MARKER, children) : undefined
const results = {} // run id → client → [result per round]
let failed = false
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const run of RUNS) {
      if (run.once && round > 1) continue
      const spec = specFor(run, http, MARKER)
      const clients = [...CLIENTS, ...(BASELINE ? ['C0'] : []), ...(run.extra ?? [])]
      for (const client of clients.filter((c) => !PICK || PICK.includes(c))) {
        process.stderr.write(`… round ${round}/${ROUNDS} ${run.id} ${client}\n`)
        const record = PROFILE?.includes(client) ? join(profileDir(ROOT), `${run.id}-${client}-r${round}.data`) : undefined
        const r = await measure(client, spec, record)
        ;((results[run.id] ??= {})[client] ??= []).push(r)
        if (record) profiles.push(summarize(record))
      }
    }
  }
} catch (err) {
  failed = true
  console.error(`bench failed: ${err?.stack ?? err}`)
} finally {
  http?.stop()
}

// Every figure of every round, for a later look (e.g. the JS-thread split).
const RAW = join(ROOT, 'target', 'bench-results.json')
try {
  mkdirSync(dirname(RAW), { recursive: true })
  writeFileSync(RAW, JSON.stringify({ facts, rounds: ROUNDS, results }, null, 1) + '\n')
} catch {}

console.log('# ahp-mcp-host bench (issue 28 goals)')
console.log('')
for (const f of facts) console.log(`- ${f}`)
console.log('')
if (!failed) {
  const rows = ROWS.filter((row) => results[row.run])
  console.log(renderTable(rows, results, Boolean(BASELINE)))
  console.log('')
  for (const line of notes(results, ROUNDS)) console.log(line)
}
let left = markedProcesses()
for (let i = 0; i < 100 && left.length; i++) {
  await new Promise((r) => setTimeout(r, 50))
  left = markedProcesses()
}
for (const pid of left) try { process.kill(pid, 'SIGKILL') } catch {}
if (PROFILE) {
  console.log(`- --profile: ${PROFILE.join(', ')} ran under \`perf record --call-graph dwarf\`, so their figures are slower than unprofiled ones; summaries (samples per thread, top symbols):`)
  for (const p of profiles) console.log(`  - ${p}`)
}
console.log(`- load average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}; took ${((performance.now() - t0) / 1000).toFixed(0)} s; bench server processes left: ${left.length}`)
if (!opts.only && !failed) {
  // AHP state in JS: the state mirror against getState() snapshots (bench/mirror.mjs).
  console.log('')
  ;(await import('./mirror.mjs')).benchMirror()
  // Many servers (issue 29 item 7): eager, lazy with a warm tool cache, against SDK clients (bench/scale.mjs).
  try {
    await (await import('./scale.mjs')).benchScale(QUICK ? { servers: 20, queries: 200, repeats: 1 } : {})
  } catch (err) {
    console.error(`scale bench failed: ${err?.stack ?? err}`)
    failed = true
  }
}
process.exitCode = failed || left.length ? 1 : 0
