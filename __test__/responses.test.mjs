// Answers of native requests arrive as `response` items of the event batch
// (lib/host/responses.js): many in flight each get their own answer, and a
// host that was unref()ed still keeps the process alive while one waits.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, waitState, fixtureEntry, tmpDir, ROOT, NODE } from './helpers/host.mjs'

test('512 calls in flight on two servers each settle with their own answer, failures included', async (t) => {
  const { host } = newHost(t)
  const ids = []
  for (const name of ['a', 'b']) {
    const id = await host.addServer({ name, config: fixtureEntry('slow-server.mjs') })
    await waitState(host, id, 'ready')
    ids.push(id)
  }
  const calls = []
  for (let i = 0; i < 512; i++) {
    const serverId = ids[i % 2]
    if (i % 7 === 3) calls.push(host.callTool({ serverId, name: 'protocol_error', arguments: { code: -32000 - i } }).then(() => assert.fail(`call ${i} resolved`), (e) => ({ i, code: e.code, rpc: e.data?.code })))
    else calls.push(host.callTool({ serverId, name: 'wait', arguments: { ms: i % 5 } }).then((r) => ({ i, text: r.content[0].text })))
  }
  const settled = await Promise.all(calls)
  for (const s of settled) {
    if (s.i % 7 === 3) assert.deepEqual(s, { i: s.i, code: 'protocol_error', rpc: -32000 - s.i })
    else assert.deepEqual(s, { i: s.i, text: 'waited' })
  }
})

test('an unref()ed host keeps the process alive while a call waits for its answer', async (t) => {
  const dir = tmpDir(t)
  const script = join(dir, 'child.cjs')
  writeFileSync(script, `
    const { McpHost } = require(${JSON.stringify(join(ROOT, 'index.js'))})
    const host = new McpHost({ dataDir: ${JSON.stringify(join(dir, 'data'))} })
    ;(async () => {
      const id = await host.addServer({ name: 'slow', config: ${JSON.stringify(fixtureEntry('slow-server.mjs'))} })
      await host.whenReady(id)
      host.unref()
      const result = await host.callTool({ serverId: id, name: 'wait', arguments: { ms: 500 } })
      process.stdout.write('answer: ' + result.content[0].text + '\\n')
      await host.dispose()
    })()
  `)
  const child = spawn(NODE, [script], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  const [code] = await once(child, 'exit')
  assert.equal(code, 0)
  assert.equal(out, 'answer: waited\n')
})
