// Floods from a hostile stdio server (`fixtures/flood-server.mjs`) keep the
// host's memory bounded (docs/reliability.md, "Floods"): notifications that
// carry no answer, log messages, list changes and stderr (with and without
// newlines) are bounded between the pipe and the handlers (the reader slows
// down), dropped or coalesced with a counted warning; server requests and
// AHP input requests beyond their caps are refused at once; a server that
// stops reading its stdin fails its connection instead of holding a write.
//
// Memory is checked by the peak RSS of this process (the addon runs in it)
// against a generous bound: the kernel's high-water mark (`VmHWM`), reset
// before each flood (`/proc/self/clear_refs` 5), so no sample is missed.
// Each count below took this process's RSS past 1 GB before the bounds
// existed (the figures: docs/reliability.md). FLOOD_REPORT=1 prints the peaks.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { newHost, fixtureEntry, waitState, waitFor, serverState, startHttpFixture } from './helpers/host.mjs'

const MB = 1024 * 1024
/** Peak RSS allowed during one flood (bytes): generous, far below the GBs unbounded queues reach. */
const PEAK_BOUND = Number(process.env.FLOOD_PEAK_BOUND_MB ?? 600) * MB

function resetPeak() {
  writeFileSync('/proc/self/clear_refs', '5')
}

function peakRss() {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
  return Number(m[1]) * 1024
}

function report(name, peak) {
  if (process.env.FLOOD_REPORT) console.log(`FLOOD ${name}: peak RSS ${(peak / MB).toFixed(0)} MB`)
}

async function floodServer(t, options = {}) {
  const { host, logs, actions } = newHost(t, options)
  const id = await host.addServer({ name: 'flood', config: fixtureEntry('flood-server.mjs') })
  await waitState(host, id, 'ready')
  return { host, id, logs, actions }
}

/** Runs `flood` (a promise factory) and asserts the peak RSS stayed under the bound. */
async function bounded(name, flood) {
  global.gc?.()
  resetPeak()
  // Fails as soon as the bound is passed (main grew without end).
  let watch
  const over = new Promise((_, reject) => {
    watch = setInterval(() => {
      if (peakRss() >= PEAK_BOUND) reject(new Error(`${name}: peak RSS passed ${PEAK_BOUND / MB} MB`))
    }, 100)
  })
  let value
  try {
    value = await Promise.race([flood(), over])
  } finally {
    clearInterval(watch)
  }
  const peak = peakRss()
  report(name, peak)
  assert.ok(peak < PEAK_BOUND, `${name}: peak RSS ${(peak / MB).toFixed(0)} MB, bound ${PEAK_BOUND / MB} MB`)
  return value
}

/** The counts in the host's "suppressed"/"dropped" warnings of `target` (summed). */
function counted(logs, target, re) {
  return logs.filter((l) => l.target === target && l.level === 'warn')
    .map((l) => re.exec(l.message))
    .filter(Boolean)
    .reduce((n, m) => n + Number(m[1]), 0)
}

const call = (host, id, name, args) => host.callTool({ serverId: id, name, arguments: args, timeoutMs: 600_000 })

/** 300,000 notifications of an unknown method from the server `start(t)` readies: each dropped and counted. */
async function unknownFlood(t, start, name) {
  const { host, id, logs } = await start(t)
  const count = 300_000
  const r = await bounded(name, () => call(host, id, 'flood', { kind: 'unknown', count }))
  assert.equal(r.content[0].text, `done ${count}`)
  await host.remove(id)
  await waitFor(() => counted(logs, 'host.notifications', /dropped (\d+) notification/) === count,
    { what: 'every dropped notification counted', describe: () => JSON.stringify(logs.filter((l) => l.target === 'host.notifications')) })
}

/** 300,000 identical log messages from the server `start(t)` readies: each delivered or counted as suppressed. */
async function logFlood(t, start, name) {
  const { host, id, logs } = await start(t)
  const count = 300_000
  const r = await bounded(name, () => call(host, id, 'flood', { kind: 'log', count }))
  assert.equal(r.content[0].text, `done ${count}`)
  await host.remove(id)
  const delivered = () => logs.filter((l) => l.target === 'server.log' && l.message.includes('the same message')).length
  const suppressed = () => counted(logs, 'server.log', /suppressed (\d+) /) + counted(logs, 'host.events', /dropped (\d+) log record/)
  await waitFor(() => delivered() + suppressed() === count,
    { what: 'every log message delivered or counted', describe: () => `${delivered()} delivered, ${suppressed()} counted` })
  assert.ok(suppressed() > 0, 'the flood was rate limited')
}

test('a flood of unknown notifications is dropped with a counted warning; memory stays bounded', (t) =>
  unknownFlood(t, floodServer, 'unknown notifications'))

