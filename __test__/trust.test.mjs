// Trust on first use (issue 32 item 2): the app's `trust` callback is asked
// before the first start of a server configuration it has not decided about,
// and again once the configuration changes; the answer is remembered under
// `dataDir` (`mcp-trust.json`) and survives a new host; a refused server is
// `stopped` and never spawns (the fixture writes a line to START_LOG at each
// start); a callback that throws or does not answer within
// `limits.trustTimeoutMs` is `trust_failed`, not remembered. Lazy servers
// are asked before their first call spawns them. No secret (env value, header
// value, URL query) reaches the trust file, the callback, actions or logs.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import {
  NODE, FIXTURES, newHost, sharedDataDir, tmpDir, waitFor, waitState, findCustomization, rejectsWith, startHttpFixture, stateHistory,
} from './helpers/host.mjs'

const SCRIPT = join(FIXTURES, 'lazy-tools-server.mjs')
const META = 'ahp-mcp-host/policy'
const ENV_CANARY = 'trust-env-canary-3e9b71'
const HEADER_CANARY = 'trust-header-canary-a04c5d'
const QUERY_CANARY = 'trust-query-canary-77f2e1'

const entry = (log, env = {}) => ({ type: 'stdio', command: NODE, args: [SCRIPT], env: { START_LOG: log, SECRET_THING: ENV_CANARY, ...env } })
const starts = (log) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0)
const trustOf = (host, id) => findCustomization(host.getState(), id)?._meta?.[META]?.trust
const stateOf = (host, id) => findCustomization(host.getState(), id)?.state
const trustFile = (dataDir) => join(dataDir, 'mcp-trust.json')


/** A trust callback answering `answers[name]` (a value or a function of the request), recording each request. */
function asker(answers) {
  const asked = []
  const trust = (request) => {
    asked.push(request)
    const answer = answers[request.name]
    return typeof answer === 'function' ? answer(request) : answer
  }
  return { asked, trust }
}

test('asked before the first start; a refusal is stopped without a spawn; both remembered by a new host; a changed config asks again', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-trust-data-')
  const dir = tmpDir(t)
  const [yesLog, noLog] = [join(dir, 'yes.log'), join(dir, 'no.log')]
  const first = asker({ yes: true, no: { trust: false } })
  const { host, actions, logs } = hostOn({ trust: first.trust })
  await host.addServer({ name: 'yes', config: entry(yesLog) })
  await host.addServer({ name: 'no', config: entry(noLog) })
  await waitState(host, 'yes', 'ready')
  await waitState(host, 'no', 'stopped')
  assert.deepEqual(first.asked.map((r) => [r.serverId, r.reason]).sort(), [['no', 'new'], ['yes', 'new']])
  const question = first.asked.find((r) => r.name === 'yes')
  assert.deepEqual(question.config, { type: 'stdio', command: NODE, args: [SCRIPT], env: ['SECRET_THING', 'START_LOG'] })
  assert.equal(question.signal.aborted, false)
  assert.equal(question.plugin, undefined)
  // While asked the server was `starting`; then its state, decision and log say what happened.
  assert.deepEqual(stateHistory(actions, 'no').map((s) => s.kind), ['stopped'])
  assert.deepEqual(trustOf(host, 'no'), { state: 'refused', remembered: false, changed: false, message: 'refused by the app (remembered under dataDir)' })
  assert.equal(trustOf(host, 'yes').state, 'trusted')
  assert.deepEqual(host.serverInfo('no'), { policy: { trust: trustOf(host, 'no') } })
  assert.equal(host.serverInfo('yes').policy.trust.state, 'trusted')
  assert.ok(logs.some((l) => l.target === 'host.policy' && l.serverId === 'no' && /refused by the app/.test(l.message)))
  await rejectsWith(() => host.whenReady('no'), 'trust_refused')
  assert.deepEqual([starts(yesLog), starts(noLog)], [1, 0])
  // The trust store: private, and no value of the configuration in it.
  const stored = readFileSync(trustFile(dataDir), 'utf8')
  assert.equal(statSync(trustFile(dataDir)).mode & 0o777, 0o600)
  assert.deepEqual(JSON.parse(stored).entries.map((e) => [e.serverId, e.trusted]).sort(), [['no', false], ['yes', true]])
  assert.ok(!stored.includes(ENV_CANARY) && !stored.includes(SCRIPT), stored)
  await host.dispose()

  // A new host on the same dataDir: nothing asked, both decisions hold.
  const second = asker({})
  const { host: again, actions: againActions } = hostOn({ trust: second.trust })
  await again.addServer({ name: 'yes', config: entry(yesLog) })
  await again.addServer({ name: 'no', config: entry(noLog) })
  await waitState(again, 'yes', 'ready')
  await waitState(again, 'no', 'stopped')
  assert.equal(second.asked.length, 0)
  assert.deepEqual(trustOf(again, 'yes'), { state: 'trusted', remembered: true, changed: false, message: 'trusted by the app (remembered)' })
  assert.equal(trustOf(again, 'no').state, 'refused')
  assert.deepEqual([starts(yesLog), starts(noLog)], [2, 0])
  // A changed configuration (an env value only) is asked about again, as changed.
  await again.remove('yes')
  second.asked.length = 0
  await again.addServer({ name: 'yes', config: entry(yesLog, { SECRET_THING: `${ENV_CANARY}-rotated` }) })
  await waitFor(() => second.asked.length === 1, { what: 'asked again' })
  assert.equal(second.asked[0].reason, 'changed')
  await waitState(again, 'yes', 'stopped') // `undefined` is not an answer: trust_failed
  assert.equal(trustOf(again, 'yes').state, 'failed')
  assert.equal(starts(yesLog), 2)
  // resetTrust forgets the refusal: a start request asks again.
  assert.equal(await again.resetTrust('no'), 1)
  second.asked.length = 0
  again.dispatch({ type: 'session/mcpServerStartRequested', id: 'no' }, { clientId: 'trust-test', clientSeq: 1 })
  await waitFor(() => second.asked.length === 1, { what: 'asked after resetTrust' })
  assert.equal(second.asked[0].reason, 'new')
  const everything = JSON.stringify([actions, logs, againActions])
  assert.ok(!everything.includes(ENV_CANARY))
})

