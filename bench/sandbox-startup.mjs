// `node bench/sandbox-startup.mjs`: the start-up cost of the stdio sandbox
// (issue 32). One host; N starts of each of two stdio servers (official
// SDK: __test__/fixtures/tools-server.mjs and the sandbox probe), each
// measured from `addServer` to `whenReady` (spawn, handshake and first
// `tools/list`), then removed; the variants interleaved so that machine
// noise hits them alike: no sandbox, `sandbox: true` (Landlock, network
// none) and `sandbox: {network: {allowHosts}}` (Landlock and the host's
// proxy). Prints the median, p10 and p90 per variant and the medians'
// differences. SANDBOX_BENCH_N (default 40) sets N. Select a release addon
// with NAPI_RS_NATIVE_LIBRARY_PATH. No assertions: it only prints.

import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const { McpHost } = require(join(ROOT, 'index.js'))
const N = Number(process.env.SANDBOX_BENCH_N ?? 40)

const servers = {
  tools: join(ROOT, '__test__', 'fixtures', 'tools-server.mjs'),
  probe: join(ROOT, '__test__', 'fixtures', 'sandbox-probe-server.mjs'),
}
const variants = {
  off: false,
  landlock: true,
  'landlock+proxy': { network: { allowHosts: ['localhost'] } },
}

const dataDir = mkdtempSync(join(tmpdir(), 'ahp-sandbox-bench-'))
const host = new McpHost({ dataDir })
const times = {}
let n = 0
try {
  for (let i = 0; i < N; i++) {
    for (const [server, script] of Object.entries(servers)) {
      for (const [variant, sandbox] of Object.entries(variants)) {
        const name = `s${n++}`
        const config = { type: 'stdio', command: process.execPath, args: [script] }
        const t0 = process.hrtime.bigint()
        await host.addServer({ name, config, root: ROOT, sandbox })
        const [outcome] = await host.whenReady([name])
        const ms = Number(process.hrtime.bigint() - t0) / 1e6
        if (outcome.status !== 'ready') throw new Error(`${server}/${variant}: ${JSON.stringify(outcome.error)}`)
        if (i > 0) (times[`${server} ${variant}`] ??= []).push(ms) // the first round warms caches
        await host.remove(name)
      }
    }
  }
} finally {
  await host.dispose()
  rmSync(dataDir, { recursive: true, force: true })
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
const medians = {}
console.log(`spawn-to-ready, ms, ${N - 1} starts each (after one warm-up round)`)
for (const [key, list] of Object.entries(times)) {
  const sorted = [...list].sort((a, b) => a - b)
  medians[key] = pct(sorted, 0.5)
  console.log(`${key.padEnd(24)} median ${medians[key].toFixed(1)}  p10 ${pct(sorted, 0.1).toFixed(1)}  p90 ${pct(sorted, 0.9).toFixed(1)}`)
}
for (const server of Object.keys(servers)) {
  for (const variant of ['landlock', 'landlock+proxy']) {
    const d = medians[`${server} ${variant}`] - medians[`${server} off`]
    console.log(`${server}: ${variant} − off = ${d.toFixed(1)} ms`)
  }
}
