// Bounded startup (issue 13, case 10): at most `limits.maxConcurrentLaunches`
// stdio servers are between spawn and ready at once, they go in the order
// they asked (configuration order for first starts; a restart queues at the
// end), a ready server is usable while others still wait, and stop /
// remove / dispose end a wait at once.
//
// Each server is `gate-server.mjs`, which reports its start to a coordinator
// on 127.0.0.1 and stays in its handshake until the coordinator lets it go;
// it reports again when it answers the host's first `tools/list` (after which
// the host frees the server's launch permit). The coordinator counts starts
// not yet listed: that count can only exceed the cap if the host launches
// more than the cap at once.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { join } from 'node:path'
import { newHost, fixtureEntry, waitState, waitFor, callText, tmpDir, writePlugin, serverState } from './helpers/host.mjs'

/**
 * The coordinator: records starts (`started`, in arrival order; `starts`
 * per index), listings (`listed`) and the most servers started and not yet
 * listed at once (`maxInFlight`). A start is held until `release(i)` (or
 * released at once when `i` is in `open`).
 */
async function coordinator(t, open = []) {
  const state = { started: [], starts: new Map(), listed: new Set(), inFlight: 0, maxInFlight: 0 }
  const allowed = new Set(open)
  const held = new Map()
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1')
    const i = Number(url.searchParams.get('i'))
    if (url.pathname === '/start') {
      state.started.push(i)
      state.starts.set(i, (state.starts.get(i) ?? 0) + 1)
      state.inFlight++
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight)
      if (allowed.has(i)) res.end('go')
      else held.set(i, res)
    } else if (url.pathname === '/listed') {
      state.inFlight--
      state.listed.add(i)
      res.end('ok')
    } else {
      res.writeHead(404).end()
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const res of held.values()) res.destroy()
    server.closeAllConnections()
    server.close()
  })
  const release = (i) => {
    allowed.add(i)
    held.get(i)?.end('go')
    held.delete(i)
  }
  return { base: `http://127.0.0.1:${server.address().port}`, state, release }
}

/**
 * `addPlugin` options for `count` gate servers `s00`, `s01`, … (configuration
 * order), each with protocol `legacy`: a server held in its handshake past
 * the 10 s `server/discover` probe of `auto` would be connected to again.
 */
function gatePlugin(t, base, count, name = 'gates') {
  const mcpServers = {}
  const servers = {}
  for (let i = 0; i < count; i++) {
    const key = `s${String(i).padStart(2, '0')}`
    mcpServers[key] = fixtureEntry('gate-server.mjs', [String(i), base])
    servers[key] = { protocol: 'legacy' }
  }
  return { root: writePlugin(join(tmpDir(t), name), { mcpServers }), name, servers }
}

const sorted = (values) => [...values].sort((a, b) => a - b)

