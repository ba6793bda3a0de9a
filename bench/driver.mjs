// One measurement in its own process: `node bench/driver.mjs <client> '<spec JSON>'`
// prints one JSON object of figures on stdout. The client is A, A2, C or Cl
// (bench/clients.mjs), or `bare` (a Node process that loads nothing and
// reports its RSS). bench/floor (the Rust client Bt) takes the same spec and
// prints the same figures, so bench/run.mjs treats all clients alike.
//
// Client CPU is this process's user + system time over the timed part
// (process.cpuUsage: every thread, the addon's tokio threads included); the
// server is a child process (stdio) or another process (HTTP) and is not
// counted. Times in ms, CPU in µs per call, RSS in KiB.
//
// Scenarios (spec.scenario; counts from the spec, see bench/figures.mjs):
//   seq      sequential echo calls: p50, p99, cpu
//   tp       `inflight` echo calls in flight for `seconds`: tp (calls/s), cpu
//   big      sequential calls of `big` (1 MiB text): ms per call (median)
//   connect  connect, `runs` times after a warm-up: ms (median)
//   list     connect + the whole tools/list (`tools` expected): ms (median)
//   refresh  `touch_tools` → list_changed → the new list listed: ms (median);
//            seenMs: from the start until the call returned and the change
//            was seen (C: its host has re-listed by then), listMs: from then
//            until the list is in JS (A: the tools/list round trip; C:
//            listTools()); each a median of its own. Refreshes are
//            REFRESH_PAUSE_MS apart (not timed), for every client: C paces
//            re-lists after a burst of 4 (limits.rs, LIST_CHANGED_BURST,
//            one per 100 ms after it), and back-to-back refreshes would time
//            that flood guard instead of the refresh
//   rss      RSS after connecting, listing and 100 calls: rss
//   soak     `calls` echo calls at `inflight`, RSS every `every`: rss[]
//   servers  `count` stdio servers connected and listed at once: ms

const [kind, specJson] = process.argv.slice(2)

if (kind === 'bare') {
  // Let the process settle like the others do (one macrotask), then report.
  await new Promise((r) => setTimeout(r, 50))
  process.stdout.write(JSON.stringify({ rss: Math.round(process.memoryUsage.rss() / 1024) }) + '\n')
  process.exit(0)
}

const { performance } = await import('node:perf_hooks')
const { readFileSync } = await import('node:fs')
const { makeClient } = await import('./clients.mjs')

// The SDK's HTTP client triggers MaxListenersExceededWarning under load.
process.removeAllListeners('warning')
process.on('warning', () => {})

const spec = JSON.parse(specJson)
const num = (key, dflt) => (typeof spec[key] === 'number' ? spec[key] : dflt)
const cpuNow = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}
// CPU time (µs) of this process's main thread, the JS thread (Linux:
// /proc/self/task/<pid>/stat, utime + stime in clock ticks of 10 ms);
// undefined elsewhere. With cpuNow it splits a client's CPU into the JS
// thread and the rest (the addon's tokio worker, libuv and V8 helpers).
const TICK_US = 10_000
const jsThreadNow = () => {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_US
  } catch {
    return undefined
  }
}
const perCall = (t0, t1, n) => (t0 === undefined || t1 === undefined ? undefined : (t1 - t0) / n)
const rssKib = () => Math.round(process.memoryUsage.rss() / 1024)
const ECHO_ARGS = { message: 'hello' }

function percentile(sorted, q) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}
const median = (v) => percentile([...v].sort((a, b) => a - b), 0.5)

function textOf(result) {
  return result?.content?.find((c) => c.type === 'text')?.text ?? ''
}
async function echo(conn) {
  const r = await conn.call('echo', ECHO_ARGS)
  if (textOf(r) !== 'echo:hello') throw new Error(`unexpected echo result ${JSON.stringify(r)}`)
}

/** `inflight` workers calling echo until `deadline` or `limit` calls; the count. */
async function hammer(conn, inflight, deadline, limit) {
  let left = limit
  let count = 0
  await Promise.all(Array.from({ length: inflight }, async () => {
    while (left > 0 && performance.now() < deadline) {
      left--
      await echo(conn)
      count++
    }
  }))
  return count
}

