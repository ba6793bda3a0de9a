// The AHP reducers compiled to WebAssembly ('ahp-mcp-host/reducers-wasm',
// lib/reducers-wasm.js over lib/ahp-reducers.wasm, built by `npm run build`):
//
// - every upstream reducer fixture of tests/fixtures/ahp/ (60 files) gives
//   its expected state, compared as tests/ahp_fixtures.rs does (object keys
//   whose value is null dropped on both sides, key order ignored; the
//   initial state's round trip through the reducers' types checked too);
// - the same results as the native reducers of index.js, when they are there;
// - input errors are `invalid_argument` naming `state` or `action`; the
//   module's raw ABI (reducers/src/wasm.rs) answers `inputError` for an
//   unknown scope and for bytes that are not UTF-8;
// - every kind of `source` loads (default path, bytes, Module, path, file:
//   URL, http: URL on 127.0.0.1), and bad ones fail with their codes.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { EXPECTED_FIXTURES, FIXTURES, fixtureFiles, readFixture, stripNulls } from './helpers/ahp-fixtures.mjs'

const require = createRequire(import.meta.url)
const ROOT = join(fileURLToPath(import.meta.url), '..', '..')
const WASM = join(ROOT, 'lib', 'ahp-reducers.wasm')
const { loadReducers } = require('../lib/reducers-wasm.js')

/**
 * An action of the other channel's reducer: out of scope, so the reducer
 * hands back its state as it deserialized and serialized it (the round trip).
 */
const OTHER_SCOPE = {
  session: { type: 'chat/titleChanged', title: 'round trip' },
  chat: { type: 'session/titleChanged', title: 'round trip' },
}

/** Runs one fixture through `reducers`; returns the final state and every outcome. */
function runFixture(reducers, fixture) {
  const reduce = fixture.reducer === 'chat' ? reducers.reduceChat : reducers.reduceSession
  const roundTrip = reduce(fixture.initial, OTHER_SCOPE[fixture.reducer])
  assert.equal(roundTrip.outcome, 'outOfScope')
  assert.deepEqual(stripNulls(roundTrip.state), stripNulls(fixture.initial), 'initial round trip')
  let state = fixture.initial
  const outcomes = []
  for (const action of fixture.actions) {
    const result = reduce(state, action)
    outcomes.push(result.outcome)
    state = result.state
  }
  return { state, outcomes }
}