test('a callback that throws or does not answer in time is trust_failed, not remembered; the question is withdrawn', async (t) => {
  const dir = tmpDir(t)
  let throwing = true
  const { asked, trust } = asker({
    thrower: () => { if (throwing) throw new Error('dialog crashed'); return true },
    slow: () => new Promise(() => {}),
  })
  const { host, logs, dataDir } = newHost(t, { trust, limits: { trustTimeoutMs: 300 } })
  const log = join(dir, 'thrower.log')
  await host.addServer({ name: 'thrower', config: entry(log) })
  await host.addServer({ name: 'slow', config: entry(join(dir, 'slow.log')) })
  await waitState(host, 'thrower', 'stopped')
  assert.equal(trustOf(host, 'thrower').state, 'failed')
  assert.match(trustOf(host, 'thrower').message, /callback failed/)
  await rejectsWith(() => host.whenReady('thrower'), 'trust_failed')
  assert.ok(logs.some((l) => l.level === 'warn' && l.target === 'host.policy' && /dialog crashed/.test(l.message)), 'the wrapper says what was thrown')
  await waitState(host, 'slow', 'stopped')
  assert.match(trustOf(host, 'slow').message, /did not answer within 300 ms \(limits\.trustTimeoutMs\)/)
  const slowQuestion = asked.find((r) => r.name === 'slow')
  await waitFor(() => slowQuestion.signal.aborted, { what: 'the timed-out question withdrawn' })
  assert.equal(existsSync(trustFile(dataDir)), false, 'nothing remembered')
  // Not remembered: the next start asks again, and may be trusted.
  throwing = false
  host.dispatch({ type: 'session/mcpServerStartRequested', id: 'thrower' }, { clientId: 'trust-test', clientSeq: 1 })
  await waitState(host, 'thrower', 'ready')
  assert.equal(asked.filter((r) => r.name === 'thrower').length, 2)
  assert.equal(starts(log), 1)
})

test('a question still open when the server is stopped or removed is withdrawn: its signal aborts', async (t) => {
  const dir = tmpDir(t)
  const { asked, trust } = asker({ pending: () => new Promise(() => {}) })
  const { host } = newHost(t, { trust })
  await host.addServer({ name: 'pending', config: entry(join(dir, 'p.log')) })
  await waitFor(() => asked.length === 1, { what: 'asked' })
  assert.equal(stateOf(host, 'pending').kind, 'starting')
  assert.equal(trustOf(host, 'pending').state, 'pending')
  host.dispatch({ type: 'session/mcpServerStopRequested', id: 'pending' }, { clientId: 'trust-test', clientSeq: 1 })
  await waitFor(() => asked[0].signal.aborted, { what: 'withdrawn on stop' })
  await waitFor(() => trustOf(host, 'pending') === undefined, { what: 'the pending decision taken back' })
  assert.equal(host.processCount, 0)
})

test('a question the app leaves open holds no launch permit: another stdio server starts meanwhile', async (t) => {
  const dir = tmpDir(t)
  const { asked, trust } = asker({ first: () => new Promise(() => {}), second: true })
  const { host } = newHost(t, { trust, limits: { maxConcurrentLaunches: 1 } })
  await host.addServer({ name: 'first', config: entry(join(dir, 'first.log')) })
  await host.addServer({ name: 'second', config: entry(join(dir, 'second.log')) })
  await waitState(host, 'second', 'ready')
  assert.equal(stateOf(host, 'first').kind, 'starting')
  assert.equal(trustOf(host, 'first').state, 'pending')
  assert.equal(asked.length, 2)
})