const scenarios = {
  async seq(client) {
    const conn = await client.connect()
    for (let i = 0; i < num('warmup', 200); i++) await echo(conn)
    const calls = num('calls', 2000)
    const lat = new Float64Array(calls)
    const js0 = jsThreadNow()
    const cpu0 = cpuNow()
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now()
      await echo(conn)
      lat[i] = performance.now() - t0
    }
    const cpu = (cpuNow() - cpu0) / calls
    const cpuJs = perCall(js0, jsThreadNow(), calls)
    lat.sort()
    await conn.close()
    return { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), cpu, cpuJs }
  },
  async tp(client) {
    const conn = await client.connect()
    const inflight = num('inflight', 16)
    await hammer(conn, inflight, Infinity, num('warmup', 500))
    const js0 = jsThreadNow()
    const cpu0 = cpuNow()
    const t0 = performance.now()
    const count = await hammer(conn, inflight, t0 + num('seconds', 5) * 1000, Infinity)
    const elapsed = (performance.now() - t0) / 1000
    const cpu = (cpuNow() - cpu0) / count
    const cpuJs = perCall(js0, jsThreadNow(), count)
    await conn.close()
    return { tp: count / elapsed, cpu, cpuJs, calls: count }
  },
  async big(client) {
    const conn = await client.connect()
    const bytes = num('bytes', 1 << 20)
    const times = []
    const warmup = num('warmup', 3)
    for (let i = 0; i < warmup + num('calls', 20); i++) {
      const t0 = performance.now()
      const r = await conn.call('big', {})
      const ms = performance.now() - t0
      if (textOf(r).length !== bytes) throw new Error(`big: ${textOf(r).length} bytes, expected ${bytes}`)
      if (i >= warmup) times.push(ms)
    }
    await conn.close()
    return { ms: median(times) }
  },
  async connect(client) {
    return connectRuns(client, false)
  },
  async list(client) {
    return connectRuns(client, true)
  },
  async refresh(client) {
    const REFRESH_PAUSE_MS = 150
    const conn = await client.connect()
    let pending
    conn.onToolsChanged(() => pending?.())
    const descOf = (tools) => tools.find((t) => (t.toolName ?? t.name) === 'tool_0000')?.description
    let generation = descOf(await conn.list())
    const [times, seen, listing] = [[], [], []]
    for (let i = 0; i < 1 + num('runs', 5); i++) {
      const changed = new Promise((resolve) => { pending = resolve })
      const t0 = performance.now()
      await conn.call('touch_tools', {})
      await changed
      const t1 = performance.now()
      const tools = await conn.list()
      const t2 = performance.now()
      const now = descOf(tools)
      if (tools.length !== spec.tools || now === generation) {
        throw new Error(`refresh: ${tools.length} tools, description ${now}`)
      }
      generation = now
      if (i > 0) {
        times.push(t2 - t0)
        seen.push(t1 - t0)
        listing.push(t2 - t1)
      }
      await new Promise((r) => setTimeout(r, REFRESH_PAUSE_MS))
    }
    await conn.close()
    return { ms: median(times), seenMs: median(seen), listMs: median(listing) }
  },
  async rss(client) {
    const conn = await client.connect()
    await conn.list()
    for (let i = 0; i < 100; i++) await echo(conn)
    const rss = rssKib()
    await conn.close()
    return { rss }
  },
  async soak(client) {
    const conn = await client.connect()
    const calls = num('calls', 100_000)
    const every = num('every', 20_000)
    const samples = [rssKib()]
    let done = 0
    while (done < calls) {
      done += await hammer(conn, num('inflight', 16), Infinity, Math.min(every, calls - done))
      samples.push(rssKib())
    }
    await conn.close()
    return { rss: samples }
  },
  async servers(client) {
    const t0 = performance.now()
    const conns = await Promise.all(Array.from({ length: num('count', 20) }, async () => {
      const conn = await client.connect()
      await conn.list()
      return conn
    }))
    const ms = performance.now() - t0
    await Promise.all(conns.map((c) => c.close()))
    return { ms }
  },
}

/** Connect (+ list everything when `list`), `runs` times after one warm-up. */
async function connectRuns(client, list) {
  const times = []
  for (let i = 0; i < 1 + num('runs', 5); i++) {
    const t0 = performance.now()
    const conn = await client.connect()
    if (list) {
      const tools = await conn.list()
      if (tools.length !== spec.tools) throw new Error(`listed ${tools.length} tools, expected ${spec.tools}`)
    }
    const ms = performance.now() - t0
    await conn.close()
    if (i > 0) times.push(ms)
  }
  return { ms: median(times) }
}

const run = scenarios[spec.scenario]
if (!run) throw new Error(`unknown scenario ${spec.scenario}`)
const client = await makeClient(kind, spec)
let out
try {
  out = await run(client)
} finally {
  await client.dispose()
}
process.stdout.write(JSON.stringify(out) + '\n')
process.exit(0)
