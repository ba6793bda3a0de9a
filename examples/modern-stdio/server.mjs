#!/usr/bin/env node
// A small MCP server on the official TypeScript SDK v2
// (`@modelcontextprotocol/server`): it speaks MCP 2026-07-28 (stateless,
// `server/discover`) and, for older clients, the 2025-era `initialize`
// handshake. Tools: `add({a, b})` and `echo({message})`.

import { McpServer } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import * as z from 'zod'

serveStdio(() => {
  const server = new McpServer(
    { name: 'modern-example', title: 'Modern example', version: '1.0.0' },
    { capabilities: { tools: {} }, instructions: 'Use add for sums and echo to repeat text.' },
  )
  server.registerTool(
    'add',
    { title: 'Add', description: 'Adds two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }), annotations: { readOnlyHint: true } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  )
  server.registerTool(
    'echo',
    { title: 'Echo', description: 'Repeats text', inputSchema: z.object({ message: z.string() }), annotations: { readOnlyHint: true } },
    async ({ message }) => ({ content: [{ type: 'text', text: message }] }),
  )
  return server
})
