#!/usr/bin/env node
// The training run of the release addon's profile-guided optimization
// (scripts/build-addon.js, "PGO"): the quick scenarios of `npm run bench`
// (bench/figures.mjs: stdio and Streamable HTTP calls one at a time and 16
// in flight, a 1 MiB result, connects, 1003-tool listings and refreshes,
// the RSS run, a short soak, 5 servers at once) driven through the public
// JS API (bench/driver.mjs, client C) against the real benchmark servers,
// with the addon at `--addon` (NAPI_RS_NATIVE_LIBRARY_PATH) writing its
// LLVM profile into `--out` (LLVM_PROFILE_FILE, one `.profraw` per process,
// a scenario's named after it);
// then a breadth pass (`breadth()`, in a child of its own) over the rest of
// what apps call often, against the real server-everything over stdio:
// progress, AHP chat tool calls, resources, prompts, the session state,
// and lazy start from the tool cache with tool search (`lazyPass`, and
// `lazyPluginPass` at the scale of a plugin of 20 servers). Code
// no scenario runs is laid out as cold and optimized for size, so what the
// training leaves out runs unoptimized for speed.
//
//   node scripts/pgo-train.mjs --addon <instrumented .node> --out <dir>
//   node scripts/pgo-train.mjs --addon <any .node> --check   # the same run, no profile (.ci/run)
//
// Exits non-zero (naming the scenario) when a driver fails: a profile of a
// run that broke half-way would steer the optimizer wrong.

import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { runs } from '../bench/figures.mjs'
import { DRIVER, specFor, startHttpServer } from '../bench/specs.mjs'

/** One scenario may take this long (ms) with an instrumented addon before it is killed. */
const SCENARIO_TIMEOUT_MS = 5 * 60_000
/** Rounds of the breadth pass. */
const BREADTH_ROUNDS = 5
/** Servers of the lazy plugin pass, and its tools per server (bench/server.mjs: 3 + this). */
const LAZY_SERVERS = 20
const LAZY_EXTRA_TOOLS = 47
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

const { values: opts } = parseArgs({
  options: {
    addon: { type: 'string' },
    out: { type: 'string' },
    check: { type: 'boolean', default: false },
    breadth: { type: 'boolean', default: false }, // internal: the breadth pass, in the child
  },
})
if (opts.breadth) {
  await breadth()
  process.exit(0)
}
if (!opts.addon || (!opts.out && !opts.check)) {
  console.error('usage: node scripts/pgo-train.mjs --addon <file.node> (--out <dir> | --check)')
  process.exit(2)
}
const env = { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: resolve(opts.addon) }
if (opts.out) {
  mkdirSync(opts.out, { recursive: true })
  env.LLVM_PROFILE_FILE = join(resolve(opts.out), 'ahp-%p-%m.profraw')
}

const marker = `ahppgo${randomBytes(6).toString('hex')}`
const children = new Set()
process.on('exit', () => { for (const c of children) try { c.kill('SIGKILL') } catch {} })

/**
 * Runs `node <args>` with the training env (and `extraEnv`); rejects
 * (naming `what`) on a non-zero exit or the timeout.
 */
function runChild(args, what, stdio, extraEnv = {}) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { env: { ...env, ...extraEnv }, stdio })
    children.add(child)
    const timer = setTimeout(() => child.kill('SIGKILL'), SCENARIO_TIMEOUT_MS)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      children.delete(child)
      if (code === 0) done()
      else fail(new Error(`pgo-train: ${what} exited with ${code ?? signal}`))
    })
  })
}

/**
 * Runs one driver of client C. Its profile is named after the scenario
 * (`ahp-<id>-…`): scripts/build-addon.js lays out the code the `rss`
 * scenario ran side by side.
 */
function drive(run, spec) {
  const profile = opts.out ? { LLVM_PROFILE_FILE: join(resolve(opts.out), `ahp-${run.id}-%p-%m.profraw`) } : {}
  return runChild([DRIVER, 'C', JSON.stringify(spec)], `scenario ${run.id}`, ['ignore', 'ignore', 'inherit'], profile)
}

/** Runs this script's breadth pass in a child with the same addon and profile settings. */
function driveBreadth() {
  return runChild([fileURLToPath(import.meta.url), '--breadth'], 'the breadth pass', ['ignore', 'inherit', 'inherit'])
}

/** The package, as an app loads it (the addon from NAPI_RS_NATIVE_LIBRARY_PATH). */
function hostModule() {
  return createRequire(import.meta.url)('..')
}

/**
 * The breadth pass (in its own process, the addon from
 * NAPI_RS_NATIVE_LIBRARY_PATH): server-everything over stdio; every call
 * must succeed.
 */
