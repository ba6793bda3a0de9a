'use strict'
// The AHP reducers without the native addon: the `ahp` crate's
// `apply_action_to_session` / `apply_action_to_chat` compiled to
// WebAssembly (reducers/, `npm run build:wasm` → lib/ahp-reducers.wasm),
// for a browser, a webview or Node. Plain JavaScript with no imports, so a
// bundler (esbuild, platform browser) takes it as is; Node's file system is
// reached through `process.getBuiltinModule` only when a file is read.
//
// The module's ABI (reducers/src/wasm.rs): `alloc(len) -> ptr`,
// `dealloc(ptr, len)`, `reduce(scope, statePtr, stateLen, actionPtr,
// actionLen) -> BigInt(ptr << 32 | len)` of a UTF-8 JSON answer,
// `{state, outcome, error?}` or `{inputError: "<state|action>: <why>"}`.

/** `reduce`'s scope numbers (reducers/src/wasm.rs). */
const SCOPE_SESSION = 0
const SCOPE_CHAT = 1

/** Error with a stable string `code`, as index.js's `HostError`. */
class ReducerError extends Error {
  constructor(code, message) {
    super(message)
    this.name = 'HostError'
    this.code = code
  }
}

const isNode = () => typeof process === 'object' && typeof process.getBuiltinModule === 'function'

/** A string that is a URL (a scheme of two or more letters; `C:\…` is a path). */
const looksLikeUrl = (s) => /^[a-z][a-z0-9+.-]+:/i.test(s)

/** The bytes of the file at `path` (Node), with a hint when it is missing. */
function readFileBytes(path) {
  const fs = process.getBuiltinModule('node:fs')
  try {
    return fs.readFileSync(path)
  } catch (err) {
    const hint = err.code === 'ENOENT' ? ' (`npm run build:wasm` builds lib/ahp-reducers.wasm)' : ''
    const e = new ReducerError('not_found', `cannot read the reducers' WebAssembly at ${path}: ${err.message}${hint}`)
    e.cause = err
    throw e
  }
}

/** The bytes behind a URL: a `file:` URL read from disk in Node, anything else fetched. */
async function urlBytes(url) {
  if (url.protocol === 'file:' && isNode()) {
    return readFileBytes(process.getBuiltinModule('node:url').fileURLToPath(url))
  }
  const response = await fetch(url)
  if (!response.ok) {
    throw new ReducerError('not_found', `cannot fetch the reducers' WebAssembly at ${url}: HTTP ${response.status}`)
  }
  return new Uint8Array(await response.arrayBuffer())
}

/** The module the `source` of {@link loadReducers} names, compiled. */
async function compile(source) {
  if (source instanceof WebAssembly.Module) return source
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source)
  if (source === undefined || source === null) {
    if (!isNode() || typeof __dirname !== 'string') {
      throw new ReducerError('invalid_argument', 'source: required outside Node (the URL, bytes or WebAssembly.Module of ahp-reducers.wasm)')
    }
    const path = process.getBuiltinModule('node:path').join(__dirname, 'ahp-reducers.wasm')
    return WebAssembly.compile(readFileBytes(path))
  }
  if (source instanceof URL) return WebAssembly.compile(await urlBytes(source))
  if (typeof source === 'string' && source !== '') {
    if (isNode() && !looksLikeUrl(source)) return WebAssembly.compile(readFileBytes(source))
    const base = typeof location === 'object' && location ? location.href : undefined
    return WebAssembly.compile(await urlBytes(new URL(source, base)))
  }
  throw new ReducerError('invalid_argument', 'source: must be a WebAssembly.Module, an ArrayBuffer or view, a URL, or a non-empty URL or path string')
}

/** `value` as JSON text, or `invalid_argument` naming `name` (a cycle, a BigInt). */
function jsonText(name, value) {
  try {
    return JSON.stringify(value)
  } catch (err) {
    throw new ReducerError('invalid_argument', `${name}: cannot be serialized: ${err.message}`)
  }
}

/**
 * The arguments as JSON, checked as index.js checks them for the native
 * reducers (same messages): a state object, an action object with a string
 * `type` (an action of a type the reducers do not know is out of scope).
 */
