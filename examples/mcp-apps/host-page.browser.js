// The browser half of the MCP Apps host page (bundled by host-page.mjs with
// esbuild, together with ext-apps' AppBridge). It plays the AHP client's
// renderer, as a VS Code webview would: it never talks to an MCP server
// itself. Every server-bound message of the View goes out as an MCP
// JSON-RPC message with a top-level `channel` (the customization's `mcp://`
// URI) through `post`, to the process that owns the McpHost
// (`host.sendChannelMessage`); what the host answers on the channel comes
// back through `window.ahpReceive` (`channelMessage` events).
//
// Two ways to reach that process:
// - puppeteer (tests, `npm run apps`): `window.ahpPost` is a function the
//   test process exposed; it pushes channel messages and the App to render
//   with `page.evaluate` (`ahpReceive`, `ahpRender`).
// - a person's browser (`npm run apps -- --serve`): POST `channel` and the
//   server-sent events of `events`, both under the page's secret path; the
//   App to render is `app.json`.

import { AppBridge, PostMessageTransport, buildAllowAttribute } from '@modelcontextprotocol/ext-apps/app-bridge'

const APP_MIME_TYPE = 'text/html;profile=mcp-app'

/** Pending channel requests of this page by JSON-RPC id. */
const pending = new Map()
let nextId = 0
let current
/** What the page did, for tests and for the person looking at it. */
const status = { phase: 'waiting', errors: [], sent: [], received: [] }
window.ahpStatus = status

function show(text) {
  const el = document.getElementById('status')
  if (el) el.textContent = text
}

function fail(err) {
  status.errors.push(String(err?.message ?? err))
  status.phase = 'failed'
  show(`failed: ${err?.message ?? err}`)
}

function post(message) {
  status.sent.push(message.method ?? `response ${message.id}`)
  if (typeof window.ahpPost === 'function') return window.ahpPost(message)
  return fetch('channel', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) })
    .then((r) => { if (!r.ok) throw new Error(`POST channel: HTTP ${r.status}`) })
}

/** A channel error response as a thrown error AppBridge answers the View with (same code, message, data). */
function channelError(error) {
  return Object.assign(new Error(error.message), { code: error.code, data: error.data })
}

/**
 * Sends a JSON-RPC request on the App's channel; resolves its result,
 * rejects with its error. When the View cancels it (`signal`), the host is
 * told with `notifications/cancelled` and the request is settled at once.
 */
function request(method, params, signal) {
  const id = `page-${++nextId}`
  return new Promise((resolve, reject) => {
    const settle = (fn) => (value) => {
      signal?.removeEventListener('abort', onAbort)
      fn(value)
    }
    const onAbort = () => {
      if (!pending.delete(id)) return
      notify('notifications/cancelled', { requestId: id, reason: String(signal.reason?.message ?? signal.reason ?? 'cancelled') })
      settle(reject)(Object.assign(new Error('cancelled by the View'), { code: -32800 }))
    }
    pending.set(id, { resolve: settle(resolve), reject: settle(reject) })
    signal?.addEventListener('abort', onAbort, { once: true })
    Promise.resolve(post({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }), channel: current.channel }))
      .catch((err) => { if (pending.delete(id)) settle(reject)(err) })
  })
}

function notify(method, params) {
  return post({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), channel: current.channel })
}

/** One message the host sent on a channel (a `channelMessage` event). */
window.ahpReceive = (message) => {
  if (!current || message.channel !== current.channel) return
  status.received.push(message.method ?? `response ${message.id}`)
  if (message.id !== undefined && (message.result !== undefined || message.error !== undefined)) {
    const waiter = pending.get(message.id)
    if (!waiter) return
    pending.delete(message.id)
    if (message.error) waiter.reject(channelError(message.error))
    else waiter.resolve(message.result)
    return
  }
  // Server notifications the host forwards (only those the capabilities advertise).
  if (message.method === 'notifications/tools/list_changed') current.bridge?.sendToolListChanged(message.params)
  else if (message.method === 'notifications/resources/list_changed') current.bridge?.sendResourceListChanged(message.params)
}

/**
 * The CSP the View runs under, from the resource's `_meta.ui.csp` (MCP Apps
 * "UI Resource Format"): nothing from the network unless the server
 * declared the origin; inline script and style (the View is one document).
 */
export function viewCsp(csp = {}) {
  const list = (xs) => (xs ?? []).filter((x) => typeof x === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^\s;,'"]+$/i.test(x)).join(' ')
  const resources = list(csp.resourceDomains)
  const src = (extra) => [extra, resources].filter(Boolean).join(' ')
  return [
    "default-src 'none'",
    `script-src ${src("'unsafe-inline'")}`,
    `style-src ${src("'unsafe-inline'")}`,
    `img-src ${src('data:')}`,
    `font-src ${src('data:')}`,
    `media-src ${src('data:')}`,
    `connect-src ${list(csp.connectDomains) || "'none'"}`,
    `frame-src ${list(csp.frameDomains) || "'none'"}`,
    `base-uri ${list(csp.baseUriDomains) || "'none'"}`,
  ].join('; ')
}

function withCsp(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${csp.replaceAll('"', '&quot;')}">`
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (h) => `${h}${meta}`) : `${meta}${html}`
}

