'use strict'
// `host.whenReady(serverId, {signal, timeoutMs})`: a promise for the outcome
// of one MCP server's start (see index.d.ts `McpHost.whenReady`).
//
// The host's session state (read from the native side at once, with the
// `serverSeq` of the last envelope it reflects) is the truth; `action`
// envelopes only say when to look again. The envelopes JS has been handed
// may lag that state (they are queued and delivered in batches), never lead
// it: every change made after a look is followed by its envelope. So a
// waiter looks once when it is made and again after each batch that touches
// its server (its state, its customization or plugin, a toggle, a start or
// stop request), and nothing is missed. A look that decides the outcome
// settles the waiter only once the envelope of that `serverSeq` has been
// delivered to the `action` listeners, so a state mirror fed by them shows
// what the waiter saw (`ready`) when the promise settles. A crashed server
// whose restart is scheduled (its `error` state carries
// `_meta["ahp-mcp-host/restart"]`) is still on its way to `ready`: waiters
// keep waiting through the backoff. One
// observer per host serves every waiter (the host calls `observe` for each
// envelope it delivers; no EventEmitter listener), one `abort` listener per
// AbortSignal serves every waiter sharing it (request-options.js `watchAbort`,
// shared with the request methods).

const { MAX_TIMEOUT_MS, abortError, checkSignal, watchAbort } = require('./request-options.js')

/** The `ErrorInfo._meta` key of a crash whose restart is scheduled (src/session/customizations.rs). */
const RESTART_META_KEY = 'ahp-mcp-host/restart'
// `_meta` key of a server's policy and trust decision (src/policy/mod.rs `POLICY_META_KEY`).
const POLICY_META_KEY = 'ahp-mcp-host/policy'

/** Action types after which a waiter on the id they name looks again. */
const WAKES = new Set([
  'session/mcpServerStateChanged',
  'session/customizationUpdated',
  'session/customizationRemoved',
  'session/customizationToggled',
  'session/mcpServerStartRequested',
  'session/mcpServerStopRequested',
  'session/mcpServerBackgroundRequested',
])

/** The value of an inner waiter whose server stopped blocking (see `waitAll`). */
const BACKGROUND = Symbol('background')

/** Every MCP server id of an AHP `SessionState` (top-level entries, then plugin children, in order). */
function serverIds(state) {
  const ids = []
  for (const c of state?.customizations ?? []) {
    if (c.type === 'mcpServer') ids.push(c.id)
    for (const child of c.children ?? []) if (child.type === 'mcpServer') ids.push(child.id)
  }
  return ids
}

/**
 * Server `id` in an AHP `SessionState`, by the reducer's rule (top-level
 * entries first, then plugin children): `{server, plugin}` (`plugin` for a
 * child), `{other: true}` for a customization that is not an MCP server,
 * or `undefined`.
 */
function findServer(state, id) {
  const list = state?.customizations ?? []
  for (const c of list) {
    if (c.id === id) return c.type === 'mcpServer' ? { server: c } : { other: c.type ?? 'customization' }
  }
  for (const c of list) {
    for (const child of c.children ?? []) {
      if (child.id === id && child.type === 'mcpServer') return { server: child, plugin: c }
    }
  }
  return undefined
}

/** AHP "effective enabled": the first enablement entry decides; none = enabled; an unknown entry = disabled. */
function enabled(enablement) {
  const first = enablement?.[0]
  if (first === undefined) return true
  return typeof first.enabled === 'boolean' ? first.enabled : false
}

/**
 * The waiters of one host. `state()` reads `{serverSeq, state,
 * toolsPending}` (the session state, the `serverSeq` of the last envelope it
 * reflects, and the ids of the servers whose tools are not in it yet),
 * `info(id)` the server's `ServerInfo` (throws when it is gone),
 * `error(code, message, data)` makes a `HostError`. `onBusy(busy)`, when
 * set, is told when the first waiter starts and the last one ends.
 */
class Readiness {
  #state
  #info
  #error
  #waiters = new Set()
  #removing = new Map()
  #due = new Set()
  #flushing = false
  // The highest `serverSeq` delivered to the listeners so far.
  #delivered = 0
  // Waiters whose outcome is known, each waiting for the envelope of `decided.seq`.
  #decided = new Set()
  onBusy = undefined

  constructor({ state, info, error }) {
    this.#state = state
    this.#info = info
    this.#error = error
  }

