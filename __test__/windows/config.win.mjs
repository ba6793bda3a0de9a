// Windows: configuration files and line endings. An mcp.json written with
// \r\n loads, and its errors name the same line:column as with \n; a
// server whose stdout ends its lines with \r\n works.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { newHost, tmpDir, writePlugin, waitState, callText, winServerEntry } from './helpers.mjs'

const crlf = (text) => text.replaceAll('\n', '\r\n')

test('an mcp.json with \\r\\n line endings loads; its errors name the same line:column as with \\n', async (t) => {
  const dir = tmpDir(t)
  const good = writePlugin(join(dir, 'good'), crlf(JSON.stringify({ mcpServers: { s: winServerEntry() } }, null, 2)))
  const broken = '{\n  "mcpServers": {\n    "x": { "type": "stdio" "command": "node" }\n  }\n}\n'
  const lf = writePlugin(join(dir, 'lf'), broken)
  const cr = writePlugin(join(dir, 'crlf'), crlf(broken))
  const { host } = newHost(t)
  assert.equal((await host.addPlugin({ root: good })).load.kind, 'loaded')
  await waitState(host, 'good/s', 'ready')
  const where = (message) => /mcp\.json:(\d+:\d+): invalid JSON/.exec(message)?.[1]
  const a = (await host.addPlugin({ root: lf })).load
  const b = (await host.addPlugin({ root: cr })).load
  assert.equal(a.kind, 'error')
  assert.equal(b.kind, 'error')
  assert.match(where(a.message) ?? '', /^3:\d+$/, a.message)
  assert.equal(where(b.message), where(a.message), b.message)
})

test('a server that ends its stdout lines with \\r\\n works', async (t) => {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'crlf', config: winServerEntry([], { env: { AHP_WIN_CRLF: '1' } }) })
  await waitState(host, id, 'ready')
  assert.deepEqual(JSON.parse(await callText(host, id, 'argv')), [])
})
