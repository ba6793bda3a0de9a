// Server policy (issue 32 item 2): the app's allow and deny rules (host
// option `policy`, `setPolicy`) by name, plugin, command and URL pattern. A
// denied server is published in `error` (`policy_denied`, naming the rule)
// and never spawns or connects: the stdio fixture writes a line to a file at
// each start (START_LOG), and a counting HTTP server on 127.0.0.1 sees every
// request. Each decision is in the customization's `_meta`, in
// `serverInfo(id).policy` and in a `host.policy` log record (item 3).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import {
  ROOT, NODE, FIXTURES, McpHost, HostError, newHost, tmpDir, waitFor, waitState, findCustomization, rejectsWith, startHttpFixture, writePlugin, stateHistory,
} from './helpers/host.mjs'

const SCRIPT = join(FIXTURES, 'lazy-tools-server.mjs')
const META = 'ahp-mcp-host/policy'
const QUERY_CANARY = 'policy-query-canary-5d1e'

/** A stdio entry of the fixture that logs each of its starts to `log`. */
const entry = (log, env = {}) => ({ type: 'stdio', command: NODE, args: [SCRIPT], env: { START_LOG: log, ...env } })
const starts = (log) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0)
const decision = (host, id) => findCustomization(host.getState(), id)?._meta?.[META]
const policyLogs = (logs, id) => logs.filter((l) => l.target === 'host.policy' && l.serverId === id)
const startRequest = (host, id, clientSeq) => host.dispatch({ type: 'session/mcpServerStartRequested', id }, { clientId: 'policy-test', clientSeq })

/** An HTTP server on 127.0.0.1 counting every request it gets (answers 404). */
async function countingServer(t) {
  let requests = 0
  const server = http.createServer((req, res) => { requests++; res.writeHead(404).end() })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => server.close())
  return { url: `http://127.0.0.1:${server.address().port}/mcp?token=${QUERY_CANARY}`, requests: () => requests }
}

test('a denied server is published in error naming the rule and never spawns, not even on a start request; its sibling starts', async (t) => {
  const dir = tmpDir(t)
  const [badLog, goodLog] = [join(dir, 'bad.log'), join(dir, 'good.log')]
  const policy = { deny: [{ name: 'bad', label: 'no bad servers' }] }
  const { host, logs, actions } = newHost(t, { policy })
  const root = writePlugin(join(dir, 'plug'), { mcpServers: { bad: entry(badLog), good: entry(goodLog) } })
  const added = await host.addPlugin({ root })
  assert.deepEqual(added.servers, ['plug/bad', 'plug/good'])
  await waitState(host, 'plug/good', 'ready')
  // Published in error from the first action: never `starting`.
  const created = actions.find((a) => a.action.type === 'session/customizationUpdated' && a.action.customization.children?.length === 2)
  const child = created.action.customization.children.find((c) => c.id === 'plug/bad')
  assert.equal(child.state.kind, 'error')
  assert.equal(child.state.error.errorType, 'policy_denied')
  assert.match(child.state.error.message, /denied by policy rule deny\[0\] \("no bad servers"\)/)
  assert.deepEqual(child._meta[META], {
    rules: { allowed: false, rule: 'deny[0]', label: 'no bad servers', message: 'denied by policy rule deny[0] ("no bad servers")' },
  })
  assert.deepEqual(stateHistory(actions, 'plug/bad'), [])
  assert.deepEqual(host.serverInfo('plug/bad'), { policy: child._meta[META] })
  const [record] = policyLogs(logs, 'plug/bad')
  assert.equal(record.level, 'warn')
  assert.match(record.message, /deny\[0\]/)
  // The allowed sibling carries its decision too, beside its identity.
  assert.equal(host.serverInfo('plug/good').policy.rules.allowed, true)
  assert.equal(host.serverInfo('plug/good').name, 'lazy-tools')
  // A start request is checked again: the error is published again, no process.
  const seq = actions.length
  startRequest(host, 'plug/bad', 1)
  await waitFor(() => stateHistory(actions.slice(seq), 'plug/bad').some((s) => s.kind === 'error'), { what: 'the start refused' })
  assert.equal(serverStateOf(host, 'plug/bad').error.errorType, 'policy_denied')
  await rejectsWith(() => host.whenReady('plug/bad'), 'policy_denied')
  assert.equal(starts(badLog), 0, 'the denied server never ran')
  assert.equal(starts(goodLog), 1)
  assert.equal(host.processCount, 1)
})

