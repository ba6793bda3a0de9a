// What `npm run bench` measures (the runs) and the table rows made of them,
// with the goals of issue 28. A run is one scenario of bench/driver.mjs (or
// bench/floor) per client; a row picks one value of a run. `--only <run id>`
// runs one of them (e.g. `--only stdio-tp`).

export const CLIENTS = ['A', 'A2', 'Bt', 'C']

/**
 * The runs: id, scenario, transport, server (`small`: 3 tools, `large`:
 * 1003), counts (full / quick), `extra` clients (Cu: C without the launch
 * queue; Cl: C without the
 * server/discover probe), `once`: only in round 1 (long runs).
 */
export function runs(quick) {
  const q = (full, short) => (quick ? short : full)
  return [
    { id: 'stdio-seq', scenario: 'seq', transport: 'stdio', server: 'small', warmup: q(200, 50), calls: q(2000, 300) },
    { id: 'stdio-tp', scenario: 'tp', transport: 'stdio', server: 'small', inflight: 16, warmup: q(500, 100), seconds: q(5, 1) },
    { id: 'stdio-big', scenario: 'big', transport: 'stdio', server: 'small', warmup: q(3, 1), calls: q(20, 4), bytes: 1 << 20 },
    { id: 'http-seq', scenario: 'seq', transport: 'http', server: 'small', warmup: q(200, 50), calls: q(2000, 300) },
    { id: 'http-tp', scenario: 'tp', transport: 'http', server: 'small', inflight: 16, warmup: q(500, 100), seconds: q(5, 1) },
    { id: 'http-connect', scenario: 'connect', transport: 'http', server: 'small', runs: q(10, 3), tools: 3 },
    { id: 'stdio-list', scenario: 'list', transport: 'stdio', server: 'large', runs: q(5, 2), tools: 1003, extra: ['Cl'] },
    { id: 'http-list', scenario: 'list', transport: 'http', server: 'large', runs: q(5, 2), tools: 1003, extra: ['Cl'] },
    { id: 'stdio-refresh', scenario: 'refresh', transport: 'stdio', server: 'large', runs: q(9, 2), tools: 1003 },
    { id: 'rss', scenario: 'rss', transport: 'stdio', server: 'small', extra: ['bare'] },
    { id: 'soak', scenario: 'soak', transport: 'stdio', server: 'small', inflight: 16, calls: q(100_000, 10_000), every: q(20_000, 2000), once: true },
    { id: 'servers-20', scenario: 'servers', transport: 'stdio', server: 'small', count: q(20, 5), extra: ['Cu'] },
    { id: 'servers-100', scenario: 'servers', transport: 'stdio', server: 'small', count: 100, once: true, skipQuick: true },
  ]
}

const MIB = 1024
/** The flat test of the soak: growth after the first sample past warm-up (KiB). */
export const SOAK_FLAT_KIB = 4 * MIB

/** Issue 28's goal for a figure: C at most `factor` × A (at least, for ↑). */
const vsA = (factor = 1.0) => ({ vs: 'A', factor })
/** Issue 28's goal for the stdio call figures: C within 2× the rmcp floor Bt. */
const vsBt = { vs: 'Bt', factor: 2.0 }
/** RSS goal: C at most a bare `node` of the same run plus this many MiB (issue 28). */
export const RSS_OVER_BARE_MIB = 10

/**
 * Table rows: `run`, `pick(result)`, unit, `higher` (bigger is better), and
 * `goals` (issue 28: every figure C/A ≤ 1.0, throughput ≥ 1.0× A, and the
 * stdio call figures C/Bt ≤ 2.0): `{ vs, factor }` means C ≤ factor × vs
 * (≥ when `higher`); `{ check(values), what(values) }` for the others. A
 * row is met when every goal is.
 */
