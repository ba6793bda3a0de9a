// Per-server event order (issue 13, case 4): everything the host emits to JS
// for one server keeps the order in which it happened. A server sending
// hundreds of `notifications/message` in a row gets them delivered to the
// `log` event in that order, none lost, over stdio and Streamable HTTP; a
// message with a level MCP does not define (`verbose`) is delivered with the
// nearest level, the server's own level kept in `serverLevel`.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, fixtureEntry, waitState, waitFor, startHttpFixture, callText } from './helpers/host.mjs'

/** The numbers of the `server.log` (or `target`) records of `tag` from `id`, in delivery order. */
function numbers(logs, id, tag, target = 'server.log') {
  const pattern = new RegExp(`(?:^|\\] )${tag} (\\d+)$`)
  return logs
    .filter((l) => l.serverId === id && l.target === target)
    .map((l) => pattern.exec(l.message))
    .filter(Boolean)
    .map((m) => Number(m[1]))
}

/** How many adjacent pairs are out of order. */
function swaps(seen) {
  let n = 0
  for (let i = 1; i < seen.length; i++) if (seen[i] < seen[i - 1]) n++
  return n
}

const range = (count) => Array.from({ length: count }, (_, i) => i)

/**
 * Runs bursts of 200 and of 8 messages on server `id` and asserts each
 * arrives complete and in order.
 */
async function assertBurstsInOrder(host, logs, id, label) {
  const bursts = [200, 8, 200, 8, 8, 200, 8, 200, 8, 8, 8, 8]
  for (const [run, count] of bursts.entries()) {
    const tag = `${label}${run}`
    assert.equal(await callText(host, id, 'burst', { tag, count }, { timeoutMs: 30_000 }), `sent ${count}`)
    await waitFor(() => numbers(logs, id, tag).length >= count, {
      timeout: 30_000,
      what: `${count} records of ${tag}`,
      describe: () => `got ${numbers(logs, id, tag).length}`,
    })
    const seen = numbers(logs, id, tag)
    assert.equal(swaps(seen), 0, `${tag}: ${swaps(seen)} records out of order: ${seen.join(' ')}`)
    assert.deepEqual(seen, range(count), `${tag}: every record once, in order`)
  }
}

test('stdio: bursts of 200 and 8 notifications/message reach the log event in order, none lost', async (t) => {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'bursts', config: fixtureEntry('log-burst-server.mjs') })
  await waitState(host, id, 'ready')
  await assertBurstsInOrder(host, logs, id, 'stdio')
  const record = logs.find((l) => l.serverId === id && l.target === 'server.log')
  assert.equal(record.level, 'info')
  assert.equal(record.serverLevel, 'info')
  assert.match(record.message, /^\[burst\] stdio0 0$/)
})

test('Streamable HTTP: bursts of 200 and 8 notifications/message reach the log event in order, none lost', async (t) => {
  const server = await startHttpFixture(t, 'log-burst-server.mjs', {}, ['http'])
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'bursts-http', config: { type: 'streamable-http', url: server.url } })
  await waitState(host, id, 'ready')
  await assertBurstsInOrder(host, logs, id, 'http')
})

test('stdio: server stderr lines reach the log event in order, none lost', async (t) => {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'stderr-bursts', config: fixtureEntry('log-burst-server.mjs') })
  await waitState(host, id, 'ready')
  for (const [run, count] of [200, 8, 200].entries()) {
    const tag = `err${run}`
    await callText(host, id, 'stderr_burst', { tag, count })
    await waitFor(() => numbers(logs, id, tag, 'server.stderr').length >= count, { what: `${count} stderr lines of ${tag}` })
    assert.deepEqual(numbers(logs, id, tag, 'server.stderr'), range(count), tag)
  }
})

test('a log level MCP does not define is delivered with the nearest level, the server level kept', async (t) => {
  const { host, logs } = newHost(t)
  const id = await host.addServer({ name: 'levels', config: fixtureEntry('log-burst-server.mjs') })
  await waitState(host, id, 'ready')
  assert.equal(await callText(host, id, 'levels', { tag: 'lv' }), 'sent 8')
  // [sent level, delivered level]; the non-string level is kept as its JSON text.
  const expected = [
    ['verbose', 'debug'],
    ['debug', 'debug'],
    ['notice', 'info'],
    ['critical', 'error'],
    ['trace', 'debug'],
    ['fatal', 'error'],
    ['warn', 'warn'],
    ['7', 'info'],
  ]
  const mine = () => logs.filter((l) => l.serverId === id && l.target === 'server.log' && l.message.startsWith('[burst] lv '))
  await waitFor(() => mine().length >= expected.length, {
    timeout: 10_000,
    what: 'one record per level',
    describe: () => JSON.stringify(mine()),
  })
  const got = mine().map((l) => [l.serverLevel, l.level])
  assert.deepEqual(got, expected)
  assert.deepEqual(mine().map((l) => l.message), expected.map(([sent]) => `[burst] lv ${sent}`))
})
