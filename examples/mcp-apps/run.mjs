#!/usr/bin/env node
// `npm run apps [-- --serve] [--out <file.png>]`: an MCP App through the host,
// end to end, with the real MCP Apps example server
// (@modelcontextprotocol/server-basic-vanillajs, this folder's mcp.json).
//
// 1. An McpHost told that its AHP client renders Apps (`mcpApps: true`)
//    starts the server; its customization gets `mcpApp.capabilities` and an
//    `mcp://` `channel`.
// 2. An AHP chat tool call to the App tool `get-time`; its
//    `chat/toolCallComplete` carries `_meta.ui.resourceUri`.
// 3. The host page (host-page.mjs: ext-apps' AppBridge, served on
//    127.0.0.1) reads the View over the channel, renders it in a sandboxed
//    iframe, hands it the tool call's input and result, and routes whatever
//    the View asks of the server over the channel.
// 4. Default: headless Chromium opens the page, clicks the View's
//    "Get Server Time" (a `tools/call` over the channel), writes a
//    screenshot and prints its path. `--serve`: prints the page's URL and
//    serves it until Ctrl-C, for a person to open in a browser.

import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  ChannelLink, appOfToolCall, bundleHostPage, findServer, launchChromium, openHostPage, serveHostPage,
  viewFrame, viewTime,
} from './host-page.mjs'

const require = createRequire(import.meta.url)
const here = dirname(fileURLToPath(import.meta.url))
const { McpHost } = require(join(here, '..', '..', 'index.js'))

const USAGE = 'usage: npm run apps [-- --serve] [--out <file.png>]'
const CHAT = 'ahp-chat:/mcp-apps-example'
const TOOL = 'get-time'

function parseArgs(argv) {
  const opts = { serve: false, out: join(tmpdir(), 'ahp-mcp-host-app-view.png') }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--serve') opts.serve = true
    else if (argv[i] === '--out' && argv[i + 1]) opts.out = resolve(argv[++i])
    else throw new Error(`unknown argument ${argv[i]}\n${USAGE}`)
  }
  return opts
}

/** Resolves the server's customization once it is ready with mcpApp and channel. */
function appServer(host, serverId, timeoutMs = 60_000) {
  const check = () => {
    const s = findServer(host.getState(), serverId)
    if (s?.state.kind === 'error') throw new Error(`${serverId} failed: ${s.state.error.message}`)
    return s?.state.kind === 'ready' && s.mcpApp && s.channel ? s : undefined
  }
  return new Promise((resolvePromise, reject) => {
    const done = (fn) => { clearTimeout(timer); host.off('action', onAction); fn() }
    const onAction = () => {
      try {
        const s = check()
        if (s) done(() => resolvePromise(s))
      } catch (err) { done(() => reject(err)) }
    }
    const timer = setTimeout(() => done(() => reject(new Error(`${serverId} did not become ready with mcpApp and channel in ${timeoutMs} ms`))), timeoutMs)
    host.on('action', onAction)
    onAction()
  })
}

/** Makes the AHP chat tool call; resolves its `chat/toolCallComplete`. */
async function appToolCall(host, serverId) {
  const call = { chat: CHAT, turnId: 'turn-1', toolCallId: 'call-1' }
  let complete
  const onAction = (e) => {
    if (e.channel === CHAT && e.action.type === 'chat/toolCallComplete' && e.action.toolCallId === call.toolCallId) complete = e.action
  }
  host.on('action', onAction)
  try {
    await host.callTool({ serverId, name: TOOL, arguments: {}, ...call })
    // Events and the call's promise travel separately: wait for the action.
    for (let i = 0; !complete && i < 400; i++) await new Promise((r) => setTimeout(r, 25))
  } finally {
    host.off('action', onAction)
  }
  if (!complete) throw new Error('no chat/toolCallComplete for the tool call')
  return complete
}

/** One line per channel message: → page to host, ← host to page. */
function printTraffic({ dir, message: m }) {
  const what = m.method ?? `response ${m.id}${m.error ? ` error ${m.error.code}: ${m.error.message}` : ''}`
  console.log(`  channel ${dir === 'toHost' ? '→' : '←'} ${what}${m.method && m.id !== undefined ? ` (id ${m.id})` : ''}`)
}

async function screenshot(link, app, served, out) {
  const browser = await launchChromium()
  try {
    const page = await openHostPage(browser, { url: served.url, link, app })
    const frame = await viewFrame(page)
    const first = await viewTime(frame)
    console.log(`the View shows the tool call's time: ${first}`)
    await frame.click('#get-time-btn')
    const second = await viewTime(frame, { differentFrom: first })
    console.log(`after "Get Server Time" (the View's tools/call over the channel): ${second}`)
    await page.screenshot({ path: out })
    console.log(`screenshot: ${out}`)
  } finally {
    await browser.close()
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  const host = new McpHost({ mcpApps: true, clientInfo: { name: 'ahp-mcp-host-apps-example', version: '0.1.0' } })
  host.on('log', (r) => { if (r.level === 'warn' || r.level === 'error') console.log(`  [${r.level}] ${r.serverId ?? r.target}: ${r.message}`) })
  let link
  let served
  try {
    const { servers: [serverId] } = await host.addPlugin({ root: here })
    const server = await appServer(host, serverId)
    console.log(`${serverId} hosts MCP Apps: mcpApp.capabilities ${JSON.stringify(server.mcpApp.capabilities)}, channel ${server.channel}`)
    const complete = await appToolCall(host, serverId)
    console.log(`AHP tool call ${TOOL}: chat/toolCallComplete _meta.ui ${JSON.stringify(complete._meta?.ui)}`)
    const app = appOfToolCall(host.getState(), { serverId, complete, toolInput: {} })
    link = new ChannelLink(host, app.channel, { onTraffic: printTraffic })
    served = await serveHostPage({ bundle: await bundleHostPage(), link, app })
    if (opts.serve) {
      console.log(`\nopen ${served.url} in a browser (serving on 127.0.0.1 until Ctrl-C)`)
      await new Promise((r) => { process.once('SIGINT', r); process.once('SIGTERM', r) })
    } else {
      await screenshot(link, app, served, opts.out)
    }
    return 0
  } finally {
    await served?.close()
    link?.close()
    await host.dispose()
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`${err.message ?? err}`)
    if (/Chromium/.test(err.message)) console.error('without a browser: npm run apps -- --serve, then open the printed URL')
    process.exit(1)
  },
)
