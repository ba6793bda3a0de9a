'use strict'
// The answers of native requests (callTool, resources, prompts, the list
// walks, subscribe, readAppResource, authorize). A native request method
// returns nothing; its answer arrives later as a `response` item of the
// event batch (`{r: requestId, v: value}`, or `{r: requestId, a: answer}`
// with `answer` being `{ok: true, value}` or `{ok: false, code, message,
// data?, rpcCode?}`), so one JS callback settles every request answered
// since the last one ("drain on wake", as events), and items the request
// queued before its answer (its `progress`) are delivered before it.
//
// While a request waits, the host's keep-alive timer is kept ref'ed, so a
// process whose host was `unref()`ed still waits for its answers.

/** Pending native requests of one host, by request id (u32). */
class PendingResponses {
  #waiting = new Map()
  #keepAlive
  #wantRef = true
  #makeError
  #onBusy

  /**
   * `keepAlive`: the host's keep-alive timer; `makeError(answer)`: the
   * HostError of a failed answer (`{ok: false, code, message, …}`);
   * `onBusy()`: called when the first request starts waiting and when the
   * last one is settled (read `busy`).
   */
  constructor(keepAlive, makeError, onBusy = () => {}) {
    this.#keepAlive = keepAlive
    this.#makeError = makeError
    this.#onBusy = onBusy
  }

  /** Whether any request is waiting for its answer. */
  get busy() { return this.#waiting.size > 0 }

  /**
   * Starts request `id`: registers it, then calls `start()` (the native
   * method, which must return synchronously). Returns a promise of its
   * answer's `value`; a failed answer rejects with its HostError. If
   * `start` throws, nothing stays registered and the error propagates.
   */
  start(id, start) {
    const answer = new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject })
    })
    if (this.#waiting.size === 1) {
      if (!this.#wantRef) this.#keepAlive.ref()
      this.#onBusy()
    }
    try {
      start()
    } catch (err) {
      this.#forget(id)
      throw err
    }
    return answer
  }

  /**
   * One `response` item (`{r, v}` or `{r, a}`): settles its request (an
   * unknown id is ignored).
   */
  settle(item) {
    const id = item.r
    const waiter = this.#waiting.get(id)
    if (!waiter) return
    this.#forget(id)
    const answer = item.a
    if (answer === undefined) waiter.resolve(item.v)
    else if (answer.ok) waiter.resolve(answer.value)
    else waiter.reject(this.#makeError(answer))
  }

  /** Rejects every request still waiting with `error()` (dispose). */
  rejectAll(error) {
    for (const [id, waiter] of this.#waiting) {
      this.#forget(id)
      waiter.reject(error())
    }
  }

  /** The host's `ref()` / `unref()`: whether the timer is ref'ed with nothing pending. */
  setRef(wanted) {
    this.#wantRef = wanted
    if (wanted || this.#waiting.size > 0) this.#keepAlive.ref()
    else this.#keepAlive.unref()
  }

  #forget(id) {
    if (!this.#waiting.delete(id) || this.#waiting.size > 0) return
    if (!this.#wantRef) this.#keepAlive.unref()
    this.#onBusy()
  }
}

module.exports = { PendingResponses }