const serverStateOf = (host, id) => findCustomization(host.getState(), id)?.state

test('deny beats allow; an allow list means only these; plugin and command rules', async (t) => {
  const dir = tmpDir(t)
  const logs = ['a', 'b', 'c'].map((n) => join(dir, `${n}.log`))
  const policy = {
    allow: [{ plugin: 'plug' }, { name: 'top', command: 'node*' }],
    deny: [{ plugin: 'plug', name: 'b' }, { command: 'node', args: [SCRIPT, '--evil'] }],
  }
  const { host } = newHost(t, { policy })
  const root = writePlugin(join(dir, 'plug'), { mcpServers: { a: entry(logs[0]), b: entry(logs[1]) } })
  await host.addPlugin({ root })
  await host.addServer({ name: 'top', config: { ...entry(logs[2]), args: [SCRIPT, '--evil'] } })
  await host.addServer({ name: 'other', config: entry(logs[2]) })
  await waitState(host, 'plug/a', 'ready')
  assert.equal(decision(host, 'plug/a').rules.rule, 'allow[0]')
  assert.equal(decision(host, 'plug/b').rules.rule, 'deny[0]', 'allowed by allow[0] too: deny wins')
  // A command rule: `node` matches the last segment of the absolute path; the args exactly.
  assert.equal(decision(host, 'top').rules.rule, 'deny[1]')
  const other = decision(host, 'other').rules
  assert.equal(other.allowed, false)
  assert.equal(other.rule, undefined)
  assert.match(other.message, /no rule of the allow list \(2 rules\) matches/)
  for (const id of ['plug/b', 'top', 'other']) assert.equal(serverStateOf(host, id).error.errorType, 'policy_denied')
  assert.deepEqual(logs.map(starts), [1, 0, 0])
})

test('a plugin folder of examples/ denied by its plugin name spawns nothing', async (t) => {
  const { host, logs } = newHost(t, { policy: { deny: [{ plugin: 'modern-stdio', label: 'examples off' }] } })
  const added = await host.addPlugin({ root: join(ROOT, 'examples', 'modern-stdio') })
  assert.deepEqual(added.servers, ['modern-stdio/modern'])
  const state = serverStateOf(host, 'modern-stdio/modern')
  assert.equal(state.error.errorType, 'policy_denied')
  assert.match(state.error.message, /"examples off"/)
  assert.equal(policyLogs(logs, 'modern-stdio/modern')[0].level, 'warn')
  assert.equal(host.processCount, 0)
})

test('a URL rule denies a Streamable HTTP server on 127.0.0.1 before any request; setPolicy allows it, then denies it again', async (t) => {
  const counting = await countingServer(t)
  const { host, logs, actions } = newHost(t, { policy: { deny: [{ url: 'http://127.0.0.1:*/mcp' }] } })
  await host.addServer({ name: 'remote', config: { type: 'streamable-http', url: counting.url, headers: { 'x-api-key': 'policy-header-canary-8c2a' } } })
  assert.equal(serverStateOf(host, 'remote').error.errorType, 'policy_denied')
  startRequest(host, 'remote', 1)
  await waitFor(() => stateHistory(actions, 'remote').length > 0, { what: 'the refused start' })
  assert.equal(counting.requests(), 0, 'never connected')
  // A real server, allowed at runtime: started at once, and ready.
  const dir = tmpDir(t)
  const log = join(dir, 'http.log')
  const fixture = await startHttpFixture(t, 'lazy-tools-server.mjs', { START_LOG: log }, ['http'])
  await host.addServer({ name: 'live', config: { type: 'streamable-http', url: `${fixture.url}?token=${QUERY_CANARY}` } })
  assert.equal(serverStateOf(host, 'live').error.errorType, 'policy_denied')
  assert.equal(starts(log), 0)
  host.setPolicy({ deny: [{ url: 'https://*' }] })
  await waitState(host, 'live', 'ready')
  assert.equal(starts(log), 1)
  assert.deepEqual(decision(host, 'live').rules, { allowed: true, message: 'allowed by policy (no deny rule matches, no allow list)' })
  // Denied again while ready: the connection closes, the state is the error.
  host.setPolicy({ deny: [{ url: 'HTTP://127.0.0.1:*', label: 'no plain http' }] })
  await waitFor(() => serverStateOf(host, 'live')?.kind === 'error', { what: 'live denied' })
  assert.match(serverStateOf(host, 'live').error.message, /deny\[0\] \("no plain http"\)/)
  await rejectsWith(() => host.callTool({ serverId: 'live', name: 'echo', arguments: { text: 'x' } }), 'server_not_ready')
  // The query and the header value never show.
  const everything = JSON.stringify([actions, logs, host.getState()])
  assert.ok(!everything.includes(QUERY_CANARY) && !everything.includes('policy-header-canary-8c2a'))
})

