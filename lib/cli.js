'use strict'
// `ahp-mcp-host run <plugin dir>… [--json] [--verbose] [--mcp-apps] [--timeout-ms N]
// [--call <tool> [--args <json>]]`: start every MCP server of the given Agent
// Plugins folders, print the AHP action stream and each ready server's
// tools, call tools (see below), then stop.
//
// Which tools are called: by default, per ready server, one tool its server
// annotated read-only (MCP tool annotations: `readOnlyHint: true`, and not
// `destructiveHint: true`) that needs no arguments (`echo` gets a message),
// and none at all when the server has no such tool: a destructive or
// unannotated tool is never called by default. With `--call <tool>` only
// that tool is called (its catalogue name `mcp__…`, or the server's tool
// name when one ready server has it), with the JSON object of `--args`
// (default `{}`).

const path = require('node:path')
const { McpHost } = require('../index.js')

const USAGE = `usage: ahp-mcp-host run <plugin dir>... [--json] [--verbose] [--mcp-apps] [--timeout-ms N] [--call <tool> [--args <json>]]

  Starts every MCP server of the given plugin folders, prints the AHP action
  stream and each ready server's tools, calls tools, then stops them.

  --json          one JSON object per line
  --verbose       also info and debug log records
  --mcp-apps      act as an AHP client that declared capabilities.mcpApps
  --timeout-ms N  how long to wait for the servers to settle (default 60000)
  --call <tool>   call only this tool: its catalogue name (mcp__<server>__<tool>)
                  or its name on the server (when one ready server has it)
  --args <json>   the arguments of --call, a JSON object (default {})

  Without --call, each ready server gets at most one call, of a tool it
  annotated read-only (readOnlyHint: true) that needs no arguments (echo gets
  a message). Destructive and unannotated tools are never called by default.`

function parseArgs(argv) {
  const opts = { dirs: [], json: false, verbose: false, mcpApps: false, timeoutMs: 60_000, call: null, args: undefined, help: false }
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') return { ...opts, help: true }
  if (command === undefined) throw new Error(`missing command: the command is run\n${USAGE}`)
  if (command !== 'run') throw new Error(`unknown command ${JSON.stringify(command)}: the command is run\n${USAGE}`)
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]
    if (a === '--json') opts.json = true
    else if (a === '--verbose') opts.verbose = true
    else if (a === '--mcp-apps') opts.mcpApps = true
    else if (a === '--timeout-ms') {
      opts.timeoutMs = Number(rest[++i])
      if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs <= 0) throw new Error(`--timeout-ms needs a positive integer (ms)\n${USAGE}`)
    }
    else if (a === '--help' || a === '-h') opts.help = true
    else if (a === '--call') {
      opts.call = rest[++i]
      if (!opts.call) throw new Error(`--call needs a tool name\n${USAGE}`)
    }
    else if (a === '--args') opts.args = parseToolArgs(rest[++i])
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}\n${USAGE}`)
    else opts.dirs.push(a)
  }
  if (opts.help) return opts
  if (opts.args !== undefined && opts.call === null) throw new Error(`--args needs --call <tool>\n${USAGE}`)
  if (opts.dirs.length === 0) throw new Error(`run needs at least one plugin folder\n${USAGE}`)
  return opts
}

/** The JSON object of `--args`. */
function parseToolArgs(text) {
  let args
  try {
    args = JSON.parse(text ?? '')
  } catch (err) {
    throw new Error(`--args needs a JSON object: ${err.message}\n${USAGE}`)
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new Error(`--args needs a JSON object\n${USAGE}`)
  return args
}

/** `1 tool`, `3 tools`. */
function plural(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

// The tools per server of the last catalogue `describeAction` printed.
let lastCatalogue = new Map()

/** Tools per server (`_meta["ahp-mcp-host/source"].customizationId`) of a published catalogue. */
function toolsPerServer(tools) {
  const counts = new Map()
  for (const t of tools) {
    const id = t._meta?.['ahp-mcp-host/source']?.customizationId ?? '?'
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  return counts
}

/** What changed since the last catalogue printed: ` (+12 a/b, -3 c/d)`, or '' when no server's count did. */
function catalogueChange(tools) {
  const now = toolsPerServer(tools)
  const changes = []
  for (const id of new Set([...lastCatalogue.keys(), ...now.keys()])) {
    const d = (now.get(id) ?? 0) - (lastCatalogue.get(id) ?? 0)
    if (d !== 0) changes.push(`${d > 0 ? '+' : '-'}${Math.abs(d)} ${id}`)
  }
  lastCatalogue = now
  return changes.length > 0 ? ` (${changes.join(', ')})` : ''
}

function describeAction(envelope) {
  const a = envelope.action
  const seq = `#${String(envelope.serverSeq).padStart(3)}`
  const origin = envelope.origin ? ` (from ${envelope.origin.clientId}#${envelope.origin.clientSeq})` : ''
  const refused = envelope.rejectionReason ? ` REFUSED: ${envelope.rejectionReason}` : ''
  switch (a.type) {
    case 'session/customizationUpdated': {
      const c = a.customization
      if (c.type === 'plugin') {
        const load = c.load ? c.load.kind + (c.load.message ? `: ${c.load.message}` : '') : 'unknown'
        const children = (c.children ?? []).map((s) => (s.mcpApp ? `${s.name} [hosts MCP Apps]` : s.name)).join(', ') || 'none'
        return `${seq} plugin ${c.id} ${load} (servers: ${children})`
      }
      return `${seq} server ${c.id} added (${c.state.kind})`
    }
    case 'session/mcpServerStateChanged': {
      const s = a.state
      const detail = s.kind === 'error' ? ` [${s.error.errorType}] ${s.error.message}` : ''
      const channel = a.channel ? ` (channel ${a.channel})` : ''
      return `${seq} ${a.id} -> ${s.kind}${detail}${channel}${origin}${refused}`
    }
    case 'session/customizationRemoved':
      return `${seq} removed ${a.id}`
    case 'session/serverToolsChanged':
      return `${seq} tool catalogue published: ${plural(a.tools.length, 'tool')}${catalogueChange(a.tools)}`
    default:
      return `${seq} ${a.type} ${JSON.stringify(a)}${origin}${refused}`
  }
}

