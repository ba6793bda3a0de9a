// `npm run bench -- --profile`: records where a client's CPU goes while it
// is measured, the way issue 15's and issue 28's notes did (docs/benchmark.md,
// "Profile"): Linux `perf record -e cpu-clock -F 1999 --call-graph dwarf`
// around each measurement of the profiled clients (default: C only), with
// V8's perf map on (`node --perf-basic-prof`) so JS frames have names. Each
// recording is `target/bench-profiles/<run>-<client>-r<round>.data`; beside
// it a `.txt` summary: the share of samples per thread (tid:comm) and the top
// self symbols of each busy thread (`perf report --no-inline --no-children`). Read a
// recording further with `perf report -i <file> --no-inline`.
//
// Profiling slows the client (dwarf unwinding), so the figures of a
// profiled run are not comparable with an unprofiled one: the table says so.

import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Sampling rate (Hz) and the stack bytes copied per sample (dwarf unwinding). */
const FREQUENCY_HZ = 1999
const STACK_BYTES = 32768
/** Symbols listed per thread in the summary. */
const TOP_SYMBOLS = 25

/** The `perf` command, or an Error saying why profiling cannot run here. */
export function perfCommand() {
  if (process.platform !== 'linux') return new Error('--profile needs Linux perf_events (this is ' + process.platform + ')')
  const r = spawnSync('perf', ['--version'], { encoding: 'utf8' })
  if (r.error || r.status !== 0) return new Error('--profile needs `perf` on PATH (Debian: apt-get install linux-perf)')
  return 'perf'
}

/** Where recordings go (made on first use). */
export function profileDir(root) {
  const dir = join(root, 'target', 'bench-profiles')
  mkdirSync(dir, { recursive: true })
  return dir
}

/**
 * `[cmd, args]` of one measurement wrapped in `perf record` writing `out`;
 * a Node driver gets `--perf-basic-prof` (named JS frames; V8 then also
 * writes a log, sent to `<out>.v8.log` instead of the working directory).
 */
export function profiled(cmd, args, out, isNode) {
  const v8 = ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${out}.v8.log`]
  const inner = isNode ? [cmd, ...v8, ...args] : [cmd, ...args]
  return ['perf', ['record', '-q', '-e', 'cpu-clock', '-F', String(FREQUENCY_HZ), '--call-graph', `dwarf,${STACK_BYTES}`, '-o', out, '--', ...inner]]
}

/** Runs `perf report` on `data` and returns its stdout (empty on failure). */
function report(data, extra) {
  const r = spawnSync('perf', ['report', '-i', data, '--no-inline', '--no-children', '-g', 'none', '--stdio', '-q', ...extra], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  return r.status === 0 ? r.stdout : ''
}

/**
 * Writes `<data>.txt`: samples per thread, then the top self symbols of each
 * thread that has at least 2% of the samples. Returns the summary's path.
 */
export function summarize(data) {
  const threads = report(data, ['--sort', 'pid'])
    .split('\n')
    .map((l) => /^\s*([\d.]+)%\s+(\d+):(.+?)\s*$/.exec(l))
    .filter(Boolean)
    .map(([, pct, tid, comm]) => ({ pct: Number(pct), tid, comm }))
  const lines = [`# ${data}`, '', '## samples per thread (tid:comm; the stdio server, a child, is recorded too; the client\'s JS thread has the lowest node tid)', '']
  for (const t of threads) lines.push(`${t.pct.toFixed(2).padStart(6)}%  ${t.tid}:${t.comm}`)
  for (const t of threads.filter((t) => t.pct >= 2)) {
    lines.push('', `## top ${TOP_SYMBOLS} self symbols of ${t.tid}:${t.comm} (share of all samples)`, '')
    const syms = report(data, ['--tid', t.tid, '--sort', 'dso,sym']).split('\n').filter((l) => l.trim())
    lines.push(...syms.slice(0, TOP_SYMBOLS))
  }
  const out = `${data}.txt`
  writeFileSync(out, lines.join('\n') + '\n')
  return out
}
