// MCP Apps end to end (issue 11, item 6), with the real MCP Apps example
// server `@modelcontextprotocol/server-basic-vanillajs` (stdio, from the
// examples/mcp-apps plugin folder) and the system's Chromium:
//
// 1. the host (`mcpApps: true`) publishes `mcpApp.capabilities` and an
//    `mcp://` `channel` on the server's customization;
// 2. an AHP chat tool call to the App tool `get-time` carries `_meta.ui`
//    (its `resourceUri`) on `chat/toolCallComplete`;
// 3. the View's HTML is read through the channel (`resources/read` of the
//    `ui://` URI with `sendChannelMessage`, answered by `channelMessage`);
// 4. headless Chromium renders the View in the host page of
//    examples/mcp-apps (ext-apps' AppBridge; every server-bound message of
//    the View goes page → this process → `host.sendChannelMessage`, and
//    `channelMessage` events go back into the page, as a webview and its
//    extension host do): the View shows the tool call's time, its own
//    `tools/call` (the "Get Server Time" button) reaches the server through
//    the channel, and `prompts/list` is refused with -32601;
// 5. replaying every emitted session action rebuilds `host.getState()`.
//
// Without Chromium (none installed, or it does not start) only step 4 is
// skipped, saying why; `bash .ci/run` installs it and sets
// AHP_REQUIRE_CHROMIUM=1, which turns that skip into a failure.
// Screenshots: test-output/apps-browser/ (view.png: the whole page;
// view-frame.png: the View's iframe).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, waitFor, waitState, findCustomization, ROOT } from './helpers/host.mjs'
import { replaySession } from './helpers/replay.mjs'
import { launchOrSkip } from './helpers/browser.mjs'
import {
  APP_MIME_TYPE, ChannelLink, appOfToolCall, bundleHostPage, serveHostPage, openHostPage,
  viewFrame, viewTime,
} from '../examples/mcp-apps/host-page.mjs'

const PLUGIN = join(ROOT, 'examples', 'mcp-apps')
const SERVER = 'mcp-apps/basic-vanillajs'
const SESSION = 'ahp-session:/apps-browser'
const CHAT = 'ahp-chat:/apps-browser'
const RESOURCE_URI = 'ui://get-time/mcp-app.html'
const OUTPUT = join(ROOT, 'test-output', 'apps-browser')
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

let clientSeq = 0
/**
 * Waits until every envelope emitted so far has reached the `action`
 * listener: dispatches a client action the host refuses and waits for its echo.
 */
async function delivered(host, actions) {
  const echo = host.dispatch({ type: 'session/mcpServerStartRequested', id: 'no-such-server' }, { clientId: 'apps-browser', clientSeq: ++clientSeq })
  await waitFor(() => actions.some((e) => e.serverSeq === echo.serverSeq), { what: 'the barrier echo' })
}

/** Sends one request on the channel from this process; resolves its response (a `channelMessage`). */
function channelRequest(host, channel, id, method, params) {
  return new Promise((resolve) => {
    const onMessage = (m) => {
      if (m.channel !== channel || m.id !== id) return
      host.off('channelMessage', onMessage)
      resolve(m)
    }
    host.on('channelMessage', onMessage)
    host.sendChannelMessage({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}), channel })
  })
}

/** The channel traffic in one line: direction, method or response id, error code. */
const trafficSummary = (link) => link.traffic
  .map(({ dir, message: m }) => `${dir === 'toHost' ? '→' : '←'} ${m.method ?? `response ${m.id}`}${m.error ? ` ${m.error.code}` : ''}`)
  .join(', ')

const chatActions = (actions) => actions.filter((e) => e.channel === CHAT).map((e) => e.action)

/** Starts the example plugin with `options`; resolves once its server is ready. */
async function startApps(t, options) {
  const recorded = newHost(t, { session: SESSION, ...options })
  const initial = recorded.host.getState()
  const added = await recorded.host.addPlugin({ root: PLUGIN })
  assert.deepEqual(added.servers, [SERVER])
  await waitState(recorded.host, SERVER, 'ready')
  return { ...recorded, initial }
}