test('a lazy server is asked before its first call spawns it; a refusal not remembered is asked again; a trust for this host only is not written', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-trust-data-')
  const dir = tmpDir(t)
  const log = join(dir, 'lazy.log')
  // Warm the tool cache without a callback (every server trusted, as before).
  const { host: warm } = hostOn({ start: 'lazy' })
  await warm.addServer({ name: 'lazy', config: entry(log) })
  await waitState(warm, 'lazy', 'ready')
  await warm.dispose()
  assert.equal(existsSync(trustFile(dataDir)), false, 'no callback: nothing asked or written')
  let answer = { trust: false, remember: false }
  const { asked, trust } = asker({ lazy: () => answer })
  const { host } = hostOn({ start: 'lazy', trust })
  await host.addServer({ name: 'lazy', config: entry(log) })
  assert.equal(stateOf(host, 'lazy').kind, 'stopped', 'dormant with its cached tools')
  assert.equal(asked.length, 0, 'not asked before a call')
  await rejectsWith(() => host.callTool({ serverId: 'lazy', name: 'echo', arguments: { text: 'hi' } }), 'trust_refused')
  assert.equal(asked.length, 1)
  assert.equal(starts(log), 1, 'the refused call spawned nothing')
  assert.equal(existsSync(trustFile(dataDir)), false, 'remember: false is not written')
  answer = { trust: true, remember: false }
  const result = await host.callTool({ serverId: 'lazy', name: 'echo', arguments: { text: 'hi' } })
  assert.equal(result.content[0].text, 'hi')
  assert.equal(asked.length, 2, 'a refusal not remembered is asked again')
  assert.equal(starts(log), 2)
  assert.equal(existsSync(trustFile(dataDir)), false, 'a trust for this host only is not written')
  // ... but this host holds it: a restart asks nothing.
  host.dispatch({ type: 'session/mcpServerStopRequested', id: 'lazy' }, { clientId: 'trust-test', clientSeq: 1 })
  await waitState(host, 'lazy', 'stopped')
  host.dispatch({ type: 'session/mcpServerStartRequested', id: 'lazy' }, { clientId: 'trust-test', clientSeq: 2 })
  await waitState(host, 'lazy', 'ready')
  assert.equal(asked.length, 2)
  assert.equal(trustOf(host, 'lazy').remembered, true)
})

test('a remote server: the question shows the URL without its query and header names only; nothing secret is stored or published', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-trust-data-')
  const fixture = await startHttpFixture(t, 'lazy-tools-server.mjs', {}, ['http'])
  const { asked, trust } = asker({ remote: true })
  const { host, actions, logs } = hostOn({ trust })
  const config = { type: 'streamable-http', url: `${fixture.url}?token=${QUERY_CANARY}`, headers: { 'x-api-key': HEADER_CANARY } }
  await host.addServer({ name: 'remote', config })
  await waitState(host, 'remote', 'ready')
  assert.deepEqual(asked[0].config, { type: 'streamable-http', url: fixture.url, headers: ['x-api-key'] })
  const { signal, ...question } = asked[0]
  const everything = JSON.stringify([question, actions, logs, readFileSync(trustFile(dataDir), 'utf8')])
  for (const canary of [QUERY_CANARY, HEADER_CANARY]) assert.ok(!everything.includes(canary), canary)
})

test('resetTrust on one host is not undone by another host on the same dataDir writing its own decision', async (t) => {
  const { dataDir, hostOn } = sharedDataDir(t, 'ahp-trust-data-')
  const dir = tmpDir(t)
  const [a, b] = [asker({ x: true }), asker({ x: true, y: true })]
  const { host: hostA } = hostOn({ trust: a.trust })
  const { host: hostB } = hostOn({ trust: b.trust })
  await hostA.addServer({ name: 'x', config: entry(join(dir, 'x.log')) })
  await waitState(hostA, 'x', 'ready')
  await hostB.addServer({ name: 'x', config: entry(join(dir, 'x.log')) })
  await waitState(hostB, 'x', 'ready')
  assert.equal(b.asked.length, 0, 'B read x from the file')
  assert.equal(await hostA.resetTrust('x'), 1)
  await hostB.addServer({ name: 'y', config: entry(join(dir, 'y.log')) })
  await waitState(hostB, 'y', 'ready')
  const stored = JSON.parse(readFileSync(trustFile(dataDir), 'utf8'))
  assert.deepEqual(stored.entries.map((e) => e.serverId), ['y'])
  // A new host asks about x again.
  const c = asker({})
  const { host: hostC } = hostOn({ trust: c.trust })
  await hostC.addServer({ name: 'x', config: entry(join(dir, 'x.log')) })
  await waitFor(() => c.asked.length === 1, { what: 'C asked about x' })
  assert.equal(c.asked[0].reason, 'new')
})