test('a broken rule refuses the policy with the field named; setPolicy keeps the policy it had', async (t) => {
  const dir = tmpDir(t)
  const made = (policy) => new McpHost({ dataDir: dir, policy })
  assert.throws(() => made({ deny: [{ name: 'a' }, {}] }), (e) => e instanceof HostError && e.code === 'invalid_argument' && /^options\.policy\.deny\[1\]: a rule needs at least one of/.test(e.message))
  assert.throws(() => made({ allow: [{ url: 'https://x.test/mcp?k=*' }] }), /options\.policy\.allow\[0\]\.url: must not contain `\?` or `#`/)
  assert.throws(() => made({ deny: [{ nmae: 'a' }] }), /options\.policy\.deny\[0\]\.nmae: unknown field/)
  assert.throws(() => made([]), /options\.policy: must be an object/)
  const { host } = newHost(t, { policy: { deny: [{ name: 'x' }] } })
  assert.throws(() => host.setPolicy({ deny: [{ transport: 'carrier-pigeon' }] }), /policy\.deny\[0\]\.transport: unknown variant/)
  await host.addServer({ name: 'x', config: entry(join(dir, 'x.log')) })
  assert.equal(serverStateOf(host, 'x').error.errorType, 'policy_denied', 'the refused setPolicy changed nothing')
})

test('a URL rule matches scheme, host and port on their own and a normalised path: a glob of the host never reaches into the path', async (t) => {
  const counting = await countingServer(t)
  const port = new URL(counting.url).port
  const verdictOf = async (policy, url) => {
    const { host } = newHost(t, { policy })
    const refused = await host.addServer({ name: 'r', config: { type: 'streamable-http', url } }).then(() => null, (e) => e.code)
    return refused ?? serverStateOf(host, 'r').error?.errorType ?? 'allowed'
  }
  // The guide's own allow form: the path does not satisfy the host glob.
  const guide = { allow: [{ url: 'http://*.mcp.example.com' }] }
  assert.equal(await verdictOf(guide, `http://127.0.0.1:${port}/x.mcp.example.com/mcp`), 'policy_denied')
  assert.equal(await verdictOf(guide, `http://127.0.0.1:${port}/.mcp.example.com`), 'policy_denied')
  // Patterns are normalised as server URLs are; a deny rule's path ignores case.
  const denies = [
    ['http://localhost:80', 'http://localhost/mcp'],
    [`http://127.0.0.1:${port}`, `http://127.0.0.1.:${port}/mcp`],
    [`http://127.0.0.1:${port}`, `http://2130706433:${port}/mcp`],
    [`http://localhost:${port}`, `http://LOCALHOST:${port}/mcp`],
    [`http://[::1]:${port}`, `http://[0:0:0:0:0:0:0:1]:${port}/mcp`],
    ...['/MCP', '/%6dcp', '//mcp', '/mcp/'].map((path) => [`http://127.0.0.1:${port}/mcp`, `http://127.0.0.1:${port}${path}`]),
  ]
  for (const [url, server] of denies) assert.equal(await verdictOf({ deny: [{ url }] }, server), 'policy_denied', `${url} vs ${server}`)
  assert.equal(counting.requests(), 0, 'never connected')
  const { host } = newHost(t)
  assert.throws(() => host.setPolicy({ deny: [{ url: '*.example.com' }] }), /policy\.deny\[0\]\.url: /)
})