test('every AHP reducer fixture passes through the WebAssembly reducers', async () => {
  const reducers = await loadReducers()
  const files = fixtureFiles()
  assert.equal(files.length, EXPECTED_FIXTURES, `fixture files in ${FIXTURES}: ${files.join(', ')}`)
  const byReducer = { session: 0, chat: 0 }
  const failures = []
  for (const file of files) {
    const fixture = readFixture(file)
    byReducer[fixture.reducer] += 1
    try {
      const { state } = runFixture(reducers, fixture)
      assert.deepEqual(stripNulls(state), stripNulls(fixture.expected))
    } catch (err) {
      failures.push(`${file}: ${err.message.split('\n').slice(0, 12).join('\n')}`)
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${files.length} fixtures failed`)
  assert.ok(byReducer.session > 0 && byReducer.chat > 0, JSON.stringify(byReducer))
  assert.equal(byReducer.session + byReducer.chat, EXPECTED_FIXTURES)
})

test('outcomes and purity: applied, noOp, invalid with its error; the arguments stay as they were', async () => {
  const { reduceSession, reduceChat } = await loadReducers()
  const session = { provider: 'mcp', title: '', status: 1, lifecycle: 'ready', activeClients: [], chats: [] }
  const before = structuredClone(session)
  const titled = reduceSession(session, { type: 'session/titleChanged', title: 'T' })
  assert.equal(titled.outcome, 'applied')
  assert.equal(titled.state.title, 'T')
  assert.equal('error' in titled, false)
  assert.deepEqual(session, before, 'the state argument is not modified')
  const toggled = reduceSession(session, { type: 'session/customizationToggled', id: 'none', enablement: [{ kind: 'session', enabled: false }] })
  assert.equal(toggled.outcome, 'noOp')
  assert.deepEqual(stripNulls(toggled.state), session)
  // ahp-types keeps an action it cannot read as one of its types (a newer
  // one, or a known type with a field missing) as an unknown action: out of scope.
  assert.equal(reduceSession(session, { type: 'session/titleChanged' }).outcome, 'outOfScope')
  assert.equal(reduceSession(session, { type: 'session/somethingNew', x: 1 }).outcome, 'outOfScope')

  // Timestamps inside WebAssembly (jiff in the chat reducer): a turn that
  // completes after `duration` ms is modified at startedAt + duration; a
  // startedAt that is no timestamp is `invalid` with the state kept.
  const chat = readFixture('019-tool-call-full-lifecycle-start-delta-ready-confirmed-complete.json').initial
  assert.equal(chat.activeTurn.startedAt, '1970-01-01T00:00:01.000Z')
  const done = reduceChat(chat, { type: 'chat/turnComplete', turnId: 'turn-1', duration: 1500 })
  assert.equal(done.outcome, 'applied')
  assert.equal(done.state.modifiedAt, '1970-01-01T00:00:02.500Z')
  assert.equal(done.state.activeTurn ?? null, null)
  assert.equal(done.state.turns.length, 1)
  const broken = { ...chat, activeTurn: { ...chat.activeTurn, startedAt: 'not-a-timestamp' } }
  const invalid = reduceChat(broken, { type: 'chat/turnComplete', turnId: 'turn-1', duration: 1500 })
  assert.equal(invalid.outcome, 'invalid')
  assert.match(invalid.error, /not-a-timestamp/)
  assert.deepEqual(stripNulls(invalid.state), stripNulls(broken))
})

test('the same results as the native reducers of index.js', async (t) => {
  let native
  try {
    native = require('../index.js')
  } catch (err) {
    t.skip(`no native addon here: ${err.message.split('\n')[0]}`)
    return
  }
  if (typeof native.reduceSession !== 'function' || typeof native.reduceChat !== 'function') {
    t.skip('index.js has no reduceSession/reduceChat yet (the native reducers of issue 12)')
    return
  }
  const wasm = await loadReducers()
  for (const file of fixtureFiles()) {
    const fixture = readFixture(file)
    const kind = fixture.reducer === 'chat' ? 'reduceChat' : 'reduceSession'
    let w = fixture.initial
    let n = fixture.initial
    for (const action of fixture.actions) {
      const fromWasm = wasm[kind](w, action)
      const fromNative = native[kind](n, action)
      assert.deepEqual(fromWasm, fromNative, `${file}: ${action.type}`)
      w = fromWasm.state
      n = fromNative.state
    }
  }
  // The same refusals, with the same codes and messages.
  const session = { provider: 'mcp', title: '', status: 1, lifecycle: 'ready', activeClients: [], chats: [] }
  const action = { type: 'session/titleChanged', title: 'T' }
  const thrown = (fn) => {
    try {
      fn()
    } catch (err) {
      return { code: err.code, message: err.message }
    }
    return assert.fail('did not throw')
  }
  for (const [state, act] of [[{}, action], [null, action], [session, undefined], [session, { title: 'x' }], [{ ...session, status: 'x' }, action]]) {
    assert.deepEqual(thrown(() => wasm.reduceSession(state, act)), thrown(() => native.reduceSession(state, act)))
    assert.deepEqual(thrown(() => wasm.reduceChat(state, act)), thrown(() => native.reduceChat(state, act)))
  }
})

test('a state or action that does not parse is invalid_argument naming it', async () => {
  const { reduceSession, reduceChat } = await loadReducers()
  const session = { provider: 'mcp', title: '', status: 1, lifecycle: 'ready', activeClients: [], chats: [] }
  const action = { type: 'session/titleChanged', title: 'T' }
  const refused = (fn, name) => assert.throws(fn, (err) => {
    assert.equal(err.code, 'invalid_argument')
    assert.ok(err.message.startsWith(`${name}: `), err.message)
    return true
  })
  refused(() => reduceSession({}, action), 'state')
  refused(() => reduceChat(session, action), 'state')
  refused(() => reduceSession({ ...session, status: 'ready' }, action), 'state')
  refused(() => reduceSession(session, 'session/titleChanged'), 'action')
  refused(() => reduceSession(session, undefined), 'action')
  refused(() => reduceSession(session, [action]), 'action')
  refused(() => reduceSession(session, { title: 'no type' }), 'action')
  refused(() => reduceChat([session], action), 'state')
  refused(() => reduceSession(null, action), 'state')
  const cyclic = { ...session }
  cyclic.self = cyclic
  refused(() => reduceSession(cyclic, action), 'state')
  // The instance is still usable after refusals.
  assert.equal(reduceSession(session, action).outcome, 'applied')
})

test('the raw ABI: answers are ptr<<32|len JSON; an unknown scope or non-UTF-8 input is an inputError', async () => {
  const { instance } = await WebAssembly.instantiate(readFileSync(WASM), {})
  const { memory, alloc, dealloc, reduce } = instance.exports
  const put = (bytes) => {
    const ptr = alloc(bytes.length)
    new Uint8Array(memory.buffer, ptr, bytes.length).set(bytes)
    return [ptr, bytes.length]
  }
  const call = (scope, stateBytes, actionBytes) => {
    const [sp, sl] = put(stateBytes)
    const [ap, al] = put(actionBytes)
    const packed = reduce(scope, sp, sl, ap, al)
    assert.equal(typeof packed, 'bigint')
    const ptr = Number(packed >> 32n)
    const len = Number(packed & 0xffffffffn)
    const answer = JSON.parse(new TextDecoder().decode(new Uint8Array(memory.buffer, ptr, len)))
    dealloc(ptr, len)
    dealloc(sp, sl)
    dealloc(ap, al)
    return answer
  }
  const enc = (v) => new TextEncoder().encode(JSON.stringify(v))
  const state = enc({ provider: 'mcp', title: '', status: 1, lifecycle: 'ready', activeClients: [], chats: [] })
  const action = enc({ type: 'session/titleChanged', title: 'T' })
  assert.equal(call(0, state, action).state.title, 'T')
  assert.match(call(2, state, action).inputError, /^scope: 2 /)
  assert.match(call(0, new Uint8Array([0xff, 0xfe]), action).inputError, /^state: not UTF-8/)
  assert.match(call(1, state, new Uint8Array([0xc3])).inputError, /^action: not UTF-8/)
  assert.match(call(0, new Uint8Array(), action).inputError, /^state: /)
  // Freed buffers are reused: many calls do not grow the memory.
  const pages = memory.buffer.byteLength
  for (let i = 0; i < 2000; i++) call(0, state, action)
  assert.equal(memory.buffer.byteLength, pages, 'linear memory grew: a buffer is not freed')
})

test('loadReducers takes bytes, a Module, a path, a file: URL and an http: URL; bad sources fail with their code', async (t) => {
  const bytes = readFileSync(WASM)
  const action = { type: 'session/titleChanged', title: 'T' }
  const session = { provider: 'mcp', title: '', status: 1, lifecycle: 'ready', activeClients: [], chats: [] }
  const works = async (source) => {
    const r = await loadReducers(source)
    assert.equal(r.reduceSession(session, action).state.title, 'T')
  }
  await works(bytes)
  await works(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
  await works(await WebAssembly.compile(bytes))
  await works(WASM)
  await works(pathToFileURL(WASM))
  await works(pathToFileURL(WASM).href)

  const server = createServer((req, res) => {
    if (req.url === '/ahp-reducers.wasm') {
      res.writeHead(200, { 'content-type': 'application/wasm' })
      res.end(bytes)
    } else {
      res.writeHead(404)
      res.end()
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => server.close(resolve)))
  const base = `http://127.0.0.1:${server.address().port}`
  await works(`${base}/ahp-reducers.wasm`)
  await works(new URL('/ahp-reducers.wasm', base))

  const rejects = (source, code, pattern) => assert.rejects(loadReducers(source), (err) => {
    assert.equal(err.code, code)
    assert.match(err.message, pattern)
    return true
  })
  await rejects(`${base}/missing.wasm`, 'not_found', /HTTP 404/)
  await rejects(join(ROOT, 'lib', 'no-such.wasm'), 'not_found', /no-such\.wasm/)
  await rejects(42, 'invalid_argument', /^source: /)
  await rejects('', 'invalid_argument', /^source: /)
  // A WebAssembly module that is not the reducers: the smallest valid module.
  await rejects(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]), 'invalid_argument', /no `memory` export/)
  await assert.rejects(loadReducers(new Uint8Array([1, 2, 3, 4])), WebAssembly.CompileError)
})
