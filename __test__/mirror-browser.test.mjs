// The state mirror in a browser with the WebAssembly reducers (issue 12):
// a page bundled by esbuild (__test__/mirror-browser/page.js: lib/mirror.js
// + lib/reducers-wasm.js, the module fetched from the page's server on
// 127.0.0.1) keeps AHP state from a live host's envelopes, relayed into
// the page with `window.postMessage` (puppeteer's `evaluate`, standing for
// a webview's extension host); its optimistic dispatches come back through
// `ahpPost` (puppeteer's `exposeFunction`) to `host.dispatch` with the
// mirror's origin. A fixed workload (servers added, a crash, dispatches the
// host accepts and one it rejects, a removal): after every step the page's
// mirror session equals `host.getState()`, nothing is pending, and no gap or
// duplicate was seen; the rejected dispatch was rolled back.
//
// The same mirror with the same WebAssembly reducers also runs in this
// process on the same envelopes (no browser needed). Without Chromium (none
// installed, or it does not start) only the browser part is skipped, saying
// why; AHP_REQUIRE_CHROMIUM=1 (set by `bash .ci/run`) turns that into a failure.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isDeepStrictEqual } from 'node:util'
import { join } from 'node:path'
import { newHost, fixtureEntry, waitFor, waitState, ROOT } from './helpers/host.mjs'
import { bundleBrowserEntry } from '../examples/mcp-apps/host-page.mjs'
import { launchOrSkip } from './helpers/browser.mjs'

const require = createRequire(import.meta.url)
const { loadReducers } = require('../lib/reducers-wasm.js')
const { AhpStateMirror } = require('../lib/mirror.js')

const SESSION = 'ahp-session:/mirror-browser'
const CLIENT_ID = 'mirror-browser-page'
const WASM = join(ROOT, 'lib', 'ahp-reducers.wasm')

/** The page script bundled for the browser (esbuild, platform browser). */
const bundlePage = () => bundleBrowserEntry(join(ROOT, '__test__', 'mirror-browser', 'page.js'))

/** Serves the page, its bundle and the reducers' module on 127.0.0.1 under a random path; resolves `{url, close}`. */
async function servePage(bundle) {
  const base = `/${randomBytes(12).toString('hex')}/`
  const routes = {
    '': ['text/html; charset=utf-8', '<!doctype html><meta charset="utf-8"><title>AHP mirror</title><link rel="icon" href="data:,"><script type="module" src="page.js"></script>'],
    'page.js': ['text/javascript; charset=utf-8', bundle],
    'ahp-reducers.wasm': ['application/wasm', readFileSync(WASM)],
  }
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://127.0.0.1').pathname
    const route = path.startsWith(base) ? routes[path.slice(base.length)] : undefined
    if (req.method !== 'GET' || !route) {
      res.writeHead(404)
      res.end()
      return
    }
    res.writeHead(200, { 'content-type': route[0], 'cache-control': 'no-store' })
    res.end(route[1])
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}${base}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

/**
 * Opens the page, starts its mirror from `snapshot` and relays every later
 * envelope of `host` into it by `window.postMessage`, in order; the page's
 * dispatches go to `host.dispatch` with their origin. Resolves
 * `{page, view(), relayed()}`.
 */
async function openMirrorPage(browser, { url, host, snapshot, onError }) {
  const page = await browser.newPage()
  page.on('console', (m) => { if (m.type() === 'error') onError(m.text()) })
  page.on('pageerror', (e) => onError(e.message))
  await page.exposeFunction('ahpPost', ({ action, clientId, clientSeq }) => {
    host.dispatch(action, { clientId, clientSeq })
  })
  await page.goto(url, { waitUntil: 'load' })
  await page.waitForFunction(() => typeof window.ahpStart === 'function')
  await page.evaluate((options) => window.ahpStart(options), { session: SESSION, clientId: CLIENT_ID, snapshot })
  let relayed = 0
  let queue = Promise.resolve()
  host.on('action', (envelope) => {
    queue = queue
      .then(() => page.evaluate((e) => window.postMessage({ kind: 'ahp-envelope', envelope: e }, '*'), envelope))
      .then(() => { relayed += 1 }, (err) => { if (!page.isClosed() && browser.connected) onError(`relay: ${err.message}`) })
  })
  return { page, view: () => page.evaluate(() => window.ahpView()), relayed: () => relayed }
}