test('a flood of progress for tokens never issued is dropped with a counted warning; memory stays bounded', async (t) => {
  const { host, id, logs } = await floodServer(t)
  const count = 600_000
  const r = await bounded('progress, unknown tokens', () => call(host, id, 'flood', { kind: 'progress', count }))
  assert.equal(r.content[0].text, `done ${count}`)
  await host.remove(id)
  await waitFor(() => counted(logs, 'host.notifications', /dropped (\d+) notification/) === count,
    { what: 'every dropped progress notification counted' })
})

test('a flood of progress for the call\'s own token is paced: the last one arrives, at most one per interval; memory stays bounded', async (t) => {
  const { host, id, actions } = await floodServer(t)
  const count = 300_000
  const seen = []
  const chat = 'ahp-chat:/flood-own-progress'
  const r = await bounded('progress, own token', () => host.callTool({
    serverId: id, name: 'flood', arguments: { kind: 'own', count }, timeoutMs: 600_000,
    chat, turnId: 't1', toolCallId: 'own-1', onProgress: (p) => seen.push(p.progress),
  }))
  assert.equal(r.content[0].text, `done ${count}`)
  assert.equal(seen.at(-1), count, 'the last progress is passed on before the result')
  assert.ok(seen.every((p, i) => i === 0 || p > seen[i - 1]), 'increasing')
  // Paced (PROGRESS_MIN_INTERVAL_MS): a small share of what was sent.
  assert.ok(seen.length < count / 20, `${seen.length} of ${count} progress notifications passed on`)
  const chatActions = actions.filter((e) => e.channel === chat).length
  assert.ok(chatActions < count / 20, `${chatActions} chat actions for ${count} progress notifications`)
})

test('a flood of log messages: each one delivered or counted as suppressed; memory stays bounded', (t) =>
  logFlood(t, floodServer, 'log messages'))

test('a storm of list changes is coalesced; memory stays bounded', async (t) => {
  const { host, id, logs } = await floodServer(t)
  const events = []
  host.on('listChanged', (e) => events.push(e))
  const count = 600_000
  const r = await bounded('list_changed storm', () => call(host, id, 'flood', { kind: 'changed', count }))
  assert.equal(r.content[0].text, `done ${count}`)
  // The last change of each list reaches the app.
  await waitFor(() => events.some((e) => e.list === 'prompts') && events.some((e) => e.list === 'resources'), { what: 'both lists reported' })
  assert.ok(events.length < count, `${events.length} listChanged events for ${count} notifications`)
  assert.equal(serverState(host, id)?.kind, 'ready')
  void logs
})

test('a stderr flood of lines is rate limited with counted suppressions; memory stays bounded', async (t) => {
  const { host, id, logs } = await floodServer(t)
  const count = 3_000_000
  const r = await bounded('stderr lines', () => call(host, id, 'flood', { kind: 'stderr', count }))
  assert.equal(r.content[0].text, `done ${count}`)
  // Counted once the pipe has been quiet for a report interval.
  const delivered = () => logs.filter((l) => l.target === 'server.stderr' && l.message.startsWith('eeee')).length
  const suppressed = () => counted(logs, 'server.stderr', /suppressed (\d+) line/) + counted(logs, 'host.events', /dropped (\d+) log record/)
  await waitFor(() => delivered() + suppressed() === count,
    { timeout: 60_000, what: 'every stderr line delivered or counted', describe: () => `${delivered()} delivered, ${suppressed()} counted` })
  assert.ok(suppressed() > 0, 'the flood was rate limited')
})

test('1 GiB of stderr without a newline is one truncated record, not 131,073; memory stays bounded', async (t) => {
  const { host, id, logs } = await floodServer(t)
  const mib = 1024
  const r = await bounded('stderr without newline', () => call(host, id, 'flood', { kind: 'noline', count: mib }))
  assert.equal(r.content[0].text, `done ${mib}`)
  await waitFor(() => logs.some((l) => l.target === 'server.stderr' && l.message === 'FLOOD-END'), { what: 'the line after the flood' })
  const xs = logs.filter((l) => l.target === 'server.stderr' && l.message.startsWith('xxxx'))
  assert.equal(xs.length, 1, `${xs.length} records of the unterminated line`)
  assert.ok(xs[0].message.length <= 9 * 1024, `record of ${xs[0].message.length} bytes`)
  assert.match(xs[0].message, /truncated/)
})

