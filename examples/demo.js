#!/usr/bin/env node
'use strict'
// `npm run demo`: runs `ahp-mcp-host run` on the example plugins.
//
// - examples/everything-stdio: @modelcontextprotocol/server-everything over stdio
//   (TypeScript SDK v1: the 2025-era `initialize` handshake)
// - examples/modern-stdio: a server on the TypeScript SDK v2, spoken to with
//   MCP 2026-07-28 (stateless, `server/discover`)
// - examples/everything-http:  the same server in Streamable HTTP mode. This
//   script starts it on a free 127.0.0.1 port and runs a copy of the plugin
//   whose mcp.json points at that port (the committed file says 3001).
// - examples/mcp-apps: the MCP Apps example server
//   (@modelcontextprotocol/server-basic-vanillajs, stdio); the demo runs the
//   CLI with --mcp-apps, so its customization shows `mcpApp` and its `mcp://`
//   channel (`npm run apps` renders its View in Chromium).
// - examples/broken: one invalid entry (skipped: plugin `degraded`) and one
//   whose command does not exist (`error`), while the others keep working.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { run } = require('../lib/cli.js')

const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

async function waitForPort(port, child, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`HTTP server exited with code ${child.exitCode}`)
    const ok = await new Promise((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => { s.end(); resolve(true) })
      s.once('error', () => resolve(false))
    })
    if (ok) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`HTTP server did not listen on 127.0.0.1:${port}`)
}

async function main() {
  const port = await freePort()
  const http = spawn(process.execPath, [everything, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'ignore'],
  })
  let code = 1
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ahp-demo-'))
  try {
    await waitForPort(port, http)
    const httpPlugin = path.join(tmp, 'everything-http')
    fs.mkdirSync(httpPlugin)
    const config = fs.readFileSync(path.join(__dirname, 'everything-http', 'mcp.json'), 'utf8')
    fs.writeFileSync(path.join(httpPlugin, 'mcp.json'), config.replace('127.0.0.1:3001', `127.0.0.1:${port}`))
    const dirs = [path.join(__dirname, 'everything-stdio'), path.join(__dirname, 'modern-stdio'), httpPlugin, path.join(__dirname, 'mcp-apps'), path.join(__dirname, 'broken')]
    code = await run(['run', ...dirs, '--mcp-apps', ...process.argv.slice(2)])
  } finally {
    http.kill('SIGTERM')
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  return code
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err.stack ?? err}\n`)
    process.exit(1)
  },
)
