// MCP "Utilities" host methods (issue 31 item 4): `complete()` (MCP
// `completion/complete`) and `setLogLevel()` (MCP `logging/setLevel`, and
// the per-request `_meta` log level of 2026-07-28), against real servers of
// the official TypeScript SDK over stdio and Streamable HTTP:
// fixtures/utilities-server.mjs (SDK v1, 2025 era; `BARE=1` declares
// neither capability) and fixtures/utilities-modern.mjs (SDK v2, 2026-07-28).
//
// What it proves: completions come from the server (prefix, context
// arguments, resource templates); an undeclared capability is refused with
// `not_supported` and nothing is sent; the server filters its log messages
// at the chosen level (the SDKs drop what is below it), on the connection it
// was set on and on the next one (a restart: the level is set again), and at
// 2026-07-28 the level is the one each request carries in its `_meta`.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, fixtureEntry, waitState, waitFor, rejectsWith, startHttpFixture, callText } from './helpers/host.mjs'

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']

const TRANSPORTS = [
  { name: 'stdio', config: async (_t, script, env) => ({ ...fixtureEntry(script), env }) },
  {
    name: 'Streamable HTTP',
    config: async (t, script, env) => ({ type: 'streamable-http', url: (await startHttpFixture(t, script, env, ['http'])).url }),
  },
]

/** Adds `script` on `transport` as server `name` and waits until it is ready. */
async function addReady(t, host, transport, script, { env = {}, protocol } = {}) {
  const config = await transport.config(t, script, env)
  const id = await host.addServer({ name: 'util', config, ...(protocol ? { protocol } : {}) })
  await waitState(host, id, 'ready')
  return id
}

/** The levels of the `emit` messages of one `emit` call (records after index `from`), once `emergency` arrived. */
async function emitted(logs, from) {
  const mine = () => logs.slice(from).filter((l) => l.target === 'server.log' && /emit /.test(l.message))
  await waitFor(() => mine().some((l) => l.message.endsWith('emit emergency')), { what: 'the emergency log message of emit' })
  return mine().map((l) => l.serverLevel)
}

let seq = 0
/** Stops server `id` and starts it again (a new process or HTTP session), waiting for `ready`. */
async function restart(host, id) {
  host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'utilities-test', clientSeq: ++seq })
  await waitState(host, id, 'stopped')
  host.dispatch({ type: 'session/mcpServerStartRequested', id }, { clientId: 'utilities-test', clientSeq: ++seq })
  await waitState(host, id, 'ready')
}

for (const transport of TRANSPORTS) {
  test(`complete over ${transport.name}: prompt arguments by prefix and context, resource template variables`, async (t) => {
    const { host } = newHost(t)
    const id = await addReady(t, host, transport, 'utilities-server.mjs')
    const country = await host.complete({ serverId: id, ref: { type: 'ref/prompt', name: 'trip' }, argument: { name: 'country', value: 'F' } })
    assert.deepEqual(country.completion.values, ['France', 'Finland'])
    assert.equal(country.completion.total, 2)
    // MCP 2025-06-18+ `context.arguments`: the cities of the chosen country.
    const city = (country) => host.complete({
      serverId: id,
      ref: { type: 'ref/prompt', name: 'trip' },
      argument: { name: 'city', value: 'L' },
      context: { arguments: { country } },
    })
    assert.deepEqual((await city('France')).completion.values, ['Lyon', 'Lille'])
    assert.deepEqual((await city('Germany')).completion.values, [])
    const path = await host.complete({ serverId: id, ref: { type: 'ref/resource', uri: 'file:///{path}' }, argument: { name: 'path', value: 'b' } })
    assert.deepEqual(path.completion.values, ['beta.txt'])
  })

  test(`setLogLevel over ${transport.name} (2025 era): the server filters at the level, and again after a restart`, async (t) => {
    const { host, logs } = newHost(t)
    const id = await addReady(t, host, transport, 'utilities-server.mjs')
    let from = logs.length
    assert.equal(await callText(host, id, 'emit'), 'emitted')
    assert.deepEqual(await emitted(logs, from), LEVELS, 'without a level the server logs everything')
    await host.setLogLevel(id, 'error')
    from = logs.length
    await callText(host, id, 'emit')
    assert.deepEqual(await emitted(logs, from), ['error', 'critical', 'alert', 'emergency'])
    await restart(host, id)
    const again = logs.find((l) => l.target === 'host.logging' && l.serverId === id)
    assert.equal(again?.level, 'info', JSON.stringify(again))
    assert.match(again.message, /log level "error" set again on the new connection/)
    from = logs.length
    await callText(host, id, 'emit')
    assert.deepEqual(await emitted(logs, from), ['error', 'critical', 'alert', 'emergency'], 'the new connection got the level')
    await host.setLogLevel(id, 'alert')
    from = logs.length
    await callText(host, id, 'emit')
    assert.deepEqual(await emitted(logs, from), ['alert', 'emergency'])
  })

  test(`setLogLevel over ${transport.name} at 2026-07-28: no logging/setLevel, the level travels in each request's _meta`, async (t) => {
    const { host, logs } = newHost(t)
    const id = await addReady(t, host, transport, 'utilities-modern.mjs', { protocol: '2026-07-28' })
    // Before any setLogLevel the host asks for every level (as a 2025-era server logs).
    let from = logs.length
    assert.equal(await callText(host, id, 'emit'), 'debug')
    assert.deepEqual(await emitted(logs, from), LEVELS)
    await host.setLogLevel(id, 'warning')
    from = logs.length
    assert.equal(await callText(host, id, 'emit'), 'warning', "the tools/call _meta carries the chosen level")
    assert.deepEqual(await emitted(logs, from), ['warning', 'error', 'critical', 'alert', 'emergency'])
    await restart(host, id)
    assert.equal(await callText(host, id, 'emit'), 'warning', 'kept for the next connection')
    assert.equal(logs.filter((l) => l.target === 'host.logging').length, 0, 'nothing is sent again at 2026-07-28')
    const done = await host.complete({ serverId: id, ref: { type: 'ref/prompt', name: 'trip' }, argument: { name: 'country', value: 'G' } })
    assert.deepEqual(done.completion.values, ['Germany'])
  })
}

