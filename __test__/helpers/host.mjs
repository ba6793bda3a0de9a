// Shared helpers for the JS test suites: host construction with event
// recording and guaranteed disposal, condition-based waits, session-state
// lookups, /proc scanning for marked processes, and loopback networking.

import { createRequire } from 'node:module'
import { chmodSync, mkdtempSync, rmSync, mkdirSync, writeFileSync, readFileSync, readdirSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { spawn } from 'node:child_process'
import assert from 'node:assert/strict'

const require = createRequire(import.meta.url)
const here = dirname(fileURLToPath(import.meta.url))

export const ROOT = join(here, '..', '..')
export const { McpHost, HostError } = require(join(ROOT, 'index.js'))
export const FIXTURES = join(here, '..', 'fixtures')
export const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
export const NODE = process.execPath

/** A unique marker string for process accounting. */
export function uniqueMarker(prefix = 'ahpmark') {
  return `${prefix}${randomBytes(6).toString('hex')}`
}

/**
 * A fresh temporary directory, removed when the test ends. A host using it
 * as its `dataDir` may still be writing into it when this hook runs (its
 * own dispose hook can come later, and a connection that just started
 * writes its era memory, `protocol-eras.json`, as a temporary file then a
 * rename), so the removal retries (ENOTEMPTY) instead of failing the test
 * on a file created while the folder was being emptied.
 */
export function tmpDir(t, prefix = 'ahp-mcp-host-test-') {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }))
  return dir
}

/** Writes `<root>/mcp.json` (object → JSON, string → raw text) and returns root. */
/**
 * The JSON lines a fixture server appended to `file` so far ([] before it exists).
 * Only complete lines count: the server may be mid-write while the test reads,
 * so an unterminated last line is left for the next read.
 */
export function readJsonLines(file) {
  if (!existsSync(file)) return []
  const text = readFileSync(file, 'utf8')
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => JSON.parse(l))
}

export function writePlugin(root, mcp) {
  mkdirSync(root, { recursive: true })
  writeFileSync(join(root, 'mcp.json'), typeof mcp === 'string' ? mcp : JSON.stringify(mcp, null, 2))
  return root
}

/** mcp.json stdio entry running a fixture script with node. */
export function fixtureEntry(script, args = []) {
  return { type: 'stdio', command: NODE, args: [join(FIXTURES, script), ...args] }
}

/** mcp.json stdio entry running server-everything over stdio. */
export function everythingEntry(extraArgs = []) {
  return { type: 'stdio', command: NODE, args: [EVERYTHING, 'stdio', ...extraArgs] }
}

/**
 * Creates a host with a fresh tmp dataDir that records every action and log
 * and is disposed when the test ends (even when it fails).
 */
export function newHost(t, options = {}) {
  // A dataDir made here is removed after the host is disposed, in the same
  // hook: a running host holds its task-record lock file open there, which
  // Windows does not let go (after hooks run in the order they were added).
  const made = options.dataDir === undefined ? mkdtempSync(join(tmpdir(), 'ahp-mcp-host-data-')) : undefined
  const dataDir = options.dataDir ?? made
  const host = new McpHost({ ...options, dataDir })
  const actions = []
  const logs = []
  host.on('action', (a) => actions.push(a))
  host.on('log', (l) => logs.push(l))
  t.after(async () => {
    try {
      await host.dispose()
      // The host must not leave any process group behind.
      await waitFor(() => host.processCount === 0, { timeout: 15_000, what: 'processCount 0 after dispose' })
    } finally {
      if (made) rmSync(made, { recursive: true, force: true, maxRetries: 5 })
    }
  })
  return { host, actions, logs, dataDir }
}

/**
 * A dataDir the hosts of test `t` share: removed only once every host made
 * with `hostOn` (as {@link newHost}, on that dataDir) is disposed (after
 * hooks run in the order they were added, so a plain tmpDir would be
 * removed while a host still writes into it).
 */
