// What a re-list after notifications/tools/list_changed logs, with a real
// stdio server (fixtures/catalogue-server.mjs, MODE relisting): each
// diagnostic once, not once per listing, and again only after a listing
// without it.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, fixtureEntry, waitState, waitFor } from './helpers/host.mjs'

test('a re-list logs only the diagnostics the last listing did not have', async (t) => {
  const { host, logs } = newHost(t)
  const config = { ...fixtureEntry('catalogue-server.mjs'), env: { MODE: 'relisting', DROP_JOB_ON: '3' } }
  const id = await host.addServer({ name: 'rl', config })
  await waitState(host, id, 'ready')
  const mine = () => logs.filter((l) => l.serverId === id)
  const aboutJob = () => mine().filter((l) => l.level === 'warn' && l.message.includes('"job"')).length
  const relists = () => mine().filter((l) => l.message.startsWith('tools/list_changed: now')).length
  await waitFor(() => aboutJob() === 1, { what: 'the first listing\'s warning' })
  const touch = async (n) => {
    await host.callTool({ serverId: id, name: 'touch', arguments: {} })
    // The re-list's own record follows its warnings.
    await waitFor(() => relists() === n, { what: `re-list ${n}`, describe: () => JSON.stringify(mine()) })
  }
  await touch(1)
  await touch(2)
  assert.equal(aboutJob(), 1, 'the same diagnostic is not logged again on a re-list')
  assert.equal(host.toolDiagnostics().filter((d) => d.tool === 'job').length, 1, 'still a diagnostic')
  await touch(3) // job not listed
  assert.equal(host.toolDiagnostics().filter((d) => d.tool === 'job').length, 0)
  await touch(4) // job back
  assert.equal(aboutJob(), 2, 'logged again after a listing without it')
})
