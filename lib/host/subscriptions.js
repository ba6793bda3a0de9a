'use strict'
// VS Code-style subscriptions on an EventEmitter: `host.onLog(listener)`
// returns a `Disposable` whose `dispose()` removes exactly that listener
// (see index.d.ts `McpHost.onAction` …; one `onX` per event of
// `McpHostEvents`, checked by __test__/disposables.test.mjs). `host.on(…)`
// keeps Node's semantics and returns the host.

const { invalidArgument } = require('./errors.js')

/**
 * One listener registration. `dispose()` (also `[Symbol.dispose]()`, so
 * `using sub = host.onLog(…)` works) removes it; calling it again does
 * nothing. It never touches other listeners or the emitter itself.
 */
class Subscription {
  #emitter
  #event
  #call

  constructor(emitter, event, call) {
    this.#emitter = emitter
    this.#event = event
    this.#call = call
    emitter.on(event, call)
  }

  /** Removes this subscription's listener; idempotent. */
  dispose() {
    if (this.#emitter === undefined) return
    this.#emitter.off(this.#event, this.#call)
    this.#emitter = undefined
    this.#call = undefined
  }

  [Symbol.dispose]() {
    this.dispose()
  }
}

/**
 * Subscribes `listener` to `event` of `emitter` and returns its
 * `Subscription`. The listener is registered through a wrapper of its own,
 * so disposing removes this registration only, even when the same function
 * is also registered elsewhere (with `on`, or another `onX` call); it is
 * called with the emitter as `this`, as `on` would. `listener` that is not
 * a function: HostError `invalid_argument` naming the parameter and the
 * method (`on` + the event's name, e.g. `onLog`).
 */
function subscribe(emitter, event, listener) {
  if (typeof listener !== 'function') {
    const method = `on${event[0].toUpperCase()}${event.slice(1)}`
    throw invalidArgument(`listener: must be a function (${method}), got ${listener === null ? 'null' : typeof listener}`)
  }
  return new Subscription(emitter, event, function subscription(...args) {
    return listener.apply(this, args)
  })
}

module.exports = { Subscription, subscribe }