test('server requests beyond the per-server cap get a JSON-RPC error at once; memory stays bounded', async (t) => {
  const never = () => new Promise(() => {})
  const { host, id } = await floodServer(t, { handlers: { roots: never, sampling: never, elicitation: never } })
  const count = 60_000
  for (const method of ['sampling/createMessage', 'roots/list']) {
    const r = await bounded(`60,000 ${method}`, () => call(host, id, 'ask', { method, count, answerAfter: count - 1_000 }))
    const [, results, errors, message] = /^answered (\d+) results (\d+) errors: (.*)$/s.exec(r.content[0].text)
    assert.equal(Number(results), 0)
    assert.ok(Number(errors) >= count - 1_000, r.content[0].text)
    assert.match(message, /pending server requests/)
    assert.match(message, /maxPendingServerRequests|MAX_PENDING_SERVER_REQUESTS|\b\d+\b/)
  }
  assert.equal(serverState(host, id)?.kind, 'ready')
})

test('input requests of one AHP tool call beyond the cap are declined with an error; memory stays bounded', async (t) => {
  const { host, id, actions } = await floodServer(t)
  const count = 5_000
  const r = await bounded('5,000 input requests of one call', async () => {
    const pending = host.callTool({ serverId: id, name: 'ask', arguments: { method: 'elicitation/create', count, answerAfter: count - 100 },
      chat: 'ahp-chat:/flood', turnId: 'turn-1', toolCallId: 'tc-flood', timeoutMs: 600_000 })
    return pending
  })
  const [, results, errors, message] = /^answered (\d+) results (\d+) errors: (.*)$/s.exec(r.content[0].text)
  assert.equal(Number(results), 0)
  assert.ok(Number(errors) >= count - 100, r.content[0].text)
  assert.match(message, /input requests/)
  // Published as AHP input requests: at most the cap (16), not 5,000.
  const published = actions.filter((a) => a.action.type === 'chat/inputRequested').length
  assert.ok(published > 0 && published <= 16, `${published} chat/inputRequested`)
})

test('a flood of server requests over Streamable HTTP: answers past the send bound are left unsent and counted; memory stays bounded', async (t) => {
  const { url, stats } = await startHttpFixture(t, 'http-request-flood-server.mjs', {}, ['slow'])
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'http-flood', config: { type: 'streamable-http', url } })
  await waitState(host, id, 'ready')
  // The server writes pings without end, as fast as the host reads them,
  // and takes 2 s to accept each answer's POST: the host answers while a
  // send is free and counts the rest unanswered. Waits on what the host
  // read, not on its answers (whose rate is that of the POSTs).
  await bounded('server requests over Streamable HTTP', () => waitFor(async () => (await stats()).sent >= 300_000, {
    timeout: 300_000, interval: 200, what: '300,000 pings read',
  }))
  const r = await host.callTool({ serverId: id, name: 'echo', arguments: {} })
  assert.equal(r.content[0].text, 'echoed')
  assert.ok((await stats()).answered > 0, 'the host answered pings')
  await host.remove(id)
  await waitFor(() => counted(logs, 'host.requests', /left (\d+) server requests unanswered/) > 0, { what: 'the unanswered requests counted' })
})

/** A server of `http-request-flood-server.mjs quiet` (its `flood` tool answers as SSE), ready. */
async function httpFloodServer(t) {
  const { url } = await startHttpFixture(t, 'http-request-flood-server.mjs', {}, ['quiet'])
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'http-flood', config: { type: 'streamable-http', url } })
  await waitState(host, id, 'ready')
  return { host, id, logs }
}

test('a flood of unknown notifications over Streamable HTTP is dropped with a counted warning; memory stays bounded', (t) =>
  unknownFlood(t, httpFloodServer, 'unknown notifications over Streamable HTTP'))

test('a flood of log messages over Streamable HTTP: each one delivered or counted as suppressed; memory stays bounded', (t) =>
  logFlood(t, httpFloodServer, 'log messages over Streamable HTTP'))

test('a server that stops reading stdin: the write is abandoned and the connection fails', async (t) => {
  const { host, id, logs } = await floodServer(t, { limits: { maxRestarts: 0 } })
  assert.equal((await call(host, id, 'deaf', {})).content[0].text, 'deaf')
  // 1 MiB of arguments cannot fit the pipe: the write stops part-way.
  const stuck = call(host, id, 'echo', { pad: 'z'.repeat(1024 * 1024) }).then(() => 'answered', (e) => e.code)
  await waitFor(() => serverState(host, id)?.kind !== 'ready', { timeout: 120_000, what: 'the server to leave ready' })
  assert.notEqual(await stuck, 'answered')
  const state = await waitState(host, id, 'error', { timeout: 30_000 })
  assert.match(state.error.message, /stopped reading its stdin/)
  const warned = logs.find((l) => l.target === 'host.stdio' && /stdin/.test(l.message))
  assert.ok(warned, JSON.stringify(logs.filter((l) => l.target === 'host.stdio')))
})
