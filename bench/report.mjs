// The markdown table and notes of `npm run bench` (bench/run.mjs): medians
// over the rounds per client, ratios C/A and C/Bt, and each goal met/missed.

import { CLIENTS, fmt, RSS_OVER_BARE_MIB } from './figures.mjs'

const median = (v) => {
  const s = [...v].filter(Number.isFinite).sort((a, b) => a - b)
  return s.length ? s[Math.ceil(s.length / 2) - 1] : NaN
}

/** Medians of `row` per client (the extra clients too, e.g. `bare`). */
export function values(row, results) {
  const out = {}
  for (const [client, list] of Object.entries(results[row.run] ?? {})) out[client] = median(list.map(row.pick))
  return out
}

const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : 'n/a')

/** One goal's words and whether it is met (`undefined`: a value is missing). */
function oneGoal(row, g, v) {
  if (g.check) return [g.what(v), Number.isFinite(v.C) ? g.check(v) : undefined] // check: true, false or undefined (a value it needs is missing)
  const limit = g.factor * v[g.vs]
  const met = row.higher ? v.C >= limit : v.C <= limit
  const what = `${row.higher ? '≥' : '≤'} ${g.factor.toFixed(1)}× ${g.vs}`
  return [what, Number.isFinite(limit) && Number.isFinite(v.C) ? met : undefined]
}

/** The goal cell and whether every goal of the row is met (`undefined`: no goal, or a value is missing). */
function goal(row, v) {
  if (!row.goals?.length) return ['', undefined]
  const each = row.goals.map((g) => oneGoal(row, g, v))
  const met = each.some(([, m]) => m === undefined) ? undefined : each.every(([, m]) => m)
  return [each.map(([w]) => w).join('; '), met]
}

/**
 * The markdown table of `rows`, aligned. With `baseline` (`--baseline`),
 * a C0 column (the baseline addon, measured in the same rounds) and C/C0.
 */
export function renderTable(rows, results, baseline = false) {
  const clients = baseline ? [...CLIENTS, 'C0'] : CLIENTS
  const head = ['figure', 'unit', ...clients, 'C/A', 'C/Bt', ...(baseline ? ['C/C0'] : []), 'goal', 'met']
  const cells = rows.map((row) => {
    const v = values(row, results)
    const [what, met] = goal(row, v)
    return [
      row.label + (row.higher ? ' (↑)' : ''),
      row.unit,
      ...clients.map((c) => fmt(v[c], row.unit)),
      ratio(v.C, v.A),
      ratio(v.C, v.Bt),
      ...(baseline ? [ratio(v.C, v.C0)] : []),
      what,
      met === undefined ? (what ? 'n/a' : '') : met ? 'met' : 'MISSED',
    ]
  })
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)))
  const right = head.map((_, i) => i >= 2 && i < head.length - 2)
  const line = (c) => '| ' + c.map((s, i) => (right[i] ? s.padStart(widths[i]) : s.padEnd(widths[i]))).join(' | ') + ' |'
  const rule = '| ' + widths.map((w, i) => (right[i] ? '-'.repeat(w - 1) + ':' : '-'.repeat(w))).join(' | ') + ' |'
  return [line(head), rule, ...cells.map(line)].join('\n')
}

/** The lines under the table. */
export function notes(results, rounds) {
  const out = [
    `- Medians over ${rounds} round(s); clients interleaved per run (A, A2, Bt, C); each measurement is a fresh client process.`,
    '- Ratios: C/A and C/Bt; for calls/s (↑) above 1 means C is faster, for everything else below 1 means C is faster/cheaper.',
    '- Client CPU = user + system time of the client process (all its threads) over the timed calls, per call; servers are other processes. "… of it on the JS thread": the main thread alone (Linux, /proc, 10 ms ticks); the rest is the addon\'s tokio worker and the libuv/V8 helper threads (Bt has no JS thread).',
  ]
  for (const id of ['stdio-list', 'http-list']) {
    const cl = results[id]?.Cl
    if (cl) out.push(`- ${id}: C with \`protocol: 'legacy'\` (no server/discover probe): ${fmt(median(cl.map((r) => r.ms)), 'ms')} ms.`)
  }
  const cu = results['servers-20']?.Cu
  if (cu) out.push(`- servers-20: C with \`limits.maxConcurrentLaunches: 256\` (no launch queue; the default queue starts 8 at a time): ${fmt(median(cu.map((r) => r.ms)), 'ms')} ms.`)
  const bare = results.rss?.bare
  if (bare) out.push(`- RSS: a bare \`node\` process in the same run: ${fmt(median(bare.map((r) => r.rss / 1024)), 'MiB')} MiB; C's goal is that + ${RSS_OVER_BARE_MIB} MiB.`)
  const soak = results.soak
  if (soak) {
    const series = Object.entries(soak).map(([c, [r]]) => `${c} ${r.rss.map((k) => (k / 1024).toFixed(1)).join(' → ')}`)
    out.push(`- RSS (MiB) at the start of the soak and after each fifth of its calls (16 in flight): ${series.join('; ')}.`)
  }
  return out
}