test('complete and setLogLevel are refused with not_supported on a server that did not declare completions / logging', async (t) => {
  const { host, logs } = newHost(t)
  const id = await addReady(t, host, TRANSPORTS[0], 'utilities-server.mjs', { env: { BARE: '1' } })
  const complete = await rejectsWith(
    () => host.complete({ serverId: id, ref: { type: 'ref/prompt', name: 'trip' }, argument: { name: 'country', value: '' } }),
    'not_supported',
  )
  assert.match(complete.message, new RegExp(`server ${id} did not declare the completions capability; completion/complete was not sent`))
  const level = await rejectsWith(() => host.setLogLevel(id, 'error'), 'not_supported')
  assert.match(level.message, /did not declare the logging capability; logging\/setLevel was not sent/)
  // Nothing was remembered: the server still logs at its own default, and a restart sends nothing.
  await restart(host, id)
  const from = logs.length
  await callText(host, id, 'emit')
  assert.equal(logs.filter((l) => l.target === 'host.logging').length, 0)
  assert.equal(logs.slice(from).filter((l) => l.target === 'server.log').length, 0, 'a server without logging sends no log messages')
})

test('complete and setLogLevel: bad arguments name the field; unknown and stopped servers', async (t) => {
  const { host } = newHost(t)
  const id = await addReady(t, host, TRANSPORTS[0], 'utilities-server.mjs')
  const base = { serverId: id, ref: { type: 'ref/prompt', name: 'trip' }, argument: { name: 'country', value: '' } }
  const cases = [
    [{ ...base, ref: { type: 'ref/tool', name: 'x' } }, /^params\.ref\.type: must be one of "ref\/prompt", "ref\/resource"/],
    [{ ...base, ref: { type: 'ref/resource' } }, /^params\.ref\.uri: must be a non-empty string/],
    [{ ...base, argument: { name: 'country' } }, /^params\.argument\.value: must be a string, got undefined/],
    [{ ...base, context: { arguments: { a: 1 } } }, /^params\.context\.arguments\.a: must be a string, got 1/],
    [{ ...base, extra: true }, /^params\.extra: unknown field `extra`/],
    [{ ...base, ref: { type: 'ref/prompt', name: 'trip', uri: 'x' } }, /^params\.ref\.uri: unknown field `uri`/],
  ]
  for (const [params, message] of cases) {
    const e = await rejectsWith(() => host.complete(params), 'invalid_argument')
    assert.match(e.message, message, JSON.stringify(params))
  }
  for (const level of ['warn', 'WARNING', '', 3]) {
    const e = await rejectsWith(() => host.setLogLevel(id, level), 'invalid_argument')
    assert.match(e.message, /^level: must be one of debug, info, notice, warning, error, critical, alert, emergency/)
  }
  await rejectsWith(() => host.setLogLevel('nope', 'error'), 'not_found')
  await rejectsWith(() => host.complete({ ...base, serverId: 'nope' }), 'not_found')
  host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'utilities-test', clientSeq: ++seq })
  await waitState(host, id, 'stopped')
  await rejectsWith(() => host.setLogLevel(id, 'error'), 'server_not_ready')
  await rejectsWith(() => host.complete(base), 'server_not_ready')
})