/** The View's HTML, read on the channel (`resources/read` of the `ui://` URI). */
async function readView(uri) {
  const result = await request('resources/read', { uri })
  const content = result.contents?.find((c) => c.uri === uri) ?? result.contents?.[0]
  if (!content) throw new Error(`resources/read ${uri}: no contents`)
  if (content.mimeType !== APP_MIME_TYPE) throw new Error(`resources/read ${uri}: MIME type ${content.mimeType}, not ${APP_MIME_TYPE}`)
  const html = typeof content.text === 'string'
    ? content.text
    : new TextDecoder().decode(Uint8Array.from(atob(content.blob ?? ''), (c) => c.charCodeAt(0)))
  return { html, ui: content._meta?.ui ?? {} }
}

/** Routes every server-bound request and notification of the View over the channel. */
function routeToChannel(bridge) {
  const route = (method) => (params, extra) => request(method, params, extra?.mcpReq?.signal)
  bridge.oncalltool = route('tools/call')
  bridge.onlistresources = route('resources/list')
  bridge.onlistresourcetemplates = route('resources/templates/list')
  bridge.onreadresource = route('resources/read')
  // Not advertised by any AhpMcpUiHostCapabilities: routed all the same, the
  // host is the one that refuses (-32601), as it does for any client.
  bridge.onlistprompts = route('prompts/list')
  bridge.onloggingmessage = (params) => { notify('notifications/message', params) }
}

/** Client-local parts of the View protocol: this page grants none of them. */
function localAffordances(bridge, frame) {
  bridge.onopenlink = async () => ({ isError: true })
  bridge.onmessage = async () => ({ isError: true })
  bridge.onsizechange = ({ height }) => {
    if (typeof height === 'number' && height > 0) frame.style.height = `${Math.min(Math.ceil(height), 4000)}px`
  }
}

/**
 * Renders the App of one AHP tool call:
 * `{channel, resourceUri, hostInfo, hostCapabilities, toolInput, toolResult}`
 * (`hostCapabilities`: the customization's `mcpApp.capabilities`, plus what
 * this page itself offers).
 */
async function render(app) {
  if (current) throw new Error('this page already renders an App')
  current = { channel: app.channel }
  status.phase = 'reading'
  show(`reading ${app.resourceUri} on ${app.channel}`)
  const { html, ui } = await readView(app.resourceUri)
  status.viewBytes = html.length
  const frame = document.createElement('iframe')
  frame.id = 'view'
  frame.title = app.resourceUri
  // An opaque origin: the View reaches nothing of this page but postMessage.
  frame.setAttribute('sandbox', 'allow-scripts')
  const allow = buildAllowAttribute(ui.permissions)
  if (allow) frame.setAttribute('allow', allow)
  if (ui.prefersBorder === false) frame.style.border = 'none'
  document.getElementById('app').append(frame)
  // The server-side slice comes from the host (mcpApp.capabilities); the
  // sandbox is this renderer's own: it grants what the resource declared.
  const hostCapabilities = { ...app.hostCapabilities, sandbox: { csp: ui.csp ?? {}, permissions: ui.permissions ?? {} } }
  const bridge = new AppBridge(null, app.hostInfo, hostCapabilities, {
    hostContext: { theme: 'light', platform: 'web', displayMode: 'inline', locale: navigator.language },
  })
  current.bridge = bridge
  routeToChannel(bridge)
  localAffordances(bridge, frame)
  bridge.oninitialized = async () => {
    status.phase = 'initialized'
    show(`View initialized (${app.resourceUri}); its server traffic goes over ${app.channel}`)
    await bridge.sendToolInput({ arguments: app.toolInput ?? {} })
    await bridge.sendToolResult(app.toolResult)
    status.phase = 'delivered'
  }
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow))
  frame.srcdoc = withCsp(html, viewCsp(ui.csp))
  status.phase = 'loading'
}

window.ahpRender = (app) => render(app).catch((err) => { fail(err); throw err })

// Opened by a person (`--serve`): fetch the App and the channel's messages over HTTP.
if (typeof window.ahpPost !== 'function') {
  const events = new EventSource('events')
  events.onmessage = (e) => window.ahpReceive(JSON.parse(e.data))
  events.onopen = () => {
    if (current) return
    fetch('app.json').then((r) => r.json()).then(window.ahpRender).catch(fail)
  }
}
