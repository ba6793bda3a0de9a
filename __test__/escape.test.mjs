// A descendant that leaves the server's process group (setsid(), as a
// browser started detached by an automation server) must not outlive the
// server: after a stop, dispose(), disposeSync(), process.exit(), a normal
// exit and a SIGKILL of the Node process, no such process remains (Linux:
// the host walks the server's process tree, src/transport/descendants.rs).
// Nor does one orphaned at once by a double fork (`setsid -f`), which no
// walk of the tree can reach: the host finds it by the process mark in the
// environment it inherited.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import {
  newHost, tmpDir, waitState, waitFor, callText, MarkedProcesses, describePids, uniqueMarker, killChild, FIXTURES, NODE,
} from './helpers/host.mjs'
import { markedDetachedConfig } from './helpers/marked-server.mjs'

const GONE_WITHIN_MS = 10_000

const stat = (pid) => readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ')

/**
 * Waits until the server and its setsid'ed grandchild run, checks that the
 * grandchild really left the server's process group and session, and also
 * tracks the server's watchdog. With `orphaned`, also that the grandchild's
 * parent is not the server (a double fork reparented it).
 */
async function waitDetached(procs, { orphaned = false } = {}) {
  let last
  // By a whole argument, so the wrapper shell forked for the grandchild (whose
  // script text names it) is not taken for it before it execs.
  const find = (what) => last.live.find((pid) => {
    try { return readFileSync(`/proc/${pid}/cmdline`, 'latin1').endsWith(`\0${what}-${procs.marker}\0`) } catch { return false }
  })
  await waitFor(() => {
    last = procs.scan()
    return find('server') && find('grandchild')
  }, { what: 'server and detached grandchild to run', describe: () => describePids(last?.live ?? []) })
  const [server, grandchild] = [find('server'), find('grandchild')]
  const [pgid, session] = [Number(stat(server)[2]), Number(stat(server)[3])]
  assert.equal(pgid, server, 'the server leads its own process group')
  assert.notEqual(Number(stat(grandchild)[2]), pgid, 'the grandchild left the process group')
  assert.notEqual(Number(stat(grandchild)[3]), session, 'the grandchild left the session')
  if (orphaned) assert.notEqual(Number(stat(grandchild)[1]), server, 'the grandchild was reparented')
  procs.alsoTrack(`ahp-mcp-host-watchdog\0${pgid}\0`)
  return { server, grandchild }
}

/** A host with the detached server ready, once the host saw the grandchild escape. */
async function startDetached(t, { orphaned = false } = {}) {
  const marker = uniqueMarker('escape')
  const procs = new MarkedProcesses(marker)
  t.after(() => procs.killAll())
  const ctx = newHost(t)
  const id = await ctx.host.addServer({ name: 'detached', config: markedDetachedConfig(marker, { orphaned }) })
  await waitState(ctx.host, id, 'ready')
  assert.match(await callText(ctx.host, id, 'echo', { message: 'x' }), /x/)
  const { grandchild } = await waitDetached(procs, { orphaned })
  return { ...ctx, id, procs, grandchild }
}

test('a setsid grandchild is gone after a stop request', async (t) => {
  const { host, id, procs } = await startDetached(t)
  const echo = host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'escape', clientSeq: 1 })
  assert.equal(echo.rejectionReason, undefined)
  await waitState(host, id, 'stopped', { timeout: GONE_WITHIN_MS })
  await procs.waitGone(GONE_WITHIN_MS)
})

test('a setsid grandchild is gone after dispose()', async (t) => {
  const { host, procs } = await startDetached(t)
  await host.dispose()
  assert.equal(host.processCount, 0)
  await procs.waitGone(GONE_WITHIN_MS)
})

test('a setsid grandchild is gone after disposeSync()', async (t) => {
  const { host, procs } = await startDetached(t)
  host.disposeSync()
  await procs.waitGone(GONE_WITHIN_MS)
})

test('a double-forked grandchild (orphaned at once) is gone after a stop request', async (t) => {
  const { host, id, procs } = await startDetached(t, { orphaned: true })
  const echo = host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'escape', clientSeq: 1 })
  assert.equal(echo.rejectionReason, undefined)
  await waitState(host, id, 'stopped', { timeout: GONE_WITHIN_MS })
  await procs.waitGone(GONE_WITHIN_MS)
})

test('a double-forked grandchild (orphaned at once) is gone after dispose()', async (t) => {
  const { host, procs } = await startDetached(t, { orphaned: true })
  await host.dispose()
  await procs.waitGone(GONE_WITHIN_MS)
})

test('a double-forked grandchild (orphaned at once) is gone after disposeSync()', async (t) => {
  const { host, procs } = await startDetached(t, { orphaned: true })
  host.disposeSync()
  await procs.waitGone(GONE_WITHIN_MS)
})

test('the host names the escaped grandchild in a host.process log', async (t) => {
  const { logs, grandchild } = await startDetached(t)
  await waitFor(() => logs.some((l) => l.target === 'host.process' && l.message.includes(`process ${grandchild} `)),
    { what: 'a host.process log naming the grandchild', describe: () => JSON.stringify(logs.filter((l) => l.target.startsWith('host.'))) })
})

const endings = {
  sigkill: 'the Node process is SIGKILLed',
  'process-exit': 'process.exit(0) without dispose',
  'natural-exit': 'the Node process exits normally without dispose',
  // The watchdog finds it by its mark: no walk ever saw it.
  'orphan-sigkill': 'the Node process is SIGKILLed, though it was orphaned at once by a double fork',
}
for (const [name, ending] of Object.entries(endings)) {
  const orphaned = name.startsWith('orphan-')
  const mode = orphaned ? name.slice('orphan-'.length) : name
  test(`a setsid grandchild is gone after ${ending}`, async (t) => {
    const marker = uniqueMarker('escchild')
    const procs = new MarkedProcesses(marker)
    t.after(() => procs.killAll())
    const child = spawn(NODE, [join(FIXTURES, 'host-child.mjs'), mode], {
      env: { ...process.env, AHP_TEST_MARKER: marker, AHP_TEST_DATA: tmpDir(t, 'ahp-mcp-host-child-data-'), AHP_TEST_DETACHED: orphaned ? 'orphan' : '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    t.after(() => killChild(child, 'SIGKILL'))
    child.stdin.on('error', () => {})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
    const output = () => `child stdout: ${stdout}\nchild stderr: ${stderr}`
    await waitFor(() => stdout.includes('READY'), { timeout: 30_000, what: 'child READY', describe: output })
    const { grandchild } = await waitDetached(procs, { orphaned })
    // The host told its watchdog about the grandchild once it logged it.
    if (!orphaned) await waitFor(() => stdout.includes(`ESCAPED process ${grandchild} `), { what: 'the host to see the grandchild', describe: output })
    if (mode === 'sigkill') child.kill('SIGKILL')
    else child.stdin.write('GO\n')
    const { code, signal } = await exit
    assert.deepEqual({ code, signal }, mode === 'sigkill' ? { code: null, signal: 'SIGKILL' } : { code: 0, signal: null }, output())
    await procs.waitGone(GONE_WITHIN_MS)
  })
}