function argumentsJson(state, action) {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw new ReducerError('invalid_argument', 'state: must be an AHP state object')
  }
  if (typeof action !== 'object' || action === null || typeof action.type !== 'string') {
    throw new ReducerError('invalid_argument', 'action: must be an AHP action object with a string `type`')
  }
  return [jsonText('state', state), jsonText('action', action)]
}

/** The two reducers over one instance's exports. */
function reducersOf(wasm) {
  const encoder = new TextEncoder()
  const decoder = new TextDecoder('utf-8', { fatal: true })
  // `memory.buffer` is replaced whenever the memory grows: view it afresh each time.
  const bytesAt = (ptr, len) => new Uint8Array(wasm.memory.buffer, ptr, len)

  /** Copies `text` into a new buffer of the module; returns `[ptr, len]`. */
  const put = (text) => {
    const bytes = encoder.encode(text)
    const ptr = wasm.alloc(bytes.length)
    bytesAt(ptr, bytes.length).set(bytes)
    return [ptr, bytes.length]
  }

  const run = (scope, state, action) => {
    const [stateJson, actionJson] = argumentsJson(state, action)
    const [statePtr, stateLen] = put(stateJson)
    let actionPtr = 0
    let actionLen = 0
    let answer
    try {
      ;[actionPtr, actionLen] = put(actionJson)
      const packed = wasm.reduce(scope, statePtr, stateLen, actionPtr, actionLen)
      const ptr = Number(packed >> 32n)
      const len = Number(packed & 0xffffffffn)
      try {
        answer = JSON.parse(decoder.decode(bytesAt(ptr, len)))
      } finally {
        wasm.dealloc(ptr, len)
      }
    } finally {
      wasm.dealloc(statePtr, stateLen)
      if (actionLen) wasm.dealloc(actionPtr, actionLen)
    }
    if (typeof answer.inputError === 'string') throw new ReducerError('invalid_argument', answer.inputError)
    return answer
  }

  return {
    reduceSession: (state, action) => run(SCOPE_SESSION, state, action),
    reduceChat: (state, action) => run(SCOPE_CHAT, state, action),
  }
}

/**
 * Loads the AHP reducers compiled to WebAssembly and resolves
 * `{reduceSession, reduceChat}`, the same functions (signatures, results,
 * errors) as index.js's native ones: `reduceSession(state, action)` applies
 * one AHP `StateAction` to a `SessionState`, `reduceChat` to a `ChatState`,
 * both through the `ahp` crate's reducers (AHP 1.0 "State model ›
 * Reducers"), and return `{state, outcome, error?}` (`outcome`: `applied`,
 * `noOp`, `outOfScope` or `invalid`; with `invalid` the state is unchanged
 * and `error` says why). Pure: the arguments are not modified.
 *
 * `source`: the module as a `WebAssembly.Module`, its bytes (`ArrayBuffer`
 * or a view), a `URL`, or a string (a URL, relative to the page in a
 * browser; in Node a file path unless it has a scheme). Omitted in Node:
 * `lib/ahp-reducers.wasm` next to this file. A `file:` URL is read from
 * disk in Node; other URLs are fetched.
 *
 * Errors (each with a stable `code`): `invalid_argument` for a bad
 * `source`, and from the reducers when `state` or `action` does not parse
 * as its type (the message starts with `state: ` or `action: `); `not_found` when
 * the module cannot be read or fetched; a `WebAssembly.CompileError` for
 * bytes that are not the module.
 *
 * @param {WebAssembly.Module | ArrayBuffer | ArrayBufferView | URL | string} [source]
 * @returns {Promise<{reduceSession: Function, reduceChat: Function}>}
 */
async function loadReducers(source) {
  const module = await compile(source)
  const { exports } = await WebAssembly.instantiate(module, {})
  for (const name of ['memory', 'alloc', 'dealloc', 'reduce']) {
    if (!(name in exports)) throw new ReducerError('invalid_argument', `source: not the AHP reducers module (no \`${name}\` export)`)
  }
  return reducersOf(exports)
}

module.exports = { loadReducers }