export function sharedDataDir(t, prefix = 'ahp-shared-data-') {
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  const hosts = []
  t.after(async () => {
    for (const host of hosts) await host.dispose()
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 })
  })
  const hostOn = (options = {}) => {
    const made = newHost(t, { ...options, dataDir })
    hosts.push(made.host)
    return made
  }
  return { dataDir, hostOn }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
export { sleep }

/**
 * Polls `fn` until it returns a truthy value (returned) or `timeout` ms pass
 * (throws, with `describe()` output when given).
 */
export async function waitFor(fn, { timeout = 20_000, interval = 25, what = 'condition', describe } = {}) {
  const deadline = Date.now() + timeout
  let lastError
  for (;;) {
    try {
      const v = await fn()
      if (v) return v
    } catch (e) {
      lastError = e
    }
    if (Date.now() > deadline) {
      const extra = describe ? `\n${describe()}` : ''
      const err = new Error(`timed out after ${timeout} ms waiting for ${what}${lastError ? ` (last error: ${lastError.message})` : ''}${extra}`)
      throw err
    }
    await sleep(interval)
  }
}

/** Finds a customization (top-level or plugin child) by id in a session state. */
export function findCustomization(state, id) {
  for (const c of state.customizations ?? []) {
    if (c.id === id) return c
  }
  for (const c of state.customizations ?? []) {
    for (const child of c.children ?? []) {
      if (child.id === id) return child
    }
  }
  return undefined
}

/** The current `McpServerState` of server `id`, or undefined. */
export function serverState(host, id) {
  return findCustomization(host.getState(), id)?.state
}

/** Waits until server `id` is in state `kind`; returns that state. */
export async function waitState(host, id, kind, opts = {}) {
  return waitFor(() => {
    const s = serverState(host, id)
    return s?.kind === kind ? s : undefined
  }, {
    timeout: 30_000,
    what: `server ${id} to be ${kind}`,
    describe: () => `current state: ${JSON.stringify(serverState(host, id))}`,
    ...opts,
  })
}

/** `session/mcpServerStateChanged` states recorded for `id`, in order. */
export function stateHistory(actions, id) {
  return actions
    .filter((e) => e.action?.type === 'session/mcpServerStateChanged' && e.action.id === id)
    .map((e) => e.action.state)
}

/** Calls a fixture tool and returns the first text content. */
export async function callText(host, serverId, name, args = {}, extra = {}) {
  const r = await host.callTool({ serverId, name, arguments: args, ...extra })
  return r.content?.find((c) => c.type === 'text')?.text
}

// ─── process accounting through /proc ───────────────────────────────────────

function readProc(pid, file) {
  try {
    return readFileSync(`/proc/${pid}/${file}`)
  } catch {
    return undefined
  }
}

function procState(pid) {
  const stat = readProc(pid, 'stat')?.toString()
  if (!stat) return undefined
  // "pid (comm) S ..." — comm may contain spaces and parentheses.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
}

/**
 * Tracks processes whose command line contains `marker`. A zombie's cmdline
 * is empty, so every pid seen once is remembered and re-checked through
 * /proc/<pid>/stat. Never put the marker into this test process's argv.
 */
export class MarkedProcesses {
  constructor(marker) {
    this.marker = marker
    this.needles = [marker]
    this.seen = new Set()
  }

  /** Also tracks processes whose NUL-separated cmdline contains `needle`. */
  alsoTrack(needle) {
    this.needles.push(needle)
    return this
  }

