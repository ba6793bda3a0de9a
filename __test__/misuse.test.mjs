// App-author misuse and messages (issue 24, item 15): a BigInt, a cyclic
// value or a `toJSON` returning undefined anywhere JSON is sent gives
// HostError `invalid_argument` naming the parameter (never an engine or
// napi error); the constructor's "expected one of" names every option of
// `McpHostOptions` in index.d.ts; a request handler that throws is
// reported as a `warn` log (target `host.requests`) while the server gets
// its error answer.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, waitState, fixtureEntry, waitFor, callText, McpHost, HostError, ROOT, tmpDir } from './helpers/host.mjs'
import { createRequire } from 'node:module'

const { reduceSession } = createRequire(import.meta.url)(join(ROOT, 'index.js'))
const cyclic = () => { const o = {}; o.self = o; return o }
const noJson = () => ({ toJSON() { return undefined } })

function invalid(fn, pattern) {
  let thrown
  try {
    const r = fn()
    if (r && typeof r.then === 'function') return r.then(() => assert.fail('resolved'), (e) => check(e))
  } catch (e) {
    thrown = e
  }
  return check(thrown)
  function check(e) {
    assert.ok(e instanceof HostError, `not a HostError: ${e?.constructor?.name} ${e?.message}`)
    assert.equal(e.code, 'invalid_argument', e.message)
    assert.match(e.message, pattern)
    assert.doesNotMatch(e.message, /Failed to convert|rust type|\n/)
  }
}

test('a BigInt, a cycle or a toJSON returning undefined gives invalid_argument naming the parameter', async (t) => {
  const { host, dataDir } = newHost(t)
  await invalid(() => host.callTool({ serverId: 's', name: 't', arguments: { n: 1n } }), /^options: cannot be serialized: it contains a BigInt/)
  await invalid(() => host.callTool({ serverId: 's', name: 't', arguments: cyclic() }), /^options: cannot be serialized: it contains a cycle$/)
  await invalid(() => host.callTool({ serverId: 's', name: 't', arguments: {}, _meta: { big: 2n } }), /^options: cannot be serialized/)
  await invalid(() => new McpHost(Object.assign(noJson(), { dataDir })), /^options.toJSON: unknown field/)
  await invalid(() => host.dispatch(Object.assign(noJson(), { type: 'x' })), /^action: cannot be serialized: it has no JSON form/)
  await invalid(() => host.sendChannelMessage(Object.assign(noJson(), { channel: 'mcp://x' })), /^message: cannot be serialized/)
  await invalid(() => reduceSession(noJson(), { type: 'x' }), /^state: cannot be serialized/)
  await invalid(() => host.addPlugin(Object.assign(noJson(), { root: tmpDir(t) })), /^options: cannot be serialized/)
})

test('the constructor lists every McpHostOptions field as expected', () => {
  const dts = readFileSync(join(ROOT, 'index.d.ts'), 'utf8')
  const body = dts.slice(dts.indexOf('export interface McpHostOptions {'))
  const block = body.slice(0, body.indexOf('\n}\n'))
  const declared = [...block.matchAll(/^ {2}([a-zA-Z]+)\??:/gm)].map((m) => m[1])
  assert.ok(declared.length >= 15, declared.join())
  let message
  try {
    new McpHost({ bogus: 1 })
  } catch (e) {
    message = e.message
  }
  const listed = [...message.slice(message.indexOf('expected one of')).matchAll(/`([a-zA-Z]+)`/g)].map((m) => m[1])
  assert.deepEqual([...listed].sort(), [...declared].sort())
})

test('a request handler that throws gives the server an error and the app a warn log', async (t) => {
  const handlers = { sampling: async () => { throw new Error('model quota exhausted') } }
  const { host, logs } = newHost(t, { handlers })
  const id = await host.addServer({ name: 'req', config: fixtureEntry('requests-server.mjs') })
  await waitState(host, id, 'ready')
  const answer = JSON.parse(await callText(host, id, 'ask_sampling'))
  assert.ok(answer.error, JSON.stringify(answer))
  const warned = await waitFor(() => logs.find((l) => l.target === 'host.requests'), { what: 'the host.requests warning' })
  assert.equal(warned.level, 'warn')
  assert.equal(warned.serverId, id)
  assert.match(warned.message, /sampling handler failed on sampling\/createMessage: model quota exhausted/)
})