export const ROWS = [
  { label: 'stdio echo p50', run: 'stdio-seq', pick: (r) => r.p50, unit: 'ms', goals: [vsA(), vsBt] },
  { label: 'stdio echo p99', run: 'stdio-seq', pick: (r) => r.p99, unit: 'ms' },
  { label: 'stdio client CPU per sequential call', run: 'stdio-seq', pick: (r) => r.cpu, unit: 'µs', goals: [vsA(), vsBt] },
  { label: '… of it on the JS thread', run: 'stdio-seq', pick: (r) => r.cpuJs, unit: 'µs' },
  { label: 'stdio throughput, 16 in flight', run: 'stdio-tp', pick: (r) => r.tp, unit: 'calls/s', higher: true, goals: [vsA(), { vs: 'Bt', factor: 0.5 }] },
  { label: 'stdio client CPU per call at 16 in flight', run: 'stdio-tp', pick: (r) => r.cpu, unit: 'µs', goals: [vsA(), vsBt] },
  { label: '… of it on the JS thread', run: 'stdio-tp', pick: (r) => r.cpuJs, unit: 'µs' },
  { label: 'stdio 1 MiB result, per call', run: 'stdio-big', pick: (r) => r.ms, unit: 'ms', goals: [vsA(), vsBt] },
  { label: 'HTTP echo p50', run: 'http-seq', pick: (r) => r.p50, unit: 'ms', goals: [vsA()] },
  { label: 'HTTP client CPU per sequential call', run: 'http-seq', pick: (r) => r.cpu, unit: 'µs', goals: [vsA()] },
  { label: 'HTTP throughput, 16 in flight', run: 'http-tp', pick: (r) => r.tp, unit: 'calls/s', higher: true, goals: [vsA()] },
  { label: 'HTTP client CPU per call under load (16 in flight)', run: 'http-tp', pick: (r) => r.cpu, unit: 'µs', goals: [vsA()] },
  { label: '… of it on the JS thread', run: 'http-tp', pick: (r) => r.cpuJs, unit: 'µs' },
  { label: 'HTTP connect (C: until `ready`, 3-tool list)', run: 'http-connect', pick: (r) => r.ms, unit: 'ms', goals: [vsA()] },
  { label: 'stdio connect + tools/list, 1003 tools', run: 'stdio-list', pick: (r) => r.ms, unit: 'ms', goals: [vsA()] },
  { label: 'HTTP connect + tools/list, 1003 tools', run: 'http-list', pick: (r) => r.ms, unit: 'ms', goals: [vsA()] },
  { label: 'refresh after list_changed, 1003 tools', run: 'stdio-refresh', pick: (r) => r.ms, unit: 'ms', goals: [vsA()] },
  { label: '… until the change was seen (C: re-listed by its host)', run: 'stdio-refresh', pick: (r) => r.seenMs, unit: 'ms' },
  { label: '… from then until the list is in JS', run: 'stdio-refresh', pick: (r) => r.listMs, unit: 'ms' },
  {
    label: 'RSS after connecting (bare node in the goal)',
    run: 'rss',
    pick: (r) => r.rss / MIB,
    unit: 'MiB',
    goals: [{ check: (v) => (Number.isFinite(v.bare) ? v.C <= v.bare + RSS_OVER_BARE_MIB : undefined), what: (v) => `≤ bare ${fmt(v.bare, 'MiB')} + ${RSS_OVER_BARE_MIB}` }],
  },
  {
    label: 'RSS growth over 100k calls, 20k → end',
    run: 'soak',
    pick: (r) => (r.rss.at(-1) - r.rss[1]) / MIB,
    unit: 'MiB',
    goals: [{ check: (v) => v.C * MIB <= SOAK_FLAT_KIB, what: () => `flat (≤ ${SOAK_FLAT_KIB / MIB} MiB)` }],
  },
  { label: '20 stdio servers to ready', run: 'servers-20', pick: (r) => r.ms, unit: 'ms', goals: [vsA()] },
  { label: '100 stdio servers to ready', run: 'servers-100', pick: (r) => r.ms, unit: 'ms', goals: [vsA()] },
]

/** A number for the table: 3 significant digits, calls/s whole. */
export function fmt(v, unit) {
  if (!Number.isFinite(v)) return 'n/a'
  if (unit === 'calls/s') return String(Math.round(v))
  const a = Math.abs(v)
  if (a >= 100) return v.toFixed(0)
  if (a >= 10) return v.toFixed(1)
  if (a >= 1) return v.toFixed(2)
  return v.toFixed(3)
}
