'use strict'
// Per-request options of McpHost's request methods (`RequestOptions` in
// index.d.ts: `{signal?: AbortSignal, timeoutMs?: number}`): their checks,
// the errors an abort or a timeout rejects with, and the one `abort`
// listener per AbortSignal that every request sharing the signal goes
// through (so 1000 concurrent requests on one signal add one listener, not
// 1000: no `MaxListenersExceededWarning`, and none is left once they settle).

const { HostError } = require('./errors.js')
const hostError = (code, message, data) => new HostError(code, message, data)

// setTimeout's largest delay (2^31 − 1 ms, about 24.8 days); a longer one
// would fire at once.
const MAX_TIMEOUT_MS = 2 ** 31 - 1

/**
 * Checks a `RequestOptions` argument (`undefined` / `null`: none) and
 * returns `{signal, timeoutMs}` (each possibly `undefined`). Throws
 * HostError `invalid_argument` naming the field, with `name` as the
 * argument's path (default `options`): not an object; `signal` not an
 * AbortSignal; `timeoutMs` not a positive number of ms at most 2^31 − 1.
 */
function requestOptions(options, name = 'options') {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw hostError('invalid_argument', `${name}: must be an object ({signal?, timeoutMs?})`)
  }
  const { signal, timeoutMs } = options
  checkSignal(signal, `${name}.signal`)
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    throw hostError('invalid_argument', `${name}.timeoutMs: must be a positive number of ms (at most ${MAX_TIMEOUT_MS}), got ${shown(timeoutMs)}`)
  }
  return { signal, timeoutMs }
}

/** Throws HostError `invalid_argument` naming `name` unless `signal` is `undefined` or an AbortSignal. */
function checkSignal(signal, name) {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw hostError('invalid_argument', `${name}: must be an AbortSignal, got ${shown(signal)}`)
  }
}

function shown(value) {
  if (typeof value === 'number' || value === null) return String(value)
  return typeof value
}

/**
 * `err` (a HostError `cancelled`) carrying `signal.reason` as `cause`, its
 * message followed by the reason's message in parentheses.
 */
function withReason(err, signal) {
  err.cause = signal.reason
  const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason)
  err.message += ` (${why})`
  return err
}

/**
 * The HostError `cancelled` of `what` (e.g. `the request`) given up because
 * `signal` aborted; `started`: whether it had started.
 */
function abortError(signal, what, started = true) {
  const how = started ? 'was aborted' : 'was aborted before it started'
  return withReason(hostError('cancelled', `${what} ${how}`), signal)
}

/**
 * The HostError `timeout` of `what` given up after `ms` ms of
 * `RequestOptions.timeoutMs`: `data: {kind: 'total', ms}` (the shape of
 * callTool's `maxTotalTimeoutMs`: an absolute limit).
 */
function timeoutError(what, ms) {
  return hostError('timeout', `${what} timed out after ${ms} ms (options.timeoutMs)`, { kind: 'total', ms })
}

// AbortSignal → {listener, entries}: the one `abort` listener of ours on the
// signal and the requests waiting on it (each a function to call on abort).
const watched = new WeakMap()

/**
 * Calls `onAbort()` once when `signal` aborts; returns `unwatch()`, which
 * stops that (call it when the request settles). Every request on one
 * signal shares one `abort` listener, added with the first and removed
 * when the last unwatches (or when the signal aborted). A throwing
 * `onAbort` does not stop the others (its error is rethrown on the next
 * tick, as an uncaught exception).
 */
function watchAbort(signal, onAbort) {
  let record = watched.get(signal)
  if (record === undefined) {
    const entries = new Set()
    const listener = () => {
      watched.delete(signal)
      for (const entry of entries) {
        try {
          entry.onAbort()
        } catch (err) {
          process.nextTick(() => { throw err })
        }
      }
      entries.clear()
    }
    record = { listener, entries }
    watched.set(signal, record)
    signal.addEventListener('abort', listener, { once: true })
  }
  const entry = { onAbort }
  record.entries.add(entry)
  const owner = record
  return () => {
    if (!owner.entries.delete(entry) || owner.entries.size > 0) return
    if (watched.get(signal) === owner) watched.delete(signal)
    signal.removeEventListener('abort', owner.listener)
  }
}

/**
 * Runs one native request that `cancel()` stops, bounded by `signal` and
 * `timeoutMs` (from {@link requestOptions}). `start()` begins it and returns
 * its promise; on abort or timeout `cancel()` is called (once) and the
 * promise's settling decides: a `cancelled` HostError rejection becomes
 * {@link abortError} / {@link timeoutError}. An already-aborted signal
 * rejects before `start` is called. Without `cancel` (work that cannot be
 * stopped), abort and timeout reject at once and `undo(value)` is called if
 * the work later succeeds anyway.
 */
function bounded(options, what, start, how) {
  // Neither signal nor timeout: the request's own promise, nothing added.
  if (options.signal === undefined && options.timeoutMs === undefined) return start()
  return boundedBy(options, what, start, how)
}

async function boundedBy({ signal, timeoutMs }, what, start, { cancel, undo } = {}) {
  if (signal?.aborted) throw abortError(signal, what, false)
  const pending = start()
  let why
  let giveUp
  const given = new Promise((resolve, reject) => {
    giveUp = (reason) => {
      if (why !== undefined) return
      why = reason
      if (cancel) cancel()
      else reject(reason === 'timeout' ? timeoutError(what, timeoutMs) : abortError(signal, what))
    }
  })
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => giveUp('timeout'), timeoutMs)
  const unwatch = signal === undefined ? undefined : watchAbort(signal, () => giveUp('abort'))
  try {
    if (cancel) return await pending
    if (undo) pending.then((value) => { if (why !== undefined) undo(value) }, () => {})
    return await Promise.race([pending, given])
  } catch (err) {
    if (cancel && why !== undefined && err?.code === 'cancelled') {
      throw why === 'timeout' ? timeoutError(what, timeoutMs) : withReason(err, signal)
    }
    throw err
  } finally {
    clearTimeout(timer)
    unwatch?.()
  }
}

module.exports = { requestOptions, checkSignal, abortError, timeoutError, watchAbort, bounded, MAX_TIMEOUT_MS }
