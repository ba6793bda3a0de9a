// No server process may outlive its use: a server started through `sh -c`
// with a grandchild that ignores SIGTERM must leave no process (and no
// zombie) after a stop, dispose(), garbage collection of the host, a normal
// Node exit, process.exit() and a SIGKILL of the Node process.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import {
  newHost, tmpDir, waitState, waitFor, callText, MarkedProcesses, describePids, uniqueMarker, killChild, FIXTURES, NODE,
} from './helpers/host.mjs'
import { markedEverythingConfig } from './helpers/marked-server.mjs'

const GONE_WITHIN_MS = 10_000

/**
 * Waits until the server and its SIGTERM-ignoring grandchild both run, then
 * also tracks the host's watchdog for the server's process group (argv
 * `ahp-mcp-host-watchdog <pgid>`), which must be gone at the end as well.
 */
async function waitBothRunning(procs) {
  let last
  await waitFor(() => {
    last = procs.scan()
    const cmds = describePids(last.live)
    return cmds.includes(`grandchild-${procs.marker}`) && cmds.includes(`server-${procs.marker}`)
  }, { what: 'server and grandchild to run', describe: () => describePids(last?.live ?? []) })
  const leader = last.live.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(`server-${procs.marker}`))
  const pgid = Number(readFileSync(`/proc/${leader}/stat`, 'latin1').split(') ')[1].split(' ')[2])
  assert.equal(pgid, leader, 'the server leads its own process group')
  procs.alsoTrack(`ahp-mcp-host-watchdog\0${pgid}\0`)
  await waitFor(() => procs.scan().live.length === 3, { what: 'the watchdog of the server group', describe: () => describePids(procs.scan().live) })
  return procs.scan().live
}

async function startMarked(t) {
  const marker = uniqueMarker('cleanup')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const ctx = newHost(t)
  const id = await ctx.host.addServer({ name: 'marked', config: markedEverythingConfig(marker) })
  await waitState(ctx.host, id, 'ready')
  assert.match(await callText(ctx.host, id, 'echo', { message: 'x' }), /x/)
  await waitBothRunning(procs)
  return { ...ctx, id, procs }
}

test('cleanup after a stop request (grandchild ignores SIGTERM)', async (t) => {
  const { host, id, procs } = await startMarked(t)
  const echo = host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'cleanup', clientSeq: 1 })
  assert.equal(echo.rejectionReason, undefined)
  await waitState(host, id, 'stopped', { timeout: GONE_WITHIN_MS })
  await procs.waitGone(GONE_WITHIN_MS)
  assert.equal(host.processCount, 0)
})

test('cleanup after dispose()', async (t) => {
  const { host, procs } = await startMarked(t)
  await host.dispose()
  assert.equal(host.processCount, 0)
  await procs.waitGone(GONE_WITHIN_MS)
  assert.throws(() => host.getState(), { code: 'disposed' })
})

test('cleanup after disposeSync()', async (t) => {
  const { host, procs } = await startMarked(t)
  host.disposeSync()
  assert.equal(host.processCount, 0)
  await procs.waitGone(GONE_WITHIN_MS)
})

/** Runs fixtures/host-child.mjs in `mode`; resolves once it printed READY. */
async function runChild(t, mode) {
  const marker = uniqueMarker('child')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const child = spawn(NODE, ['--expose-gc', join(FIXTURES, 'host-child.mjs'), mode], {
    env: { ...process.env, AHP_TEST_MARKER: marker, AHP_TEST_DATA: tmpDir(t, 'ahp-mcp-host-child-data-') },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  t.after(() => killChild(child, 'SIGKILL'))
  child.stdin.on('error', () => {})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => { stdout += d })
  child.stderr.on('data', (d) => { stderr += d })
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  let exited
  exit.then((e) => { exited = e })
  const output = () => `child stdout: ${stdout}\nchild stderr: ${stderr}\nexit: ${JSON.stringify(exited)}`
  await waitFor(() => stdout.includes('READY') || exited, { timeout: 30_000, what: 'child READY', describe: output })
  assert.ok(stdout.includes('READY'), output())
  await waitBothRunning(procs)
  // Only now let the child go on to end its host.
  child.stdin.write('GO\n')
  return { child, procs, exit, output, lines: () => stdout.split('\n'), isExited: () => exited !== undefined }
}

test('cleanup after the host object is garbage-collected without dispose', async (t) => {
  const { procs, output, lines, isExited } = await runChild(t, 'gc')
  await waitFor(() => lines().includes('GC_DONE') || isExited(), { timeout: 30_000, what: 'GC_DONE', describe: output })
  assert.ok(!isExited(), `the child must still be running: ${output()}`)
  assert.ok(lines().includes('COLLECTED'), `the host was not garbage-collected:\n${output()}`)
  await procs.waitGone(GONE_WITHIN_MS)
  // Measured while the Node process is still alive: GC, not process exit, cleaned up.
  assert.ok(!isExited(), output())
})

test('cleanup after the Node process exits normally without dispose', async (t) => {
  const { procs, exit, output } = await runChild(t, 'natural-exit')
  const { code, signal } = await Promise.race([
    exit,
    waitFor(() => false, { timeout: 30_000, what: 'natural exit', describe: output }),
  ])
  assert.equal(signal, null, output())
  assert.equal(code, 0, output())
  await procs.waitGone(GONE_WITHIN_MS)
})

test('cleanup after process.exit(0) without dispose', async (t) => {
  const { procs, exit, output } = await runChild(t, 'process-exit')
  const { code } = await Promise.race([exit, waitFor(() => false, { timeout: 30_000, what: 'process.exit', describe: output })])
  assert.equal(code, 0, output())
  await procs.waitGone(GONE_WITHIN_MS)
})

test('cleanup after the Node process is SIGKILLed', async (t) => {
  const { child, procs, exit } = await runChild(t, 'sigkill')
  child.kill('SIGKILL')
  const { signal } = await exit
  assert.equal(signal, 'SIGKILL')
  await procs.waitGone(GONE_WITHIN_MS)
})