function serverStates(state) {
  const out = []
  for (const c of state.customizations ?? []) {
    if (c.type === 'mcpServer') out.push(c)
    for (const child of c.children ?? []) if (child.type === 'mcpServer') out.push(child)
  }
  return out
}

function waitUntilSettled(host, timeoutMs) {
  const settled = () => serverStates(host.getState()).every((s) => s.state.kind !== 'starting')
  return new Promise((resolve) => {
    if (settled()) return resolve(true)
    const onAction = () => {
      if (settled()) done(true)
    }
    const timer = setTimeout(() => done(false), timeoutMs)
    function done(ok) {
      clearTimeout(timer)
      host.off('action', onAction)
      resolve(ok)
    }
    host.on('action', onAction)
  })
}

/** Whether the server annotated `tool` read-only (and not destructive): only such tools are called by default. */
function readOnly(tool) {
  return tool.annotations?.readOnlyHint === true && tool.annotations?.destructiveHint !== true
}

/** Picks a read-only tool to demonstrate: `echo` if it is one, else one without required arguments; `null` if none. */
function pickTool(tools) {
  const safe = tools.filter(readOnly)
  const echo = safe.find((t) => t.toolName === 'echo')
  if (echo) return { tool: echo, args: { message: 'hello from ahp-mcp-host' } }
  const noArgs = safe.find((t) => !(t.inputSchema?.required?.length > 0))
  return noArgs ? { tool: noArgs, args: {} } : null
}

/** The tool `--call` names among `tools` (catalogue name, else a server's tool name found on exactly one server). */
function namedTool(tools, name) {
  const exact = tools.find((t) => t.name === name)
  if (exact) return exact
  const byToolName = tools.filter((t) => t.toolName === name)
  if (byToolName.length === 1) return byToolName[0]
  if (byToolName.length > 1) throw new Error(`--call ${name}: several servers have it; name one of ${byToolName.map((t) => t.name).join(', ')}`)
  throw new Error(`--call ${name}: no ready server has this tool`)
}

/** Calls `tool` with `args` and prints the outcome. */
async function callAndPrint(host, tool, args, { print, emit, json }) {
  const serverId = tool.customizationId
  try {
    const result = await host.callTool({ serverId, name: tool.toolName, arguments: args })
    if (json) emit('call', { serverId, tool: tool.toolName, result })
    else {
      const text = result.content.filter((b) => b.type === 'text').map((b) => b.text).join(' ')
      print(`  call ${tool.toolName}(${JSON.stringify(args)}) -> ${text || JSON.stringify(result)}`)
    }
    return true
  } catch (err) {
    if (json) emit('call', { serverId, tool: tool.toolName, error: { code: err.code, message: err.message } })
    else print(`  call ${tool.toolName} failed: [${err.code}] ${err.message}`)
    return false
  }
}

/**
 * Runs the CLI on `argv` (without node and the script), writing to `out`
 * (anything with `write(text)`). Resolves with the exit code: 0 when at least
 * one server became ready (and a `--call` tool was found and answered), else
 * 1. Throws an Error whose message names the bad argument, then the usage
 * text, on bad usage (the bin exits 2).
 */
