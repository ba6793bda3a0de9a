'use strict'
// AhpStateMirror: a client-side mirror of one AHP host's state (the session
// channel and the chat channels it emits on), fed with action envelopes,
// with optimistic client dispatch (AHP 1.0 "Actions › Envelopes", "Write-ahead
// and reconciliation"). Plain JavaScript with no imports: it runs in a browser
// or webview as well as in Node. The reducers are injected: the native ones
// (`require('ahp-mcp-host')`) or the WebAssembly ones
// (`require('ahp-mcp-host/reducers-wasm').loadReducers()`); both are the `ahp`
// crate's reducers, never a JavaScript copy.

/**
 * The host's session before its first action (`empty_session_state` in
 * src/session/store.rs): what a mirror without `snapshot.session` starts from.
 */
function emptySession() {
  return { provider: 'mcp', title: '', status: 1, lifecycle: 'ready', activeClients: [], chats: [] }
}

/** A chat the mirror has no snapshot of: no turns, idle (AHP `ChatState`). */
function emptyChat(uri) {
  return { resource: uri, title: '', status: 1, modifiedAt: '', turns: [] }
}

class AhpStateMirror {
  #reducers
  #sessionUri
  #clientId
  #nextClientSeq = 1
  #lastSeq = 0
  #gap = false
  #session
  #chats = new Map()
  /** Optimistic actions not yet echoed, in dispatch order: `{channel, clientSeq, action}`. */
  #pending = []
  /** Visible states by channel, recomputed on demand (null: stale). */
  #visible = new Map()
  #listeners = new Map()

  constructor(options) {
    const { session, reducers, clientId, snapshot } = options ?? {}
    if (typeof session !== 'string' || session === '') throw new TypeError('AhpStateMirror: `session` must be the session channel URI')
    if (typeof reducers?.reduceSession !== 'function' || typeof reducers?.reduceChat !== 'function') {
      throw new TypeError('AhpStateMirror: `reducers` must give reduceSession and reduceChat')
    }
    this.#reducers = reducers
    this.#sessionUri = session
    this.#clientId = clientId ?? `mirror-${Math.random().toString(36).slice(2, 10)}`
    this.#session = emptySession()
    if (snapshot !== undefined) this.seed(snapshot)
  }

  /** The `clientId` of this mirror's dispatches (the `origin` of their echoes). */
  get clientId() { return this.#clientId }

  /** The last `serverSeq` applied (or seeded). */
  get serverSeq() { return this.#lastSeq }

  /** Optimistic actions not yet echoed. */
  get pending() { return this.#pending.length }

  /** The session: confirmed state with the pending actions applied. */
  get session() { return this.#view(this.#sessionUri) }

  /** A chat's state (confirmed plus pending), or undefined if never seen. */
  chat(uri) {
    if (!this.#chats.has(uri) && !this.#pending.some((p) => p.channel === uri)) return undefined
    return this.#view(uri)
  }

  /** The URIs of the chats the mirror holds. */
  get chatUris() { return [...this.#chats.keys()] }

  on(event, fn) {
    if (!this.#listeners.has(event)) this.#listeners.set(event, new Set())
    this.#listeners.get(event).add(fn)
    return this
  }

  off(event, fn) {
    this.#listeners.get(event)?.delete(fn)
    return this
  }

  /**
   * Replaces the mirrored state with a snapshot `{serverSeq, session?,
   * chats?}` (given parts replace, others stay) and resumes after a gap.
   * Pending actions stay pending, re-applied on top.
   */
  seed(snapshot) {
    if (typeof snapshot?.serverSeq !== 'number') throw new TypeError('seed: `serverSeq` must be a number')
    this.#lastSeq = snapshot.serverSeq
    this.#gap = false
    if (snapshot.session !== undefined) this.#session = snapshot.session
    for (const [uri, chat] of Object.entries(snapshot.chats ?? {})) this.#chats.set(uri, chat)
    this.#visible.clear()
    this.#emit('change', { channel: this.#sessionUri })
    for (const uri of Object.keys(snapshot.chats ?? {})) this.#emit('change', { channel: uri })
  }

  /**
   * Applies `action` optimistically on `channel` and keeps it pending until
   * its echo; returns what to send to the host.
   */
  dispatch(channel, action) {
    if (typeof channel !== 'string' || channel === '') throw new TypeError('dispatch: `channel` must be a channel URI')
    if (typeof action !== 'object' || action === null || typeof action.type !== 'string') {
      throw new TypeError('dispatch: `action` must be an AHP action object')
    }
    const entry = { channel, clientSeq: this.#nextClientSeq++, action }
    this.#pending.push(entry)
    this.#visible.delete(channel)
    this.#emit('change', { channel })
    return { ...entry }
  }

  /** Applies one envelope of the host's stream (see the module comment). */
  receive(envelope) {
    if (this.#gap) return
    const seq = envelope.serverSeq
    if (seq <= this.#lastSeq) {
      this.#emit('duplicate', { serverSeq: seq })
      return
    }
    if (seq !== this.#lastSeq + 1) {
      this.#gap = true
      this.#emit('gap', { expected: this.#lastSeq + 1, got: seq })
      return
    }
    this.#lastSeq = seq
    const own = envelope.origin?.clientId === this.#clientId
      ? this.#pending.findIndex((p) => p.clientSeq === envelope.origin.clientSeq)
      : -1
    const mine = own >= 0 ? this.#pending.splice(own, 1)[0] : undefined
    if (mine !== undefined) this.#visible.delete(mine.channel)
    if (envelope.rejectionReason === undefined) this.#apply(envelope.channel, envelope.action)
    if (mine !== undefined) {
      if (envelope.rejectionReason !== undefined) {
        this.#emit('rejected', { clientSeq: mine.clientSeq, channel: mine.channel, action: mine.action, reason: envelope.rejectionReason })
      } else {
        this.#emit('confirmed', { clientSeq: mine.clientSeq })
      }
      if (mine.channel !== envelope.channel) this.#emit('change', { channel: mine.channel })
    }
    this.#emit('change', { channel: envelope.channel })
  }

  /** Applies `action` to the confirmed state of `channel`. */
  #apply(channel, action) {
    this.#visible.delete(channel)
    if (channel === this.#sessionUri) {
      this.#session = this.#reducers.reduceSession(this.#session, action).state
    } else {
      const chat = this.#chats.get(channel) ?? emptyChat(channel)
      this.#chats.set(channel, this.#reducers.reduceChat(chat, action).state)
    }
  }

  /** Confirmed state of `channel` with its pending actions re-applied in order. */
  #view(channel) {
    const cached = this.#visible.get(channel)
    if (cached !== undefined) return cached
    const session = channel === this.#sessionUri
    let state = session ? this.#session : (this.#chats.get(channel) ?? emptyChat(channel))
    const reduce = session ? this.#reducers.reduceSession : this.#reducers.reduceChat
    for (const p of this.#pending) if (p.channel === channel) state = reduce(state, p.action).state
    this.#visible.set(channel, state)
    return state
  }

  #emit(event, payload) {
    for (const fn of this.#listeners.get(event) ?? []) fn(payload)
  }
}

module.exports = { AhpStateMirror }
