// The default dataDir (no `dataDir` option) is a per-user application data
// directory, not a shared folder under the OS temp directory: on Linux
// `$XDG_DATA_HOME/ahp-mcp-host`, else `~/.local/share/ahp-mcp-host`. Each
// plugin's PLUGIN_DATA is created under it, private (0700).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { tmpDir, writePlugin, fixtureEntry, FIXTURES, NODE } from './helpers/host.mjs'

async function runChild(t, env) {
  const root = writePlugin(join(tmpDir(t), 'dd-plugin'), { mcpServers: { tools: fixtureEntry('tools-server.mjs') } })
  const base = { PATH: process.env.PATH }
  const child = spawn(NODE, [join(FIXTURES, 'data-dir-child.mjs'), root], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => { out += d })
  child.stderr.on('data', (d) => { err += d })
  const code = await new Promise((resolve) => child.on('exit', resolve))
  assert.equal(code, 0, err)
  assert.match(out, /^READY dd-plugin\/tools$/m, out + err)
  assert.match(out, /DISPOSED/)
  return { out, err }
}

test('without dataDir, PLUGIN_DATA goes under $XDG_DATA_HOME/ahp-mcp-host (mode 0700)', { skip: process.platform !== 'linux' }, async (t) => {
  const home = tmpDir(t)
  const xdg = tmpDir(t)
  const { err } = await runChild(t, { HOME: home, XDG_DATA_HOME: xdg })
  const pluginData = join(xdg, 'ahp-mcp-host', 'dd-plugin')
  assert.ok(statSync(pluginData).isDirectory(), `${pluginData} missing`)
  assert.equal(statSync(join(xdg, 'ahp-mcp-host')).mode & 0o777, 0o700)
  assert.equal(statSync(pluginData).mode & 0o777, 0o700)
  assert.equal(existsSync(join(home, '.local')), false)
  assert.doesNotMatch(err, /no home directory/)
})

test('without dataDir and XDG_DATA_HOME, PLUGIN_DATA goes under ~/.local/share/ahp-mcp-host', { skip: process.platform !== 'linux' }, async (t) => {
  const home = tmpDir(t)
  await runChild(t, { HOME: home })
  const pluginData = join(home, '.local', 'share', 'ahp-mcp-host', 'dd-plugin')
  assert.ok(statSync(pluginData).isDirectory(), `${pluginData} missing`)
  assert.equal(statSync(pluginData).mode & 0o777, 0o700)
})