  /** Whether any waiter is pending. */
  get busy() { return this.#waiters.size > 0 }

  /**
   * A promise for server `serverId` becoming `ready` (see index.d.ts).
   * Arguments are checked first (`invalid_argument` naming them).
   */
  wait(serverId, options) {
    if (typeof serverId !== 'string' || serverId === '') {
      return Promise.reject(this.#error('invalid_argument', 'serverId: must be a non-empty string'))
    }
    let signal, timeoutMs
    try {
      ;({ signal, timeoutMs } = this.#options(options))
    } catch (err) {
      return Promise.reject(err)
    }
    if (signal?.aborted) return Promise.reject(this.#aborted(serverId, signal))
    return new Promise((resolve, reject) => {
      const waiter = { id: serverId, resolve, reject, timer: undefined, unwatch: undefined, seen: false, decided: undefined, toolsPending: false }
      this.#add(waiter)
      if (this.#judge(waiter, this.#state()) || waiter.decided) return
      if (timeoutMs !== undefined) {
        waiter.timer = setTimeout(() => {
          this.#settle(waiter, this.#error('timeout', `server ${JSON.stringify(serverId)} was not ready within ${timeoutMs} ms`, { kind: 'ready', ms: timeoutMs, serverId }))
        }, timeoutMs)
        waiter.timer.unref?.()
      }
      if (signal) waiter.unwatch = watchAbort(signal, () => this.#settle(waiter, this.#aborted(serverId, signal)))
    })
  }

  /**
   * A promise for the outcome of many starts (see index.d.ts): `ids` (an
   * array), or every server in the state now (`ids` undefined); with
   * `options.blocking`, only while each start blocks. Resolves with one
   * `ReadyOutcome` per id, in order, once every one is decided; rejects
   * only for `invalid_argument`, `timeout`, `cancelled` and `disposed`.
   */
  waitAll(ids, options) {
    let signal, timeoutMs, blocking
    try {
      ;({ signal, timeoutMs, blocking } = this.#options(options, true))
      if (ids !== undefined) this.#checkIds(ids)
    } catch (err) {
      return Promise.reject(err)
    }
    const what = ids === undefined ? 'whenReady()' : `whenReady([${ids.length} servers])`
    if (signal?.aborted) return Promise.reject(this.#abortedAll(what, signal))
    const snapshot = this.#state()
    if (ids === undefined) {
      ids = serverIds(snapshot.state)
      if (blocking) ids = ids.filter((id) => findServer(snapshot.state, id)?.server?.state?.blocking === true)
    }
    const inner = ids.map((id) => {
      const waiter = { id, blocking, resolve: undefined, reject: undefined, timer: undefined, unwatch: undefined, seen: false, decided: undefined, toolsPending: false }
      const promise = new Promise((resolve, reject) => Object.assign(waiter, { resolve, reject }))
      return { waiter, outcome: promise.then(
        (info) => (info === BACKGROUND ? { serverId: id, status: 'background' } : { serverId: id, status: 'ready', info }),
        (error) => ({ serverId: id, status: 'failed', error }),
      ) }
    })
    for (const { waiter } of inner) {
      this.#add(waiter)
      this.#judge(waiter, snapshot)
    }
    const all = Promise.all(inner.map((i) => i.outcome))
    if (timeoutMs === undefined && !signal) return all
    return new Promise((resolve, reject) => {
      let timer, unwatch
      const end = (err) => {
        if (timer !== undefined) clearTimeout(timer)
        unwatch?.()
        if (!err) return
        // The waits still pending end with the aggregate (their outcomes are dropped).
        const pending = inner.filter((i) => this.#waiters.has(i.waiter)).map((i) => i.waiter)
        err.data = { ...err.data, serverIds: pending.map((w) => w.id) }
        for (const w of pending) this.#settle(w, err)
        reject(err)
      }
      all.then((outcomes) => { end(); resolve(outcomes) })
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => end(this.#error('timeout', `${what}: not every start was decided within ${timeoutMs} ms`, { kind: 'ready', ms: timeoutMs })), timeoutMs)
        timer.unref?.()
      }
      if (signal) unwatch = watchAbort(signal, () => end(this.#abortedAll(what, signal)))
    })
  }

  /** `ids` of `waitAll`: an array of non-empty strings (`invalid_argument` naming the entry). */
  #checkIds(ids) {
    if (!Array.isArray(ids)) throw this.#error('invalid_argument', 'serverIds: must be an array of server ids')
    ids.forEach((id, i) => {
      if (typeof id !== 'string' || id === '') throw this.#error('invalid_argument', `serverIds[${i}]: must be a non-empty string`)
    })
  }

  #abortedAll(what, signal) {
    const err = abortError(signal, what)
    err.data = { serverIds: [] }
    return err
  }

  /** `{signal, timeoutMs, blocking}` of an options argument, checked (`blocking` only with `many`). */
  #options(options, many = false) {
    if (options === undefined || options === null) return {}
    if (typeof options !== 'object' || Array.isArray(options)) {
      throw this.#error('invalid_argument', `options: must be an object ({signal?, timeoutMs?${many ? ', blocking?' : ''}})`)
    }
    const { signal, timeoutMs, blocking } = options
    if (many && blocking !== undefined && typeof blocking !== 'boolean') {
      throw this.#error('invalid_argument', `options.blocking: must be a boolean, got ${typeof blocking}`)
    }
    checkSignal(signal, 'options.signal')
    if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs >= 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
      throw this.#error('invalid_argument', `options.timeoutMs: must be a number of milliseconds from 0 to ${MAX_TIMEOUT_MS}, got ${typeof timeoutMs === 'number' ? timeoutMs : typeof timeoutMs}`)
    }
    return { signal, timeoutMs, blocking: many ? blocking === true : false }
  }

  /**
   * Decides `waiter` if the snapshot (`{serverSeq, state}`, or undefined:
   * only a `remove` under way decides) settles it; true when it did (it
   * settles once that `serverSeq` is delivered, see `#decide`). A server not
   * (or no longer) in the state is `not_found` at the first look and
   * `server_removed` later.
   */
  #judge(waiter, snapshot) {
    const { id } = waiter
    if (this.#removingOf(id)) return this.#settle(waiter, this.#error('server_removed', `server ${JSON.stringify(id)} was removed`, { serverId: id }))
    const verdict = this.#verdict(waiter, snapshot?.state)
    // Ready, but its tools not yet in the state (they are published right
    // after `ready`): looked at again after the next envelope.
    waiter.toolsPending = verdict?.value !== undefined && snapshot?.toolsPending?.includes(id) === true
    if (verdict === undefined || waiter.toolsPending) return false
    return this.#decide(waiter, snapshot.serverSeq, verdict)
  }

  /** `{err}` or `{value}` if `state` decides `waiter`, else undefined (still starting). */
  #verdict(waiter, state) {
    const { id } = waiter
    const fail = (err) => ({ err })
    const found = findServer(state, id)
    if (found === undefined || found.other) {
      if (waiter.seen) return fail(this.#error('server_removed', `server ${JSON.stringify(id)} was removed`, { serverId: id }))
      const what = found ? `${JSON.stringify(id)} is a ${found.other}, not an MCP server (wait for each of its servers: addPlugin resolves their ids as \`servers\`)` : `no MCP server ${JSON.stringify(id)}`
      return fail(this.#error('not_found', what, { serverId: id }))
    }
    waiter.seen = true
    const { server, plugin } = found
    if (!enabled(server.enablement) || (plugin && !enabled(plugin.enablement))) {
      return fail(this.#error('server_disabled', `server ${JSON.stringify(id)} is disabled`, { serverId: id }))
    }
    const s = server.state
    switch (s?.kind) {
      case 'ready': {
        let info
        try {
          info = this.#info(id)
        } catch {
          return fail(this.#error('server_removed', `server ${JSON.stringify(id)} was removed`, { serverId: id }))
        }
        return { value: info }
      }
      case 'error':
        if (s.error?._meta?.[RESTART_META_KEY]) return undefined // restarting after a crash
        return fail(this.#error(s.error.errorType, `server ${JSON.stringify(id)}: ${s.error.message}`, { serverId: id, state: s }))
      case 'authRequired': {
        const why = s.description ? `: ${s.description}` : ''
        return fail(this.#error('auth_required', `server ${JSON.stringify(id)} needs authorization (${s.reason}, resource ${s.resource?.resource})${why}`, { serverId: id, state: s }))
      }
      case 'stopped': {
        // Stopped because the app's trust callback refused it (issue 32).
        const trust = server._meta?.[POLICY_META_KEY]?.trust
        const code = { refused: 'trust_refused', failed: 'trust_failed' }[trust?.state]
        if (code) return fail(this.#error(code, `server ${JSON.stringify(id)} is stopped: ${trust.message}`, { serverId: id }))
        return fail(this.#error('server_stopped', `server ${JSON.stringify(id)} is stopped`, { serverId: id }))
      }
      default:
        // A wait on blocking starts only: a backgrounded start ends it.
        if (waiter.blocking && s?.kind === 'starting' && s.blocking !== true) return { value: BACKGROUND }
        return undefined // starting
    }
  }

  /**
   * Settles `waiter` with `verdict` once the envelope of `seq` has been
   * delivered: now if it has, else at the delivery (`observe`); true.
   */
  #decide(waiter, seq, { err, value }) {
    if (typeof seq !== 'number' || seq <= this.#delivered) return this.#settle(waiter, err, value)
    waiter.decided = { seq, err, value }
    this.#decided.add(waiter)
    if (waiter.timer !== undefined) clearTimeout(waiter.timer)
    waiter.timer = undefined
    return true
  }

  #add(waiter) {
    this.#waiters.add(waiter)
    if (this.#waiters.size === 1) this.onBusy?.(true)
  }

  /** Ends `waiter` (rejected with `err`, else resolved with `value`); true. */
  #settle(waiter, err, value) {
    if (!this.#waiters.delete(waiter)) return true
    this.#decided.delete(waiter)
    if (this.#waiters.size === 0) this.onBusy?.(false)
    if (waiter.timer !== undefined) clearTimeout(waiter.timer)
    waiter.unwatch?.()
    if (err) waiter.reject(err)
    else waiter.resolve(value)
    return true
  }

  #aborted(id, signal) {
    const err = abortError(signal, `whenReady(${JSON.stringify(id)})`)
    err.data = { serverId: id }
    return err
  }

  /**
   * One delivered `ActionEnvelope`: the waiters on the id its action names
   * (or on a child of that plugin) look again once the batch is through.
   */
  observe(envelope) {
    const seq = envelope?.serverSeq
    if (typeof seq === 'number' && seq > this.#delivered) this.#delivered = seq
    if (this.#waiters.size === 0) return
    if (this.#decided.size > 0) this.#schedule()
    const action = envelope?.action
    if (!action || !WAKES.has(action.type)) return
    const id = action.id ?? action.customization?.id
    if (typeof id !== 'string') return
    for (const w of this.#waiters) {
      if (!w.decided && (w.id === id || w.id.startsWith(`${id}/`))) this.#due.add(w)
    }
    if (this.#due.size > 0) this.#schedule()
  }

  /**
   * A `toolsChanged` event: every publication of a server's tools ends with
   * one (`session/serverToolsChanged` names no server, and may be delivered
   * unparsed), so the waiters held back by their server's tools look again.
   */
  toolsChanged() {
    for (const w of this.#waiters) if (w.toolsPending && !w.decided) this.#due.add(w)
    if (this.#due.size > 0) this.#schedule()
  }

  /** Looks again once the batch is through (a microtask: the batch's listeners have run). */
  #schedule() {
    if (this.#flushing) return
    this.#flushing = true
    queueMicrotask(() => this.#flush())
  }

  #flush() {
    this.#flushing = false
    for (const w of [...this.#decided]) {
      if (w.decided.seq <= this.#delivered) this.#settle(w, w.decided.err, w.decided.value)
    }
    const due = [...this.#due].filter((w) => this.#waiters.has(w) && !w.decided)
    this.#due.clear()
    if (due.length === 0) return
    let state
    try {
      state = this.#state()
    } catch {
      return // disposed: close() settles the waiters
    }
    for (const w of due) this.#judge(w, state)
  }

  /**
   * `remove(id)` was called: waiters on `id` (a top-level server, or a
   * plugin and its children) reject `server_removed` now, and so does any
   * made before the returned `done()` is called (when `remove` settles).
   */
  removing(id) {
    // A plugin's child cannot be removed on its own (`remove` rejects `not_found`).
    if (typeof id !== 'string' || id === '' || id.includes('/')) return () => {}
    this.#removing.set(id, (this.#removing.get(id) ?? 0) + 1)
    for (const w of [...this.#waiters]) {
      if (this.#removingOf(w.id)) this.#judge(w, undefined)
    }
    let done = false
    return () => {
      if (done) return
      done = true
      const n = this.#removing.get(id) - 1
      if (n > 0) this.#removing.set(id, n)
      else this.#removing.delete(id)
    }
  }

  /** Whether a `remove` of `id` (or of its plugin: the part before the first `/`) is under way. */
  #removingOf(id) {
    if (this.#removing.size === 0) return false
    if (this.#removing.has(id)) return true
    const slash = id.indexOf('/')
    return slash > 0 && this.#removing.has(id.slice(0, slash))
  }

  /** The host was disposed: every waiter rejects `disposed`. */
  close() {
    for (const w of [...this.#waiters]) {
      this.#settle(w, this.#error('disposed', 'the host was disposed', { serverId: w.id }))
    }
  }
}

module.exports = { Readiness, findServer }
