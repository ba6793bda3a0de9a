// The node half of the MCP Apps host page, shared by `npm run apps`
// (examples/mcp-apps/run.mjs) and the browser test
// (__test__/apps-browser.test.mjs).
//
// The page (host-page.browser.js, bundled here with ext-apps' AppBridge)
// renders an App's View in a sandboxed iframe and sends every message the
// View means for the MCP server as an MCP JSON-RPC message with a top-level
// `channel` to this process, which hands it to `host.sendChannelMessage`;
// the host's `channelMessage` events go back to the page. That is how an
// AHP client's renderer (a VS Code webview, say) talks to the process that
// holds the AHP connection: by postMessage, never to the server itself.
//
// Two page transports, one channel relay (`ChannelLink`):
// - puppeteer: `page.exposeFunction('ahpPost')` in, `page.evaluate` out
//   (`openHostPage`);
// - a person's browser: POST `channel` in, server-sent `events` out, under a
//   random secret path on 127.0.0.1 (`serveHostPage`).

import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const ROOT = join(here, '..', '..')

/** MIME type of an MCP App View (MCP Apps, `io.modelcontextprotocol/ui`). */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app'
/** Largest channel message the page may POST (bytes); the host has its own bound. */
const MAX_POST_BYTES = 8 * 1024 * 1024

// ─── the App to render ───────────────────────────────────────────────────────

/** Finds a server customization (top-level or a plugin's child) by id. */
export function findServer(state, id) {
  for (const c of state.customizations ?? []) {
    if (c.id === id) return c
    for (const child of c.children ?? []) if (child.id === id) return child
  }
  return undefined
}

/**
 * The MCP `CallToolResult` a View gets (`ui/notifications/tool-result`),
 * made back from the AHP `ToolCallResult` of `chat/toolCallComplete`: the
 * client has the AHP action, not the MCP message. Text, images and audio,
 * resource links and `structuredContent` come back as they were; AHP-only
 * content (file edits, terminals, sub-agents) has no MCP form and is left out.
 */
export function callToolResultOf(result) {
  const content = []
  for (const block of result.content ?? []) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text })
    else if (block.type === 'embeddedResource') {
      const kind = /^(image|audio)\//.exec(block.contentType)?.[1]
      content.push(kind
        ? { type: kind, data: block.data, mimeType: block.contentType }
        : { type: 'resource', resource: { uri: 'ahp:embedded', mimeType: block.contentType, blob: block.data } })
    } else if (block.type === 'resource') {
      content.push({ type: 'resource_link', uri: block.uri, name: block.uri, ...(block.contentType ? { mimeType: block.contentType } : {}) })
    }
  }
  return {
    content,
    ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
    ...(result.success ? {} : { isError: true }),
  }
}

/**
 * What the page needs to render the App of one AHP tool call, from the
 * host's state and the call's `chat/toolCallComplete` (`complete`): the
 * contributor's `mcpApp.capabilities` and `channel`, the call's
 * `_meta.ui.resourceUri`, its input and its result. Throws when the call is
 * not an App call of a server that hosts Apps right now.
 */
export function appOfToolCall(state, { serverId, complete, toolInput, hostInfo }) {
  const server = findServer(state, serverId)
  if (!server) throw new Error(`no server ${serverId}`)
  if (!server.mcpApp) throw new Error(`${serverId} has no mcpApp: it does not host MCP Apps (is mcpApps set?)`)
  if (!server.channel) throw new Error(`${serverId} has no channel (state ${server.state?.kind})`)
  const resourceUri = complete?._meta?.ui?.resourceUri
  if (typeof resourceUri !== 'string') throw new Error('the tool call carries no _meta.ui.resourceUri: not an App tool call')
  return {
    serverId,
    channel: server.channel,
    resourceUri,
    hostInfo: hostInfo ?? { name: 'ahp-mcp-host example page', version: '0.1.0' },
    hostCapabilities: server.mcpApp.capabilities,
    toolInput: toolInput ?? {},
    toolResult: callToolResultOf(complete.result),
  }
}

// ─── the page ────────────────────────────────────────────────────────────────

