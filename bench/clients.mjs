// The JS clients of `npm run bench`, behind one small interface so every
// scenario (bench/scenarios.mjs) runs the same code for each:
//   A  = @modelcontextprotocol/sdk (v1) Client
//   A2 = @modelcontextprotocol/client (v2) Client
//   C  = this addon through its public JS API (McpHost, `require('..')`)
//   Cl = C with `protocol: 'legacy'` (no server/discover probe; listing only)
//   Cu = C with `limits.maxConcurrentLaunches: 256` (no launch queue; servers-20)
// Each is loaded with a dynamic import, so a driver process holds only the
// client it measures.
//
// makeClient(kind, spec) → { connect() → Conn, dispose() }
// Conn: { call(name, args) → CallToolResult, list() → Tool[] (every page),
//         onToolsChanged(cb), close() }
// spec: { transport: 'stdio' | 'http', command, args, env (stdio), url (http) }

import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The SDK clients (v1 and v2 share the shape of Client and transports). */
async function sdkClient(kind, spec) {
  const v1 = kind === 'A'
  const { Client, StreamableHTTPClientTransport } = v1
    ? { ...(await import('@modelcontextprotocol/sdk/client/index.js')), ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')) }
    : await import('@modelcontextprotocol/client')
  const { StdioClientTransport } = v1
    ? await import('@modelcontextprotocol/sdk/client/stdio.js')
    : await import('@modelcontextprotocol/client/stdio')
  const types = v1 ? await import('@modelcontextprotocol/sdk/types.js') : undefined
  async function connect() {
    const client = new Client({ name: `ahp-bench-${kind}`, version: '1.0.0' })
    const transport = spec.transport === 'stdio'
      ? new StdioClientTransport({ command: spec.command, args: spec.args, stderr: 'inherit' })
      : new StreamableHTTPClientTransport(new URL(spec.url))
    await client.connect(transport)
    const listeners = []
    const onChanged = () => { for (const cb of listeners) cb() }
    if (v1) client.setNotificationHandler(types.ToolListChangedNotificationSchema, onChanged)
    else client.setNotificationHandler('notifications/tools/list_changed', onChanged)
    return {
      call: (name, args) => client.callTool({ name, arguments: args }),
      async list() {
        const tools = []
        let cursor
        do {
          const r = await client.listTools(cursor ? { cursor } : undefined)
          tools.push(...r.tools)
          cursor = r.nextCursor
        } while (cursor)
        return tools
      },
      onToolsChanged: (cb) => listeners.push(cb),
      async close() {
        if (spec.transport === 'http') await transport.terminateSession?.().catch(() => {})
        await client.close()
      },
    }
  }
  return { connect, dispose: async () => {} }
}

/** The addon: one McpHost per driver process; a connection is an addServer. */
function hostClient(kind, spec) {
  const require = createRequire(import.meta.url)
  const { McpHost } = require(ROOT)
  const dataDir = mkdtempSync(join(tmpdir(), 'ahp-bench-data-'))
  // env 'allowList': stdio servers get a short environment, like the SDK's
  // StdioClientTransport default, so every client's servers boot alike.
  // Cu: C without the launch queue (maxConcurrentLaunches at its hard cap),
  // to show what the default queue of 8 costs when many servers start at once.
  const limits = kind === 'Cu' ? { maxConcurrentLaunches: 256 } : undefined
  const host = new McpHost({ dataDir, env: 'allowList', clientInfo: { name: 'ahp-bench-host', version: '1.0.0' }, limits })
  const protocol = kind === 'Cl' ? 'legacy' : 'auto'
  const config = spec.transport === 'stdio'
    ? { type: 'stdio', command: spec.command, args: spec.args }
    : { type: 'streamable-http', url: spec.url }
  let seq = 0
  async function connect() {
    const name = `bench-${++seq}`
    const id = await host.addServer({ name, config, startupTimeoutMs: 60_000, protocol })
    await host.whenReady(id)
    const listeners = []
    const sub = host.onToolsChanged((e) => {
      if (e.serverId === id && e.reason === 'listChanged') for (const cb of listeners) cb()
    })
    return {
      call: (name, args) => host.callTool({ serverId: id, name, arguments: args }),
      list: async () => host.listTools().filter((t) => t.customizationId === id),
      onToolsChanged: (cb) => listeners.push(cb),
      async close() {
        sub.dispose()
        await host.remove(id)
      },
    }
  }
  async function dispose() {
    await host.dispose()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return { connect, dispose }
}

/** A client of kind `A`, `A2`, `C`, `Cl` or `Cu` for `spec`'s server. */
export async function makeClient(kind, spec) {
  if (kind === 'A' || kind === 'A2') return sdkClient(kind, spec)
  if (kind === 'C' || kind === 'Cl' || kind === 'Cu') return hostClient(kind, spec)
  throw new Error(`unknown client ${kind}`)
}