test('a page keeps AHP state with the mirror and the WebAssembly reducers, fed by postMessage from a live host', { timeout: 240_000 }, async (t) => {
  const bundle = await bundlePage()
  // Browser-ready: no Node built-in is imported by the bundle.
  assert.doesNotMatch(bundle, /\bfrom\s*["']node:|require\(["']node:/)

  const { host, actions } = newHost(t, { session: SESSION })
  const lastSeq = () => actions.at(-1)?.serverSeq ?? 0
  const snapshot = { serverSeq: lastSeq(), session: host.getState() }

  // This process: the same mirror with the same WebAssembly reducers.
  const local = new AhpStateMirror({ session: SESSION, reducers: await loadReducers(), clientId: 'mirror-browser-node', snapshot })
  const localEvents = []
  for (const name of ['gap', 'duplicate']) local.on(name, (p) => localEvents.push({ event: name, ...p }))
  host.on('action', (e) => local.receive(e))

  let browser
  let mirrorPage
  const pageErrors = []
  await t.test('the page in headless Chromium', async (st) => {
    browser = await launchOrSkip(st)
    if (!browser) return
    const served = await servePage(bundle)
    t.after(() => served.close())
    mirrorPage = await openMirrorPage(browser, { url: served.url, host, snapshot, onError: (m) => pageErrors.push(m) })
  })
  t.after(() => browser?.close())

  /** Waits until both mirrors hold every envelope and equal `host.getState()`. */
  const settled = async (step) => {
    await waitFor(async () => {
      const state = host.getState()
      if (local.serverSeq !== lastSeq() || !isDeepStrictEqual(local.session, state) || local.pending !== 0) return false
      if (!mirrorPage) return true
      const view = await mirrorPage.view()
      return view.serverSeq === lastSeq() && view.pending === 0 && isDeepStrictEqual(view.session, host.getState())
    }, {
      timeout: 30_000,
      what: `${step}: the mirrors equal host.getState()`,
      describe: () => `host ${JSON.stringify(host.getState())}\nnode mirror ${JSON.stringify(local.session)}\npage errors ${pageErrors.join('; ')}`,
    })
  }
  /** A dispatch from the page (optimistic there), or from this process's mirror without a browser. */
  const dispatch = async (action) => {
    if (mirrorPage) return mirrorPage.page.evaluate((channel, a) => window.ahpDispatch(channel, a), SESSION, action)
    const sent = local.dispatch(SESSION, action)
    host.dispatch(action, { clientId: local.clientId, clientSeq: sent.clientSeq })
    return { clientSeq: sent.clientSeq, pending: local.pending }
  }

  const a = await host.addServer({ name: 'a', config: fixtureEntry('tools-server.mjs') })
  const b = await host.addServer({ name: 'b', config: fixtureEntry('tools-server.mjs') })
  await waitState(host, a, 'ready')
  await waitState(host, b, 'ready')
  await settled('two servers ready')

  // A crash: the host restarts the server.
  const pid = Number((await host.callTool({ serverId: a, name: 'pid' })).content[0].text)
  process.kill(pid, 'SIGKILL')
  await waitFor(() => actions.some((e) => e.action.type === 'session/mcpServerStateChanged' && e.action.id === a && e.action.state.kind !== 'ready'), { what: 'the crash reported' })
  await waitState(host, a, 'ready')
  await settled('a crashed and restarted')

  // Accepted: stop b (optimistic in the page until its echo confirms it).
  const stop = await dispatch({ type: 'session/mcpServerStopRequested', id: b })
  assert.equal(stop.pending, 1, 'the stop is pending until its echo')
  await waitState(host, b, 'stopped')
  await settled('b stopped by the page')

  // Rejected: an unknown server; the echo's rejectionReason rolls it back.
  const bad = await dispatch({ type: 'session/mcpServerStartRequested', id: 'no-such-server' })
  await settled('a rejected dispatch rolled back')
  const rejection = actions.find((e) => e.origin?.clientSeq === bad.clientSeq && e.rejectionReason !== undefined)
  assert.ok(rejection, 'the host rejected the unknown id')

  // Accepted: toggle a off and on again, start b again.
  await dispatch({ type: 'session/customizationToggled', id: a, enablement: [{ kind: 'session', enabled: false }] })
  await settled('a toggled off')
  await dispatch({ type: 'session/customizationToggled', id: a, enablement: [{ kind: 'session', enabled: true }] })
  await dispatch({ type: 'session/mcpServerStartRequested', id: b })
  await waitState(host, b, 'ready')
  await waitState(host, a, 'ready')
  await settled('a back on, b started again')

  await host.remove(b)
  await settled('b removed')

  assert.deepEqual(localEvents, [], 'no gap or duplicate in this process')
  if (mirrorPage) {
    const view = await mirrorPage.view()
    assert.deepEqual(view.session, host.getState())
    assert.deepEqual(view.events.filter((e) => e.event === 'gap' || e.event === 'duplicate'), [])
    const rejected = view.events.filter((e) => e.event === 'rejected')
    assert.deepEqual(rejected.map((e) => [e.clientSeq, e.reason]), [[bad.clientSeq, rejection.rejectionReason]])
    assert.equal(view.events.filter((e) => e.event === 'confirmed').length, 4, JSON.stringify(view.events))
    assert.deepEqual(pageErrors, [])
    t.diagnostic(`envelopes ${actions.length}, relayed into the page ${mirrorPage.relayed()}, last serverSeq ${lastSeq()}`)
  }
})