test('without mcpApps the App server is an ordinary server: no mcpApp, no channel, no _meta.ui', async (t) => {
  const { host, actions } = await startApps(t, {})
  const server = findCustomization(host.getState(), SERVER)
  assert.equal(server.mcpApp, undefined)
  assert.equal(server.channel, undefined)
  const call = { chat: CHAT, turnId: 'turn-0', toolCallId: 'plain-1' }
  const result = await host.callTool({ serverId: SERVER, name: 'get-time', arguments: {}, ...call })
  assert.match(result.structuredContent.time, ISO)
  await delivered(host, actions)
  const done = chatActions(actions).find((a) => a.type === 'chat/toolCallComplete' && a.toolCallId === call.toolCallId)
  assert.ok(done, 'chat/toolCallComplete')
  assert.equal(done._meta?.ui, undefined)
})

test('MCP Apps end to end: mcpApp and channel, _meta.ui on the AHP tool call, the View read over the channel and rendered by Chromium with AppBridge', async (t) => {
  const { host, actions, logs, initial } = await startApps(t, { mcpApps: true })
  const channelMessages = []
  host.on('channelMessage', (m) => channelMessages.push(m))

  // 1. The customization says the server hosts Apps, with what, and where its channel is.
  const server = await waitFor(() => {
    const c = findCustomization(host.getState(), SERVER)
    return c?.mcpApp && c.channel ? c : undefined
  }, { what: `mcpApp and channel on ${SERVER}`, describe: () => JSON.stringify(findCustomization(host.getState(), SERVER)) })
  // The server declares tools and resources, both with listChanged, and no logging; there is no sampling handler.
  assert.deepEqual(server.mcpApp.capabilities, { serverTools: { listChanged: true }, serverResources: { listChanged: true } })
  assert.match(server.channel, /^mcp:/)

  // 2. An AHP chat tool call to the App tool.
  const call = { chat: CHAT, turnId: 'turn-1', toolCallId: 'app-1' }
  const toolInput = {}
  const result = await host.callTool({ serverId: SERVER, name: 'get-time', arguments: toolInput, ...call })
  assert.match(result.structuredContent.time, ISO)
  await delivered(host, actions)
  const ofCall = chatActions(actions).filter((a) => a.toolCallId === call.toolCallId)
  const complete = ofCall.find((a) => a.type === 'chat/toolCallComplete')
  assert.ok(complete, `chat/toolCallComplete among ${JSON.stringify(ofCall)}`)
  assert.deepEqual(complete._meta?.ui, { resourceUri: RESOURCE_URI }, 'the tool\'s _meta.ui, verbatim')
  assert.equal(complete.result.success, true)
  // The harness's own chat/toolCallStart carries contributor {kind: 'mcp',
  // customizationId} and _meta.ui: both come from the catalogue entry.
  const entry = host.listTools().find((e) => e.toolName === 'get-time')
  assert.equal(entry.customizationId, SERVER)
  assert.deepEqual(entry._meta.ui, complete._meta.ui)

  // 3. The View's HTML through the channel, the same as through the helper.
  const read = await channelRequest(host, server.channel, 'test-read-1', 'resources/read', { uri: RESOURCE_URI })
  assert.equal(read.error, undefined, JSON.stringify(read.error))
  assert.equal(read.jsonrpc, '2.0')
  const [content] = read.result.contents
  assert.equal(content.uri, RESOURCE_URI)
  assert.equal(content.mimeType, APP_MIME_TYPE)
  assert.match(content.text, /id="get-time-btn"/)
  assert.match(content.text, /id="server-time"/)
  const helper = await host.readAppResource({ serverId: SERVER, uri: RESOURCE_URI })
  assert.ok(helper.contents[0].text === content.text, 'readAppResource gives the same View')
  // A method outside the advertised subset, from this process: refused by the host.
  const prompts = await channelRequest(host, server.channel, 'test-prompts-1', 'prompts/list', {})
  assert.equal(prompts.error?.code, -32601, JSON.stringify(prompts))
  assert.equal(prompts.error.data?.code, 'not_supported')
  assert.match(prompts.error.message, /prompts\/list/)

  // 4. The View in Chromium.
  await t.test('rendered by headless Chromium through the host page', async (st) => {
    const browser = await launchOrSkip(st)
    if (!browser) return
    st.after(() => browser.close())
    const app = appOfToolCall(host.getState(), { serverId: SERVER, complete, toolInput })
    const link = new ChannelLink(host, app.channel)
    st.after(() => link.close())
    const served = await serveHostPage({ bundle: await bundleHostPage(), link, app })
    st.after(() => served.close())
    const consoleErrors = []
    const page = await openHostPage(browser, { url: served.url, link, app, onConsole: (type, text) => { if (type === 'error') consoleErrors.push(text) } })

    // The View rendered, showing the time of the AHP tool call's result (sendToolResult).
    assert.deepEqual(app.toolResult, result, 'the MCP result, made back from chat/toolCallComplete')
    const frame = await viewFrame(page)
    const shown = await viewTime(frame)
    assert.equal(shown, complete.result.structuredContent.time)
    const [viewRead] = link.exchanges('resources/read')
    assert.deepEqual(viewRead.request.params, { uri: RESOURCE_URI })
    assert.equal(viewRead.response.result.contents[0].mimeType, APP_MIME_TYPE)
    assert.ok(viewRead.response.result.contents[0].text === content.text, 'the page read the same View')

    // The View's own tools/call ("Get Server Time"), through the channel to the server.
    const before = chatActions(actions).length
    await frame.click('#get-time-btn')
    const refreshed = await viewTime(frame, { differentFrom: shown })
    const calls = link.exchanges('tools/call')
    assert.equal(calls.length, 1, `one tools/call on the channel; traffic: ${trafficSummary(link)}`)
    assert.deepEqual(calls[0].request.params.name, 'get-time')
    assert.equal(calls[0].request.channel, app.channel)
    assert.equal(calls[0].response.result.structuredContent.time, refreshed)
    // A View's tools/call is not an AHP chat tool call.
    await delivered(host, actions)
    assert.equal(chatActions(actions).length, before)

    // prompts/list from the View (outside AhpMcpUiHostCapabilities): the host refuses it.
    const refused = await frame.evaluate(() => new Promise((resolve) => {
      window.addEventListener('message', (e) => { if (e.data?.id === 'view-prompts-1') resolve(e.data) })
      window.parent.postMessage({ jsonrpc: '2.0', id: 'view-prompts-1', method: 'prompts/list', params: {} }, '*')
    }))
    assert.equal(refused.error?.code, -32601, JSON.stringify(refused))
    const [promptsExchange] = link.exchanges('prompts/list')
    assert.equal(promptsExchange.response.error.code, -32601)
    assert.equal(promptsExchange.response.error.data.code, 'not_supported')

    // Every message the page sent went to the host on the App's channel, and each request was answered once.
    const sent = link.traffic.filter((x) => x.dir === 'toHost').map((x) => x.message)
    assert.deepEqual(sent.map((m) => m.method), ['resources/read', 'tools/call', 'prompts/list'])
    for (const m of sent) assert.equal(channelMessages.filter((r) => r.id === m.id && r.channel === app.channel).length, 1, `one response to ${m.id}`)
    const status = await page.evaluate(() => window.ahpStatus)
    assert.deepEqual(status.errors, [])
    assert.equal(status.phase, 'delivered')

    mkdirSync(OUTPUT, { recursive: true })
    const shot = join(OUTPUT, 'view.png')
    await page.screenshot({ path: shot })
    await (await page.$('#view')).screenshot({ path: join(OUTPUT, 'view-frame.png') })
    assert.deepEqual([...readFileSync(shot).subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG')
    st.diagnostic(`screenshots: ${shot}, ${join(OUTPUT, 'view-frame.png')}`)
    // The one expected error: the View's App gets the answer to the probe it did not send itself.
    assert.deepEqual(consoleErrors.filter((e) => !/unknown message ID: .*view-prompts-1/.test(e)), [], 'no other error in the page or the View')
  })

  // 5. Replaying every session action rebuilds the host's state.
  await delivered(host, actions)
  assert.deepEqual(replaySession(actions, SESSION, initial), host.getState())
  assert.deepEqual(logs.filter((l) => l.level === 'error'), [])
})
