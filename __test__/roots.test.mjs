// Roots (MCP 2025-11-25 "Client Features › Roots"): the host's own roots
// (`roots` option, `setRoots`), validated and percent-encoded, answered to
// `roots/list`, and `notifications/roots/list_changed` after each change;
// a `roots` handler's answer is encoded too, its non-file roots dropped with
// a warning.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, fixtureEntry, HostError } from './helpers/host.mjs'

async function ask(host, id, tool, args = {}) {
  const result = await host.callTool({ serverId: id, name: tool, arguments: args })
  return JSON.parse(result.content[0].text)
}

async function rootsServer(host) {
  const id = await host.addServer({ name: 'roots', config: fixtureEntry('roots-server.mjs') })
  await waitState(host, id, 'ready')
  return id
}

test('setRoots: roots/list answers the encoded roots and each connected server gets notifications/roots/list_changed after the change', async (t) => {
  const { host } = newHost(t, { roots: [{ uri: 'file:///home/user/start', name: 'start' }] })
  const id = await rootsServer(host)
  assert.deepEqual((await ask(host, id, 'caps')).roots, { listChanged: true })
  const first = (await ask(host, id, 'history', { count: 1 })).history
  assert.deepEqual(first, [{ trigger: 'initialized', roots: [{ uri: 'file:///home/user/start', name: 'start' }] }])

  const result = await host.setRoots([
    { uri: 'file:///home/user/My Project/ü', name: 'My Project' },
    { uri: '/home/user/other dir/#1' },
  ])
  assert.equal(result, undefined)
  const expected = [
    { uri: 'file:///home/user/My%20Project/%C3%BC', name: 'My Project' },
    { uri: 'file:///home/user/other%20dir/%231' },
  ]
  const { history } = await ask(host, id, 'history', { count: 2 })
  assert.deepEqual(history[1], { trigger: 'list_changed', roots: expected })
  assert.deepEqual(await ask(host, id, 'ask_roots'), { roots: expected })
  // The same list again changes nothing: no notification.
  await host.setRoots(expected)
  await host.setRoots([])
  const after = (await ask(host, id, 'history', { count: 3 })).history
  assert.deepEqual(after.slice(2), [{ trigger: 'list_changed', roots: [] }])
})

test('setRoots refuses a non-file or relative root with invalid_argument naming its index and value, and keeps the roots', async (t) => {
  const { host } = newHost(t, { roots: [] })
  const id = await rootsServer(host)
  await ask(host, id, 'history', { count: 1 })
  for (const [bad, index] of [
    [[{ uri: 'file:///ok' }, { uri: 'https://example.com/repo' }], 1],
    [[{ uri: 'relative/dir' }], 0],
    [[{ uri: 'file:///a' }, { uri: 'file:///b' }, { uri: 'file:///c?x=1' }], 2],
    [[{ name: 'no uri' }], 0],
  ]) {
    await assert.rejects(host.setRoots(bad), (e) => {
      assert.ok(e instanceof HostError)
      assert.equal(e.code, 'invalid_argument')
      assert.match(e.message, new RegExp(`roots\\[${index}\\]`))
      return true
    })
  }
  await assert.rejects(host.setRoots([{ uri: 'https://example.com/repo' }]), /https:\/\/example\.com\/repo/)
  await assert.rejects(host.setRoots('file:///x'), (e) => e.code === 'invalid_argument')
  assert.deepEqual(await ask(host, id, 'ask_roots'), { roots: [] })
  assert.throws(() => newHost(t, { roots: [{ uri: 'ftp://example.com/x' }] }), (e) => e.code === 'invalid_argument' && /roots\[0\]/.test(e.message))
})

test('a roots handler: its answer is encoded, non-file roots dropped with a warn log; setRoots then takes precedence and notifies', async (t) => {
  let calls = 0
  const { host, logs } = newHost(t, {
    handlers: {
      roots: async () => (calls++, { roots: [{ uri: 'file:///home/user/My Project' }, { uri: 'https://example.com/x', name: 'web' }] }),
    },
  })
  const id = await rootsServer(host)
  assert.deepEqual((await ask(host, id, 'caps')).roots, { listChanged: true })
  const first = (await ask(host, id, 'history', { count: 1 })).history[0]
  assert.deepEqual(first, { trigger: 'initialized', roots: [{ uri: 'file:///home/user/My%20Project' }] })
  const warning = logs.find((l) => l.level === 'warn' && l.serverId === id && /https:\/\/example\.com\/x/.test(l.message))
  assert.ok(warning, JSON.stringify(logs.filter((l) => l.level === 'warn')))
  const before = calls
  await host.setRoots([{ uri: 'file:///srv/app' }])
  const { history } = await ask(host, id, 'history', { count: 2 })
  assert.deepEqual(history[1], { trigger: 'list_changed', roots: [{ uri: 'file:///srv/app' }] })
  assert.equal(calls, before)
})

test('setRoots on a host that declared no roots capability is refused', async (t) => {
  const { host } = newHost(t)
  const id = await rootsServer(host)
  assert.equal((await ask(host, id, 'caps')).roots, undefined)
  await assert.rejects(host.setRoots([{ uri: 'file:///x' }]), (e) => e.code === 'invalid_argument' && /roots/.test(e.message))
})