/** The page's HTML (loads `host-page.js` from the same directory). */
export function hostPageHtml(title = 'MCP App via ahp-mcp-host') {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>
  body { font: 14px system-ui, sans-serif; margin: 16px; background: #f4f4f6; }
  #status { color: #555; margin: 0 0 8px; }
  #view { width: 100%; min-height: 320px; border: 1px solid #ccc; border-radius: 6px; background: #fff; }
</style>
</head>
<body>
<h1 style="font-size:16px">${title}</h1>
<p id="status">waiting for the App…</p>
<div id="app"></div>
<script type="module" src="host-page.js"></script>
</body>
</html>
`
}

/**
 * Bundles the page's script (host-page.browser.js with ext-apps' AppBridge)
 * for the browser with esbuild; returns the bundle's text.
 */
export const bundleHostPage = () => bundleBrowserEntry(join(here, 'host-page.browser.js'))

/** Bundles one browser entry module (ESM, es2022) with esbuild; resolves its text. */
export async function bundleBrowserEntry(entry) {
  const { build } = await import('esbuild')
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    nodePaths: [join(ROOT, 'node_modules')],
  })
  return out.outputFiles[0].text
}

// ─── the channel relay ───────────────────────────────────────────────────────

/**
 * Relays one App's `mcp://` channel between a page and the host: `send`
 * stamps the channel on a message from the page and calls
 * `host.sendChannelMessage`; the host's `channelMessage` events for that
 * channel go to every listener. `traffic` records both directions
 * (`{dir: 'toHost' | 'fromHost', message}`), in order; `onTraffic(entry)`
 * sees each entry as it is recorded.
 */
export class ChannelLink {
  #host
  #listeners = new Set()
  #onMessage
  #record

  constructor(host, channel, { onTraffic } = {}) {
    this.#host = host
    this.channel = channel
    this.traffic = []
    this.#record = (entry) => {
      this.traffic.push(entry)
      onTraffic?.(entry)
    }
    this.#onMessage = (message) => {
      if (message?.channel !== this.channel) return
      this.#record({ dir: 'fromHost', message })
      for (const listener of this.#listeners) listener(message)
    }
    host.on('channelMessage', this.#onMessage)
  }

  /** Sends one JSON-RPC message of the page; a message for another channel is refused. */
  send(message) {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) throw new Error('a channel message is a JSON object')
    if (message.channel !== undefined && message.channel !== this.channel) throw new Error(`this page may only use ${this.channel}`)
    const stamped = { ...message, channel: this.channel }
    this.#record({ dir: 'toHost', message: stamped })
    this.#host.sendChannelMessage(stamped)
  }

  /** Calls `listener(message)` for each message the host sends on the channel; returns an unsubscribe. */
  onMessage(listener) {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** The recorded requests to the host with `method`, each with its response (once there). */
  exchanges(method) {
    const responses = new Map(this.traffic.filter((t) => t.dir === 'fromHost' && t.message.id !== undefined).map((t) => [t.message.id, t.message]))
    return this.traffic
      .filter((t) => t.dir === 'toHost' && t.message.method === method && t.message.id !== undefined)
      .map((t) => ({ request: t.message, response: responses.get(t.message.id) }))
  }

  close() {
    this.#host.off('channelMessage', this.#onMessage)
    this.#listeners.clear()
  }
}

// ─── HTTP on 127.0.0.1 ───────────────────────────────────────────────────────

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = []
    let size = 0
    req.on('data', (c) => {
      size += c.length
      if (size > MAX_POST_BYTES) {
        reject(Object.assign(new Error('body too large'), { status: 413 }))
        req.destroy()
      } else chunks.push(c)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

/**
 * Serves the page on 127.0.0.1 (a free port) under a random secret path:
 * `/` the HTML, `host-page.js` the bundle, `app.json` the App, POST
 * `channel` (JSON, one message → `link.send`) and `events` (server-sent
 * events: the host's messages on the channel). Resolves `{url, close}`.
 */
export async function serveHostPage({ bundle, link, app }) {
  const secret = randomBytes(16).toString('hex')
  const base = `/${secret}/`
  const streams = new Set()
  const unsubscribe = link.onMessage((message) => {
    for (const res of streams) res.write(`data: ${JSON.stringify(message)}\n\n`)
  })
  const send = (res, status, type, body) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
    res.end(body)
  }
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1')
    if (!url.pathname.startsWith(base)) return send(res, 404, 'text/plain', 'not found')
    const route = `${req.method} ${url.pathname.slice(base.length)}`
    try {
      if (route === 'GET ') return send(res, 200, 'text/html; charset=utf-8', hostPageHtml())
      if (route === 'GET host-page.js') return send(res, 200, 'text/javascript; charset=utf-8', bundle)
      if (route === 'GET app.json') return send(res, 200, 'application/json', JSON.stringify(app))
      if (route === 'GET events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
        res.write(': channel open\n\n')
        streams.add(res)
        req.on('close', () => streams.delete(res))
        return undefined
      }
      if (route === 'POST channel') {
        // A JSON content type cannot be sent cross-origin without a preflight, which is never answered.
        if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return send(res, 415, 'text/plain', 'application/json only')
        link.send(JSON.parse(await readBody(req)))
        return send(res, 204, 'text/plain', '')
      }
      return send(res, 404, 'text/plain', 'not found')
    } catch (err) {
      return send(res, err.status ?? 400, 'text/plain', String(err.message ?? err))
    }
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address()
  return {
    url: `http://127.0.0.1:${port}${base}`,
    close: () => new Promise((resolve) => {
      unsubscribe()
      for (const res of streams) res.end()
      server.closeAllConnections?.()
      server.close(() => resolve())
    }),
  }
}

// ─── Chromium through puppeteer-core ─────────────────────────────────────────

/** Where the system's Chromium is: `CHROMIUM_PATH`, else the usual package paths; undefined if none. */
export function findChromium() {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome']
  return candidates.find((p) => p && existsSync(p))
}

/**
 * Launches the system's Chromium headless (puppeteer-core downloads no
 * browser). Rejects with a message saying why when there is none or it
 * does not start.
 */
export async function launchChromium() {
  const executablePath = findChromium()
  if (!executablePath) throw new Error('no Chromium found (looked at $CHROMIUM_PATH, /usr/bin/chromium, /usr/bin/chromium-browser, /usr/bin/google-chrome*); `bash .ci/run` installs the `chromium` package')
  const { default: puppeteer } = await import('puppeteer-core')
  const args = ['--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check']
  // Chromium's own sandbox needs an unprivileged user; as root it refuses to start without this.
  if (process.getuid?.() === 0) args.push('--no-sandbox')
  try {
    return await puppeteer.launch({ executablePath, headless: true, args, timeout: 60_000 })
  } catch (err) {
    throw new Error(`Chromium at ${executablePath} did not start: ${String(err.message).split('\n')[0].trim()}`)
  }
}

/**
 * Opens the served page in a new tab, wired to `link` by puppeteer (as a
 * webview to its extension host): the page's `ahpPost(message)` calls
 * `link.send`, each host message on the channel is delivered by
 * `page.evaluate(ahpReceive)` in order. Then renders `app`. Resolves the page.
 */
export async function openHostPage(browser, { url, link, app, onConsole }) {
  const page = await browser.newPage()
  await page.setViewport({ width: 900, height: 720 })
  if (onConsole) page.on('console', (m) => onConsole(m.type(), m.text()))
  await page.exposeFunction('ahpPost', (message) => link.send(message))
  let queue = Promise.resolve()
  link.onMessage((message) => {
    queue = queue.then(() => page.evaluate((m) => window.ahpReceive(m), message)).catch(() => {})
  })
  await page.goto(url, { waitUntil: 'load' })
  await page.evaluate((a) => window.ahpRender(a), app)
  return page
}

/** The View's frame (the iframe the page made), once it exists. */
export async function viewFrame(page) {
  const handle = await page.waitForSelector('#view', { timeout: 60_000 })
  const frame = await handle.contentFrame()
  if (!frame) throw new Error('the View iframe has no frame')
  return frame
}

/** Waits until the View shows a time (ISO 8601) in `#server-time`; resolves that text. */
export async function viewTime(frame, { differentFrom } = {}) {
  const handle = await frame.waitForFunction((previous) => {
    const text = document.querySelector('#server-time')?.textContent ?? ''
    return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(text) && text !== previous ? text : false
  }, { timeout: 60_000, polling: 50 }, differentFrom ?? null)
  return handle.jsonValue()
}
