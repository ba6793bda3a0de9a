// Windows: the package as a Windows consumer gets it. scripts/test-windows.js
// packs the main package and ahp-mcp-host-win32-x64-msvc (scripts/pack.js,
// with the binary of `npm run build:windows`) and installs both tarballs
// into a fresh app (AHP_WIN_CONSUMER_APP); here Node for Windows requires
// `ahp-mcp-host` from that app only, loads the binary of the platform
// package, and runs a real stdio server end to end.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { NODE, WIN_SERVER } from './helpers.mjs'

const APP = process.env.AHP_WIN_CONSUMER_APP

test('the installed package loads its win32-x64-msvc binary and runs a stdio server end to end', { skip: !APP && 'run by npm run test:windows, which installs the packed tarballs (AHP_WIN_CONSUMER_APP)' }, () => {
  const script = `
    const { McpHost } = require('ahp-mcp-host')
    const native = Object.keys(require.cache).filter((k) => k.endsWith('.node'))
    ;(async () => {
      const host = new McpHost({ dataDir: require('node:path').join(require('node:os').tmpdir(), 'ahp-win-consumer-data') })
      const id = await host.addServer({ name: 'e2e', config: { type: 'stdio', command: process.execPath, args: [${JSON.stringify(WIN_SERVER)}, 'from-the-package'] } })
      await host.whenReady(id, { timeoutMs: 60000 })
      const argv = (await host.callTool({ serverId: id, name: 'argv', arguments: {} })).content[0].text
      await host.dispose()
      console.log(JSON.stringify({ native, argv, processes: host.processCount }))
    })().catch((e) => { console.error(e); process.exit(1) })`
  const r = spawnSync(NODE, ['-e', script], { cwd: APP, encoding: 'utf8', timeout: 120_000 })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = JSON.parse(r.stdout.trim().split('\n').pop())
  assert.deepEqual(out.native, [join(APP, 'node_modules', 'ahp-mcp-host-win32-x64-msvc', 'ahp-mcp-host.win32-x64-msvc.node')])
  assert.deepEqual(JSON.parse(out.argv), ['from-the-package'])
  assert.equal(out.processes, 0)
})