  #matches(cmd) {
    const text = cmd.toString()
    return this.needles.some((n) => text.includes(n))
  }

  /** `{live, zombies}`: pids alive with the marker, and remembered pids now zombies. */
  scan() {
    const live = []
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue
      const cmd = readProc(name, 'cmdline')
      if (!cmd || !this.#matches(cmd)) continue
      const pid = Number(name)
      if (pid === process.pid) continue
      this.seen.add(pid)
    }
    const zombies = []
    for (const pid of this.seen) {
      const st = procState(pid)
      if (st === undefined) continue
      if (st === 'Z') {
        zombies.push(pid)
        continue
      }
      const cmd = readProc(pid, 'cmdline')
      if (cmd && this.#matches(cmd)) live.push(pid)
    }
    return { live, zombies }
  }

  /** Waits until no live and no zombie marked process remains. */
  async waitGone(timeout = 10_000) {
    let last
    try {
      await waitFor(() => {
        last = this.scan()
        return last.live.length === 0 && last.zombies.length === 0
      }, { timeout, interval: 50, what: `no process marked ${this.needles.map((n) => JSON.stringify(n)).join(' or ')}` })
    } catch (e) {
      e.message += `\nlive: ${describePids(last.live)}\nzombies: ${describePids(last.zombies)}`
      throw e
    }
  }

  /** SIGKILLs every live marked process (test cleanup after a failure). */
  killAll() {
    for (const pid of this.scan().live) {
      try { process.kill(pid, 'SIGKILL') } catch {}
    }
  }
}

export function describePids(pids) {
  return pids.map((pid) => {
    const cmd = readProc(pid, 'cmdline')?.toString().replaceAll('\0', ' ').trim()
    const comm = readProc(pid, 'comm')?.toString().trim()
    const stat = readProc(pid, 'stat')?.toString() ?? ''
    const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]
    return `${pid}[${procState(pid)} ppid=${ppid} comm=${comm}] ${cmd ?? ''}`
  }).join('; ') || '(none)'
}

/** Whether a process with this pid exists and is not a zombie. */
export function pidAlive(pid) {
  const st = procState(pid)
  return st !== undefined && st !== 'Z'
}

// ─── loopback networking ─────────────────────────────────────────────────────

/** A free TCP port on 127.0.0.1 (bind :0, read, close). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

/** Waits until 127.0.0.1:port accepts a TCP connection. */
export async function waitAccepting(port, timeout = 20_000) {
  await waitFor(() => new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port })
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => { s.destroy(); resolve(false) })
  }), { timeout, interval: 100, what: `127.0.0.1:${port} to accept connections` })
}

/** Kills a spawned child (SIGTERM, then SIGKILL) and waits for its exit. */
export async function killChild(child, signal = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000)
  await exited
  clearTimeout(timer)
}

/** Runs `fn`, expecting a HostError with `code`; returns it. */
export async function rejectsWith(fn, code) {
  let err
  await assert.rejects(fn, (e) => {
    err = e
    return true
  })
  assert.ok(err instanceof HostError, `expected a HostError, got ${err}`)
  assert.equal(err.code, code, `expected code ${code}, got ${err.code}: ${err.message}`)
  return err
}

/**
 * Starts a fixture HTTP server script that prints `LISTENING <port>`, killed
 * when the test ends; resolves `{url: <base>/mcp, base, stats()}` (stats reads `GET /__stats`).
 */
export async function startHttpFixture(t, script, env = {}, args = []) {
  const child = spawn(NODE, [join(FIXTURES, script), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  t.after(() => child.kill('SIGTERM'))
  const port = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /LISTENING (\d+)/.exec(out)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
  })
  const base = `http://127.0.0.1:${port}`
  return { url: `${base}/mcp`, base, stats: async () => (await fetch(`${base}/__stats`)).json() }
}

/**
 * A stand-in for `npx` first on PATH while test `t` runs (the host looks a
 * bare command up in its own PATH at launch): `npx -y <args…>` runs `node
 * <args…>`, so a registry npm package can be a local script. POSIX only.
 */
export function fakeNpx(t) {
  const dir = tmpDir(t)
  const npx = join(dir, 'npx')
  writeFileSync(npx, `#!/bin/sh\nshift\nexec "${NODE}" "$@"\n`)
  chmodSync(npx, 0o755)
  const before = process.env.PATH
  process.env.PATH = `${dir}:${before}`
  t.after(() => { process.env.PATH = before })
}