async function run(argv, out = process.stdout) {
  const opts = parseArgs(argv)
  if (opts.help) {
    out.write(USAGE + '\n')
    return 0
  }
  const print = (line) => out.write(line + '\n')
  const emit = (kind, payload) => out.write(JSON.stringify({ kind, ...payload }) + '\n')
  // --mcp-apps: act as an AHP client that declared capabilities.mcpApps (mcpApp and channel on App servers).
  const host = new McpHost({ clientInfo: { name: 'ahp-mcp-host-cli', version: '0.1.0' }, ...(opts.mcpApps ? { mcpApps: true } : {}) })
  const readyAtMs = new Map()
  const started = performance.now()
  host.on('action', (envelope) => {
    const a = envelope.action
    if (a.type === 'session/mcpServerStateChanged' && a.state.kind === 'ready' && !readyAtMs.has(a.id)) {
      readyAtMs.set(a.id, Math.round(performance.now() - started))
    }
    if (opts.json) emit('action', { envelope })
    else print(describeAction(envelope))
  })
  host.on('log', (record) => {
    if (!opts.verbose && (record.level === 'info' || record.level === 'debug')) return
    if (opts.json) emit('log', { record })
    else print(`  [${record.level}] ${record.serverId ?? record.target}: ${record.message}`)
  })
  try {
    for (const dir of opts.dirs) await host.addPlugin({ root: path.resolve(dir) })
    const allSettled = await waitUntilSettled(host, opts.timeoutMs)
    const elapsedMs = Math.round(performance.now() - started)
    const servers = serverStates(host.getState())
    const ready = servers.filter((s) => s.state.kind === 'ready')
    // `getState()` is ahead of the `action` events JS has been handed yet:
    // let those of every ready server arrive (at most 2 s) before the summary.
    for (let waited = 0; waited < 2000 && !ready.every((s) => readyAtMs.has(s.id)); waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const readyMs = Object.fromEntries(readyAtMs)
    const summary = { readyServers: ready.length, servers: servers.length, settledMs: elapsedMs, allSettled, readyMs }
    if (opts.json) emit('summary', summary)
    else {
      const settledText = allSettled ? `every server settled: ${elapsedMs} ms` : `gave up waiting after ${elapsedMs} ms (--timeout-ms)`
      print(`\n${ready.length} of ${servers.length} servers ready; from the first addPlugin to ${settledText}`)
      for (const [id, ms] of readyAtMs) print(`  ${id} ready after ${ms} ms`)
    }
    const tools = host.listTools()
    for (const server of ready) {
      const own = tools.filter((t) => t.customizationId === server.id)
      const info = host.serverInfo(server.id)
      const era = info ? `MCP ${info.protocolVersion} via ${info.handshake === 'discover' ? 'server/discover' : 'initialize'}` : 'MCP ?'
      const app = server.mcpApp ? { mcpApp: server.mcpApp, channel: server.channel } : {}
      if (opts.json) emit('tools', { serverId: server.id, protocolVersion: info?.protocolVersion, handshake: info?.handshake, tools: own.map((t) => t.toolName), ...app })
      else {
        print(`\n${server.id} (${era}): ${plural(own.length, 'tool')}\n  ${own.map((t) => t.toolName).join('\n  ')}`)
        if (server.mcpApp) print(`  hosts MCP Apps: mcpApp.capabilities ${JSON.stringify(server.mcpApp.capabilities)}, channel ${server.channel ?? 'none'}`)
      }
      if (opts.call !== null) continue
      const pick = pickTool(own)
      if (pick) await callAndPrint(host, pick.tool, pick.args, { print, emit, json: opts.json })
      else if (opts.json) emit('call', { serverId: server.id, skipped: 'no read-only tool without required arguments' })
      else if (own.length > 0) print('  no tool annotated read-only (readOnlyHint) without required arguments: none called (name one with --call)')
    }
    let called = true
    if (opts.call !== null) {
      const readyIds = new Set(ready.map((s) => s.id))
      let tool
      try {
        tool = namedTool(tools.filter((t) => readyIds.has(t.customizationId)), opts.call)
      } catch (err) {
        if (opts.json) emit('call', { tool: opts.call, error: { code: 'not_found', message: err.message } })
        else print(`\n${err.message}`)
      }
      if (!opts.json && tool) print(`\n${tool.customizationId}:`)
      called = tool ? await callAndPrint(host, tool, opts.args ?? {}, { print, emit, json: opts.json }) : false
    }
    if (!opts.json) print('\nstopping…')
    // Exit status: 0 when at least one server became ready (and a --call
    // tool was found and answered), 1 otherwise.
    return ready.length > 0 && called ? 0 : 1
  } finally {
    await host.dispose()
  }
}

module.exports = { run, parseArgs, describeAction, readOnly, USAGE }
