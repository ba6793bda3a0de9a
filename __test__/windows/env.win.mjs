// Windows: a stdio server's environment. Names are case-insensitive (`Path`
// and `PATH` are one variable: a configured `PATH` replaces the host's
// `Path`, never sits beside it), the allow-list keeps what Windows programs
// need (SystemRoot, ComSpec, PATHEXT, USERPROFILE, APPDATA, LOCALAPPDATA,
// TEMP) and drops the host's secrets; `PLUGIN_DATA` defaults under
// %LOCALAPPDATA%.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { rmSync } from 'node:fs'
import { newHost, tmpDir, waitState, callText, winServerEntry, writePlugin, McpHost, waitFor } from './helpers.mjs'

const WINDOWS_BASE = ['SystemRoot', 'ComSpec', 'PATHEXT', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'TEMP']

async function envOf(host, id, names) {
  return JSON.parse(await callText(host, id, 'env', { names }))
}

/** Sets `name` in this process's environment (the host's base environment) for the test. */
function hostVar(t, name, value) {
  const before = process.env[name]
  process.env[name] = value
  t.after(() => { if (before === undefined) delete process.env[name]; else process.env[name] = before })
}

test('a configured PATH replaces the host Path: one variable, whatever the case', async (t) => {
  const { host } = newHost(t, { env: 'inherit' })
  const custom = `${process.env.SystemRoot}\\system32;C:\\ahp-custom`
  const id = await host.addServer({ name: 'path', config: winServerEntry([], { env: { PATH: custom } }) })
  await waitState(host, id, 'ready')
  const names = JSON.parse(await callText(host, id, 'env_names'))
  const pathNames = names.filter((n) => n.toUpperCase() === 'PATH')
  assert.equal(pathNames.length, 1, `PATH-like names: ${JSON.stringify(pathNames)}`)
  assert.deepEqual(await envOf(host, id, ['Path']), { Path: custom })
})

test('the allow-list keeps the Windows base variables and drops a host secret', async (t) => {
  hostVar(t, 'AHP_WIN_SECRET_TOKEN', 'canary-win-env-7f3a9c')
  const { host } = newHost(t, { env: 'allowList' })
  const id = await host.addServer({ name: 'allow', config: winServerEntry() })
  await waitState(host, id, 'ready')
  const got = await envOf(host, id, [...WINDOWS_BASE, 'AHP_WIN_SECRET_TOKEN', 'Path'])
  for (const name of WINDOWS_BASE) {
    assert.ok(process.env[name], `the host has ${name}`)
    assert.equal(got[name], process.env[name], name)
  }
  assert.equal(got.Path, process.env.Path)
  assert.equal(got.AHP_WIN_SECRET_TOKEN, null)

  const { host: inheriting } = newHost(t, { env: 'inherit' })
  const id2 = await inheriting.addServer({ name: 'inherit', config: winServerEntry() })
  await waitState(inheriting, id2, 'ready')
  assert.equal((await envOf(inheriting, id2, ['AHP_WIN_SECRET_TOKEN'])).AHP_WIN_SECRET_TOKEN, 'canary-win-env-7f3a9c')
})

test('the default dataDir is under %LOCALAPPDATA%: PLUGIN_DATA of a plugin server', async (t) => {
  const name = `ahp-win-data-${process.pid}`
  const root = writePlugin(join(tmpDir(t), name), { mcpServers: { s: winServerEntry() } })
  const host = new McpHost()
  t.after(() => host.dispose())
  await host.addPlugin({ root })
  await waitState(host, `${name}/s`, 'ready')
  const data = (await envOf(host, `${name}/s`, ['PLUGIN_DATA'])).PLUGIN_DATA
  t.after(() => rmSync(data, { recursive: true, force: true }))
  const expected = join(process.env.LOCALAPPDATA, 'ahp-mcp-host')
  assert.ok(data.toLowerCase().startsWith(expected.toLowerCase() + '\\'), `PLUGIN_DATA ${data} is not under ${expected}`)
  await host.dispose()
  await waitFor(() => host.processCount === 0, { what: 'processCount 0' })
})
