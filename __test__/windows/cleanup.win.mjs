// Windows: no server process or grandchild outlives the host's use of it:
// after dispose(), after garbage collection of an undisposed host, and after
// the host process is killed (TerminateProcess: the kill-on-close Job Object
// of each server ends with the host's handles). The grandchild is detached
// (libuv `detached`: its own process group, no console), the case a
// Job Object exists for.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { newHost, tmpDir, waitState, waitFor, callText, alive, winServerEntry, WIN_FIXTURES, NODE } from './helpers.mjs'

const describe = (pids) => () => pids.map((p) => `${p}:${alive(p) ? 'alive' : 'gone'}`).join(' ')

async function treeInHost(t) {
  const ctx = newHost(t)
  const id = await ctx.host.addServer({ name: 'tree', config: winServerEntry() })
  await waitState(ctx.host, id, 'ready')
  const server = Number(await callText(ctx.host, id, 'pid'))
  const grandchild = Number(await callText(ctx.host, id, 'spawn_grandchild'))
  assert.ok(alive(server) && alive(grandchild), describe([server, grandchild])())
  return { ...ctx, pids: [server, grandchild] }
}

test('dispose() ends the server and its detached grandchild', async (t) => {
  const { host, pids } = await treeInHost(t)
  await host.dispose()
  assert.equal(host.processCount, 0)
  await waitFor(() => pids.every((p) => !alive(p)), { what: 'server and grandchild gone after dispose()', describe: describe(pids) })
})

test('disposeSync() ends the server and its detached grandchild at once', async (t) => {
  const { host, pids } = await treeInHost(t)
  host.disposeSync()
  assert.equal(host.processCount, 0)
  await waitFor(() => pids.every((p) => !alive(p)), { what: 'server and grandchild gone after disposeSync()', describe: describe(pids) })
})

/** Starts host-child.mjs in `mode`; resolves once it printed READY, with the pids. */
async function hostChild(t, mode) {
  const child = spawn(NODE, ['--expose-gc', join(WIN_FIXTURES, 'host-child.mjs'), mode], {
    env: { ...process.env, AHP_TEST_DATA: tmpDir(t, 'ahp-win-data-') },
    stdio: ['pipe', 'pipe', 'inherit'],
    windowsHide: true,
  })
  t.after(() => child.kill())
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const ready = await waitFor(() => /READY (\d+) (\d+)/.exec(out), { timeout: 60_000, what: 'host child READY', describe: () => out })
  return { child, out: () => out, exited, pids: [Number(ready[1]), Number(ready[2])] }
}

test('garbage collection of an undisposed host ends its server and grandchild', async (t) => {
  const { child, out, pids } = await hostChild(t, 'gc')
  assert.ok(pids.every(alive), describe(pids)())
  child.stdin.write('GO\n')
  await waitFor(() => out().includes('COLLECTED'), { timeout: 30_000, what: 'the host wrapper to be collected', describe: out })
  // The host process still runs: the host's finalizer ended the job.
  await waitFor(() => pids.every((p) => !alive(p)), { what: 'server and grandchild gone after GC', describe: describe(pids) })
  assert.equal(child.exitCode, null, 'the host process is still running')
})

test('killing the host process (TerminateProcess) ends its server and grandchild', async (t) => {
  const { child, exited, pids } = await hostChild(t, 'kill')
  assert.ok(pids.every(alive), describe(pids)())
  child.stdin.write('GO\n')
  child.kill('SIGKILL')
  await exited
  await waitFor(() => pids.every((p) => !alive(p)), { what: 'server and grandchild gone after the host died', describe: describe(pids) })
})