async function breadth() {
  const { McpHost } = hostModule()
  const everything = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
  const dataDir = mkdtempSync(join(tmpdir(), 'ahp-pgo-'))
  const host = new McpHost({ dataDir, env: 'allowList' })
  try {
    const serverId = await host.addServer({ name: 'everything', config: { type: 'stdio', command: process.execPath, args: [everything, 'stdio'] } })
    await host.whenReady(serverId)
    const chat = 'ahp-chat:/pgo-train'
    for (let i = 0; i < BREADTH_ROUNDS; i++) {
      host.listTools()
      host.getState()
      await host.callTool({ serverId, name: 'echo', arguments: { message: `round ${i}` }, onProgress: () => {} })
      await host.callTool({ serverId, name: 'echo', arguments: { message: 'chat' }, chat, turnId: `turn-${i}`, toolCallId: `call-${i}` })
      await host.callTool({ serverId, name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 4 }, onProgress: () => {} })
      const [resource] = await host.listResources(serverId)
      if (resource) await host.readResource(serverId, resource.uri)
      await host.listResourceTemplates(serverId)
      const prompts = await host.listPrompts(serverId)
      const simple = prompts.find((p) => !p.arguments?.some((a) => a.required))
      if (simple) await host.getPrompt(serverId, simple.name)
    }
    host.toolDiagnostics()
  } finally {
    await host.dispose()
  }
  try {
    await lazyPass(dataDir, everything)
    await lazyPluginPass(join(dataDir, 'plugin'))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/**
 * Lazy start (issue 29): a cold lazy host lists server-everything once and
 * caches it; warm lazy hosts then publish it from the tool cache, search
 * and summarize it, and start the server with a call.
 */
async function lazyPass(dataDir, everything) {
  const { McpHost } = hostModule()
  const config = { type: 'stdio', command: process.execPath, args: [everything, 'stdio'] }
  for (let round = 0; round <= BREADTH_ROUNDS; round++) {
    const host = new McpHost({ dataDir, env: 'allowList', start: 'lazy' })
    try {
      const serverId = await host.addServer({ name: 'everything', config })
      if (round === 0) await host.whenReady(serverId)
      else if (host.processCount !== 0) throw new Error('pgo-train: the lazy server started before its first call (no tool cache?)')
      const [hit] = host.searchTools('echo message', { limit: 5 })
      if (!hit) throw new Error('pgo-train: searchTools found no echo tool')
      host.listToolSummaries()
      if (hit) host.getToolDefinitions([hit.name])
      await host.callTool({ serverId, name: 'echo', arguments: { message: `lazy ${round}` } })
      host.getState()
    } finally {
      await host.dispose()
    }
  }
}

/**
 * Lazy start at the scale of issue 29's bench (bench/scale.mjs), smaller:
 * a plugin of LAZY_SERVERS bench servers (1,000 tools) listed once cold,
 * then published from the tool cache by BREADTH_ROUNDS warm hosts, each
 * searching, summarizing and calling one tool. The per-tool and per-server
 * code of that path then runs thousands of times, as much as the call path
 * of the scenarios: code that runs a handful of times only is laid out with
 * the cold code, scattered, and a host with a hundred lazy servers would page
 * in most of the addon to publish their cached tools.
 */
async function lazyPluginPass(dir) {
  const { McpHost } = hostModule()
  const root = join(dir, 'lazy-plugin')
  const dataDir = join(dir, 'data')
  mkdirSync(root, { recursive: true })
  const mcpServers = {}
  const tag = `ahppgo${randomBytes(6).toString('hex')}` // names the servers' processes (ps), as the scenarios' marker does
  for (let i = 0; i < LAZY_SERVERS; i++) {
    const args = [join(ROOT, 'bench', 'server.mjs'), 'stdio', '--tools', String(LAZY_EXTRA_TOOLS), `s${i}`, tag]
    mcpServers[`s${i}`] = { type: 'stdio', command: process.execPath, args }
  }
  writeFileSync(join(root, 'mcp.json'), JSON.stringify({ mcpServers }))
  for (let round = 0; round <= BREADTH_ROUNDS; round++) {
    const host = new McpHost({ dataDir, env: 'allowList', start: 'lazy' })
    const cached = []
    host.on('toolsChanged', (e) => { if (e.reason === 'cached') cached.push(e.serverId) })
    try {
      const plugin = await host.addPlugin({ root, name: 'lazy' })
      if (round === 0) {
        await host.whenReady(plugin.servers) // then dispose() waits for the tool cache writes
        continue
      }
      const until = Date.now() + SCENARIO_TIMEOUT_MS
      while (cached.length < LAZY_SERVERS && Date.now() < until) await new Promise((r) => setTimeout(r, 5))
      if (cached.length !== LAZY_SERVERS) throw new Error(`pgo-train: ${cached.length} of ${LAZY_SERVERS} lazy servers published cached tools`)
      for (const query of ['echo message', 'filler tool', 'touch']) host.searchTools(query, { limit: 10 })
      host.listToolSummaries()
      await host.callTool({ serverId: plugin.servers[round % LAZY_SERVERS], name: 'echo', arguments: { message: `lazy plugin ${round}` } })
    } finally {
      await host.dispose()
    }
  }
}

const scenarios = runs(true).filter((r) => !r.skipQuick)
const started = Date.now()
const http = await startHttpServer(marker, children)
try {
  for (const run of scenarios) await drive(run, specFor(run, http, marker))
} finally {
  http.stop()
}
await driveBreadth()
const what = opts.check ? 'checked' : `profiled into ${opts.out}`
console.error(`pgo-train: ${scenarios.length} scenarios and the breadth pass ${what} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
