// Types of 'ahp-mcp-host/reducers-wasm' (lib/reducers-wasm.js): the AHP
// reducers compiled to WebAssembly, for a browser, a webview or Node
// without the native addon.

import type { AhpReducers } from '../index.js'

export type { AhpReducers, ChatState, ReduceOutcome, ReduceResult, SessionState, StateAction } from '../index.js'

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
 * fetched. The functions it resolves have the signatures, results and
 * errors of index.js's native `reduceSession` / `reduceChat` (pure;
 * `invalid_argument` naming `state` or `action`).
 *
 * Rejects with an Error whose `code` is `invalid_argument` (a bad `source`,
 * or a module without the reducers' exports) or `not_found` (the file
 * cannot be read, or the fetch answers an HTTP error); with a
 * `WebAssembly.CompileError` for bytes that are not WebAssembly.
 */
export declare function loadReducers(source?: ReducersSource): Promise<AhpReducers>