test('24 stdio servers with maxConcurrentLaunches 4: at most 4 start at once, in configuration order, and a ready one is usable while the rest wait', async (t) => {
  const CAP = 4
  const COUNT = 24
  const STOPPED = 20
  const gate = await coordinator(t, [0])
  const { host } = newHost(t, { limits: { maxConcurrentLaunches: CAP, startupTimeoutMs: 120_000 } })
  const plugin = await host.addPlugin(gatePlugin(t, gate.base, COUNT))
  const ids = plugin.servers
  assert.equal(ids.length, COUNT)

  // Server 0 goes through; its permit goes to server 4; 1…4 stay in their handshakes.
  await waitState(host, ids[0], 'ready')
  await waitFor(() => gate.state.started.length >= CAP + 1, { what: '5 starts', describe: () => JSON.stringify(gate.state.started) })
  assert.deepEqual(sorted(gate.state.started), [0, 1, 2, 3, 4])
  assert.equal(host.processCount, CAP + 1, 'only the servers holding or having held a permit were spawned')
  // Usable while 19 servers still wait for a launch.
  assert.equal(await callText(host, ids[0], 'whoami'), 'server 0')
  assert.equal(serverState(host, ids[COUNT - 1]).kind, 'starting')

  // A stop while waiting for a permit ends the wait: that server never starts.
  host.dispatch({ type: 'session/mcpServerStopRequested', id: ids[STOPPED] }, { clientId: 'c', clientSeq: 1 })
  await waitState(host, ids[STOPPED], 'stopped', { timeout: 10_000 })

  // Let the held servers go one at a time, in order: each freed permit goes
  // to the next server in configuration order, never to a later one.
  const order = [...Array(COUNT).keys()].filter((i) => i !== STOPPED)
  for (let k = 1; k < order.length; k++) {
    gate.release(order[k])
    const expected = order.slice(0, Math.min(k + 1 + CAP, order.length))
    await waitFor(() => gate.state.listed.has(order[k]) && gate.state.started.length >= expected.length, {
      what: `server ${order[k]} listed and ${expected.length} started`,
      describe: () => JSON.stringify({ started: gate.state.started, listed: [...gate.state.listed] }),
    })
    assert.deepEqual(sorted(gate.state.started), expected, `after server ${order[k]} became ready`)
  }
  for (const i of order) await waitState(host, ids[i], 'ready')
  assert.equal(gate.state.maxInFlight, CAP, `at most ${CAP} servers between spawn and ready at once`)
  assert.ok(!gate.state.started.includes(STOPPED), 'the server stopped while waiting never started')
  assert.equal(await callText(host, ids[COUNT - 1], 'whoami'), `server ${COUNT - 1}`)
})

test('a restart takes a launch permit too: it waits behind a server still starting', async (t) => {
  const gate = await coordinator(t, [0])
  const { host } = newHost(t, { limits: { maxConcurrentLaunches: 1 } })
  const plugin = await host.addPlugin(gatePlugin(t, gate.base, 2))
  const [first, second] = plugin.servers
  await waitState(host, first, 'ready')
  // Server 1 now holds the only permit, held in its handshake.
  await waitFor(() => gate.state.started.includes(1), { what: 'server 1 started' })
  host.dispatch({ type: 'session/mcpServerStartRequested', id: first }, { clientId: 'c', clientSeq: 1 })
  await waitState(host, first, 'starting')
  // Server 0's restart waits: its process is stopped and no new one starts.
  await waitFor(() => host.processCount === 1, { what: 'the restarted server stopped' })
  assert.equal(gate.state.starts.get(0), 1)
  gate.release(1)
  await waitState(host, second, 'ready')
  await waitState(host, first, 'ready')
  assert.equal(gate.state.starts.get(0), 2)
  assert.equal(gate.state.maxInFlight, 1)
})

test('remove and dispose end the waits for launch permits at once', async (t) => {
  const gate = await coordinator(t) // server 0 is never let go
  const { host } = newHost(t, { limits: { maxConcurrentLaunches: 1, startupTimeoutMs: 30_000 } })
  const plugin = await host.addPlugin(gatePlugin(t, gate.base, 6))
  await waitFor(() => gate.state.started.length === 1, { what: 'server 0 started' })
  for (const id of plugin.servers) assert.equal(serverState(host, id).kind, 'starting')
  assert.equal(host.processCount, 1)
  await host.remove(plugin.id)
  assert.deepEqual(gate.state.started, [0], 'no waiting server started')

  // A second plugin waiting behind a held server: dispose settles.
  const again = await host.addPlugin(gatePlugin(t, gate.base, 3, 'again'))
  await waitFor(() => gate.state.started.length === 2, { what: 'the second plugin\'s server 0 started' })
  assert.equal(serverState(host, again.servers[2]).kind, 'starting')
  await host.dispose()
  assert.equal(host.processCount, 0)
  assert.deepEqual(gate.state.started, [0, 0])
})
