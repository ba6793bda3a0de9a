'use strict'
// `ahp-mcp-host run <plugin dir>… [--json] [--verbose] [--mcp-apps]`: start every MCP
// server of the given Agent Plugins folders, print the AHP action stream,
// each ready server's tools and one tool call per ready server, then stop.

const path = require('node:path')
const { McpHost } = require('../index.js')

const USAGE = 'usage: ahp-mcp-host run <plugin dir>... [--json] [--verbose] [--mcp-apps] [--timeout-ms N]'

function parseArgs(argv) {
  const opts = { dirs: [], json: false, verbose: false, mcpApps: false, timeoutMs: 60_000 }
  const [command, ...rest] = argv
  if (command !== 'run') throw new Error(USAGE)
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]
    if (a === '--json') opts.json = true
    else if (a === '--verbose') opts.verbose = true
    else if (a === '--mcp-apps') opts.mcpApps = true
    else if (a === '--timeout-ms') {
      opts.timeoutMs = Number(rest[++i])
      if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs <= 0) throw new Error(`--timeout-ms needs a positive integer (ms)\n${USAGE}`)
    }
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}\n${USAGE}`)
    else opts.dirs.push(a)
  }
  if (opts.dirs.length === 0) throw new Error(USAGE)
  return opts
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
      return `${seq} tool catalogue published: ${a.tools.length} tools`
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

/** Picks a tool to demonstrate: `echo` if present, else one without required arguments. */
function pickTool(tools) {
  const echo = tools.find((t) => t.toolName === 'echo')
  if (echo) return { tool: echo, args: { message: 'hello from ahp-mcp-host' } }
  const noArgs = tools.find((t) => !(t.inputSchema?.required?.length > 0))
  return noArgs ? { tool: noArgs, args: {} } : null
}

async function run(argv, out = process.stdout) {
  const opts = parseArgs(argv)
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
        print(`\n${server.id} (${era}): ${own.length} tools\n  ${own.map((t) => t.toolName).join('\n  ')}`)
        if (server.mcpApp) print(`  hosts MCP Apps: mcpApp.capabilities ${JSON.stringify(server.mcpApp.capabilities)}, channel ${server.channel ?? 'none'}`)
      }
      const pick = pickTool(own)
      if (!pick) continue
      try {
        const result = await host.callTool({ serverId: server.id, name: pick.tool.toolName, arguments: pick.args })
        if (opts.json) emit('call', { serverId: server.id, tool: pick.tool.toolName, result })
        else {
          const text = result.content.filter((b) => b.type === 'text').map((b) => b.text).join(' ')
          print(`  call ${pick.tool.toolName}(${JSON.stringify(pick.args)}) -> ${text || JSON.stringify(result)}`)
        }
      } catch (err) {
        if (opts.json) emit('call', { serverId: server.id, tool: pick.tool.toolName, error: { code: err.code, message: err.message } })
        else print(`  call ${pick.tool.toolName} failed: [${err.code}] ${err.message}`)
      }
    }
    if (!opts.json) print('\nstopping…')
    // Exit status: 0 when at least one server became ready, 1 otherwise.
    return ready.length > 0 ? 0 : 1
  } finally {
    await host.dispose()
  }
}

module.exports = { run, parseArgs, describeAction }
