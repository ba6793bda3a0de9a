// Issue 30, red team round 3: every header value is a kept secret
// (process-wide), so a file's author can make one equal to a word of a
// server state's JSON ("message", "starting", "exited"). A published state
// keeps its shape whatever the kept values: its `kind`, `errorType`,
// `reason` and object keys are never rewritten, while its free texts and
// URLs still hide a secret (a canary in an RFC 9728 resource's path).
// Real servers: a stdio server that exits, an HTTP server on 127.0.0.1
// answering 401 with metadata naming the URL path. Own file: the kept
// words are process-wide.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, startHttpFixture, waitState, waitFor, stateHistory, uniqueMarker, NODE } from './helpers/host.mjs'

const KINDS = ['starting', 'ready', 'authRequired', 'error', 'stopped']

/** Every object key inside `value`. */
function keys(value) {
  if (Array.isArray(value)) return value.flatMap(keys)
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...keys(v)])
  return []
}

test('header values equal to state words leave every published state well-formed, a path secret still hidden', async (t) => {
  const canary = uniqueMarker('canary-words')
  const server = await startHttpFixture(t, 'path-resource-server.mjs')
  const { host, actions } = newHost(t)
  const text = JSON.stringify({
    inputs: [{ type: 'promptString', id: 'tok', password: true }],
    servers: {
      keeper: { type: 'http', url: `${server.url}/\${input:tok}`, headers: { 'X-A': 'message', 'X-B': 'starting', 'X-C': 'exited' } },
      victim: { command: NODE, args: ['-e', 'process.stderr.write("bye\\n"); process.exit(3)'] },
    },
  })
  const imported = await host.importConfig({ format: 'vscode', text, resolve: (v) => (v.id === 'input:tok' ? canary : undefined) })
  const results = await host.addServers(imported.servers)
  assert.deepEqual(results.map((r) => r.id), ['keeper', 'victim'], JSON.stringify(results))
  const keeper = await waitState(host, 'keeper', 'authRequired')
  assert.equal(keeper.resource.resource, `${server.url}/[redacted]`)
  assert.ok(['required', 'expired', 'insufficientScope'].includes(keeper.reason), JSON.stringify(keeper))
  const victim = await waitFor(() => stateHistory(actions, 'victim').find((s) => s.kind === 'error'), { what: 'the victim error state' })
  assert.equal(victim.error.errorType, 'server_exited', JSON.stringify(victim))
  assert.equal(typeof victim.error.message, 'string')
  for (const id of ['keeper', 'victim']) {
    for (const state of stateHistory(actions, id)) {
      assert.ok(KINDS.includes(state.kind), `${id}: ${JSON.stringify(state)}`)
      assert.ok(!keys(state).includes('[redacted]'), `${id}: ${JSON.stringify(state)}`)
      assert.ok(!JSON.stringify(state).includes(canary), `${id}: ${JSON.stringify(state)}`)
    }
  }
  const everything = JSON.stringify({ actions, state: host.getState() })
  assert.ok(!everything.includes(canary), 'the canary leaked')
  assert.ok(!everything.includes('"[redacted]":'), 'a key was rewritten')
})
