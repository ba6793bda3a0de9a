// Types of 'ahp-mcp-host/reducers-wasm' (lib/reducers-wasm.js): the AHP
// reducers compiled to WebAssembly, for a browser, a webview or Node
// without the native addon.

import type { ChatState, ReduceResult, SessionState, StateAction } from '../index'

export type { ChatState, ReduceOutcome, ReduceResult, SessionState, StateAction } from '../index'

/**
 * The two AHP reducers (AHP 1.0 "State model › Reducers", the `ahp`
 * crate's `apply_action_to_session` / `apply_action_to_chat`), with the
 * same signatures, results and errors as index.js's native `reduceSession`
 * and `reduceChat`.
 */
export interface AhpReducers {
  /**
   * Applies one action to a session state (`ahp-session:` channel). Pure:
   * returns the new state and the reducer's outcome (`applied`, `noOp`,
   * `outOfScope` for an action of another channel, `invalid` with `error`
   * and the state unchanged).
   * @throws an Error with `code: 'invalid_argument'` whose message starts
   *   with `state: ` or `action: ` when that argument does not parse as its type.
   */
  reduceSession(state: SessionState, action: StateAction): ReduceResult<SessionState>
  /** As {@link AhpReducers.reduceSession}, for a chat state (`ahp-chat:` channel). */
  reduceChat(state: ChatState, action: StateAction): ReduceResult<ChatState>
}

declare global {
  // `WebAssembly.Module` as a type where the DOM lib is not loaded (Node
  // projects with @types/node only); merges with the DOM lib's declaration.
  namespace WebAssembly {
    interface Module {}
  }
}

/**
 * Where the module comes from: a compiled `WebAssembly.Module`, its bytes,
 * a `URL`, or a string (a URL, relative to the page in a browser; in Node a
 * file path unless it has a scheme such as `https:` or `file:`).
 */
export type ReducersSource = WebAssembly.Module | ArrayBuffer | ArrayBufferView | URL | string

/**
 * Loads the reducers compiled to WebAssembly (`lib/ahp-reducers.wasm`, built
 * by `npm run build` / `npm run build:wasm`) and resolves them. `source`
 * omitted: Node reads `lib/ahp-reducers.wasm` next to the loader; elsewhere
 * it is required. A `file:` URL is read from disk in Node; other URLs are
 * fetched.
 *
 * Rejects with an Error whose `code` is `invalid_argument` (a bad `source`,
 * or a module without the reducers' exports) or `not_found` (the file
 * cannot be read, or the fetch answers an HTTP error); with a
 * `WebAssembly.CompileError` for bytes that are not WebAssembly.
 */
export declare function loadReducers(source?: ReducersSource): Promise<AhpReducers>
