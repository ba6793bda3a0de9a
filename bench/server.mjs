// Benchmark MCP server (official TypeScript SDK v1, low-level `Server`).
//
// Tools: `echo {message}` answers at once with text "echo:<message>";
// `big` answers with one text block of exactly 1 MiB (BIG_BYTES);
// `touch_tools` changes every tool's description (a new generation) and sends
// `notifications/tools/list_changed`. With `--tools 1000` (stdio) or the URL
// path `/mcp-1000` (HTTP) the list also has 1000 filler tools `tool_0000` …
// `tool_0999` with a small input schema: 1003 tools, else 3. The SDK does not
// paginate `tools/list` (neither the low-level `Server` nor `McpServer` sets
// `nextCursor`): the whole list comes back in one page.
//
// Usage:
//   node bench/server.mjs stdio [--tools N] [marker…]
//   node bench/server.mjs http  [marker…]   → prints `PORT <n>` on stdout once
//                                             listening on 127.0.0.1:<n>; serves
//                                             /mcp (3 tools) and /mcp-1000
// Other arguments are ignored (bench/run.mjs passes a process marker).

import { createServer } from 'node:http'
import { randomUUID } from 'node:crypto'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js'

export const EXTRA_TOOLS = 1000
export const BIG_BYTES = 1 << 20
const BIG_TEXT = 'x'.repeat(BIG_BYTES)

const BASE_TOOLS = [
  {
    name: 'echo',
    description: 'Echoes the message',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
  { name: 'big', description: `Answers with ${BIG_BYTES} bytes of text`, inputSchema: { type: 'object', properties: {} } },
  { name: 'touch_tools', description: 'Changes every description and sends tools/list_changed', inputSchema: { type: 'object', properties: {} } },
]

/** The tool list of generation `gen` with `extra` filler tools. */
function toolList(extra, gen) {
  const tools = BASE_TOOLS.map((t) => (gen ? { ...t, description: `${t.description} (gen ${gen})` } : t))
  for (let i = 0; i < extra; i++) {
    const n = String(i).padStart(4, '0')
    tools.push({
      name: `tool_${n}`,
      description: `Benchmark filler tool number ${n}${gen ? ` (gen ${gen})` : ''}`,
      inputSchema: {
        type: 'object',
        properties: { query: { type: 'string', description: 'what to look for' }, limit: { type: 'integer', minimum: 1 } },
        required: ['query'],
      },
    })
  }
  return tools
}

function newServer(extra) {
  const server = new Server({ name: 'ahp-bench', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
  let gen = 0
  let tools = toolList(extra, gen)
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const { name, arguments: args } = req.params
    if (name === 'echo') return { content: [{ type: 'text', text: `echo:${args?.message ?? ''}` }] }
    if (name === 'big') return { content: [{ type: 'text', text: BIG_TEXT }] }
    if (name === 'touch_tools') {
      tools = toolList(extra, ++gen)
      await server.sendToolListChanged()
      return { content: [{ type: 'text', text: `gen ${gen}` }] }
    }
    if (name.startsWith('tool_')) return { content: [{ type: 'text', text: 'ok' }] }
    throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`)
  })
  return server
}

const mode = process.argv[2]
if (mode === 'stdio') {
  const at = process.argv.indexOf('--tools')
  await newServer(at > 0 ? Number(process.argv[at + 1]) : 0).connect(new StdioServerTransport())
} else if (mode === 'http') {
  // Stateful Streamable HTTP: one SDK `Server` + transport per session.
  const sessions = new Map()
  const http = createServer(async (req, res) => {
    try {
      if (!req.url.startsWith('/mcp')) {
        res.writeHead(404).end()
        return
      }
      const sid = req.headers['mcp-session-id']
      let transport = sid ? sessions.get(sid) : undefined
      if (!transport) {
        if (sid || req.method !== 'POST') {
          res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: sid ? 'unknown session' : 'no session' }, id: null }))
          return
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => sessions.set(id, transport),
        })
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId)
        }
        await newServer(req.url.startsWith('/mcp-1000') ? EXTRA_TOOLS : 0).connect(transport)
      }
      await transport.handleRequest(req, res)
    } catch (err) {
      process.stderr.write(`bench server: ${err?.stack ?? err}\n`)
      if (!res.headersSent) res.writeHead(500).end()
    }
  })
  http.keepAliveTimeout = 60_000
  http.listen(0, '127.0.0.1', () => {
    process.stdout.write(`PORT ${http.address().port}\n`)
  })
  const stop = () => {
    for (const t of sessions.values()) t.close().catch(() => {})
    http.close()
    http.closeAllConnections?.()
    setTimeout(() => process.exit(0), 200).unref()
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  // The parent (bench/run.mjs) holds our stdin; when it goes away, so do we.
  process.stdin.on('end', stop)
  process.stdin.on('error', stop)
  process.stdin.resume()
} else {
  process.stderr.write('usage: node bench/server.mjs stdio|http [marker…]\n')
  process.exit(2)
}
