// Servers from PyPI, as app authors meet them (issue 24, items 11 and 13):
// - fastmcp 4 speaks MCP 2026-07-28, where a server logs only for requests
//   whose `_meta` carries `io.modelcontextprotocol/logLevel` (SEP-2575): the
//   host asks, so the tool's log messages reach the `log` event;
// - a server on `mcp` 1.x answers the `server/discover` probe with a 94-line
//   validation dump on stderr; the host remembers that this configuration
//   speaks the 2025 era (in `dataDir`), so the next start does not probe.
// The virtual environments are made by pip on first use (helpers/python.mjs).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, tmpDir, waitState, waitFor, callText, freePort, waitAccepting } from './helpers/host.mjs'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { PY_FIXTURES } from './helpers/python.mjs'
import { pythonWith, pythonEntry, FASTMCP_4, MCP_1 } from './helpers/python.mjs'

const PROBE_DUMP = 'Failed to validate request'

test('fastmcp 4 (2026-07-28): the log messages of a tool call reach the log event', async (t) => {
  const python = pythonWith(FASTMCP_4)
  const { host, logs } = newHost(t)
  await host.addServer({ name: 'pylogs', config: pythonEntry(python, 'fastmcp_logs.py') })
  await waitState(host, 'pylogs', 'ready', { timeout: 60_000 })
  assert.equal(await callText(host, 'pylogs', 'chatty'), 'done')
  const from = () => logs.filter((l) => l.serverId === 'pylogs' && l.target === 'server.log')
  await waitFor(() => from().length >= 3, { what: 'three server.log records', describe: () => JSON.stringify(from()) })
  const seen = from().map((l) => [l.level, /first|second|third/.exec(l.message)?.[0]])
  assert.deepEqual(seen, [['info', 'first'], ['warn', 'second'], ['error', 'third']])
})

test('fastmcp 4 over Streamable HTTP (2026-07-28): the log messages of a tool call reach the log event', async (t) => {
  const python = pythonWith(FASTMCP_4)
  const port = await freePort()
  const server = spawn(python, [join(PY_FIXTURES, 'fastmcp_logs.py'), 'http', String(port)], { stdio: 'ignore' })
  t.after(() => server.kill('SIGTERM'))
  await waitAccepting(port, 60_000)
  const { host, logs } = newHost(t)
  await host.addServer({ name: 'pyhttp', config: { type: 'streamable-http', url: `http://127.0.0.1:${port}/mcp` } })
  await waitState(host, 'pyhttp', 'ready', { timeout: 60_000 })
  assert.equal(host.serverInfo('pyhttp')?.protocolVersion, '2026-07-28')
  assert.equal(await callText(host, 'pyhttp', 'chatty'), 'done')
  const from = () => logs.filter((l) => l.serverId === 'pyhttp' && l.target === 'server.log')
  await waitFor(() => from().length >= 3, { what: 'three server.log records', describe: () => JSON.stringify(from()) })
  assert.deepEqual(from().map((l) => /first|second|third/.exec(l.message)?.[0]), ['first', 'second', 'third'])
})

test('mcp 1.x: the server/discover probe runs once per configuration; the next start goes straight to initialize', async (t) => {
  const python = pythonWith(MCP_1)
  const dataDir = tmpDir(t, 'ahp-mcp-host-data-')
  const config = pythonEntry(python, 'mcp1_server.py')
  const dumps = (logs) => logs.filter((l) => l.target === 'server.stderr' && l.message.includes(PROBE_DUMP))

  const first = newHost(t, { dataDir })
  await first.host.addServer({ name: 'v1', config })
  await waitState(first.host, 'v1', 'ready', { timeout: 60_000 })
  assert.equal(await callText(first.host, 'v1', 'hello', { name: 'a' }), 'hello a')
  // The first start probed (the dump came) and fell back to initialize.
  await waitFor(() => dumps(first.logs).length > 0, { what: 'the probe dump on the first start' })
  await first.host.dispose()

  const second = newHost(t, { dataDir })
  await second.host.addServer({ name: 'v1', config })
  await waitState(second.host, 'v1', 'ready', { timeout: 60_000 })
  assert.equal(await callText(second.host, 'v1', 'hello', { name: 'b' }), 'hello b')
  assert.deepEqual(dumps(second.logs).map((l) => l.message), [], 'no probe on the second start')

  // Another configuration (an extra argument) is probed again.
  const third = newHost(t, { dataDir })
  await third.host.addServer({ name: 'v1', config: { ...config, args: [...config.args, '--other'] } })
  await waitState(third.host, 'v1', 'ready', { timeout: 60_000 })
  await waitFor(() => dumps(third.logs).length > 0, { what: 'the probe dump for a new configuration' })
})
