// The AHP reducers as JavaScript functions (`reduceSession`, `reduceChat`
// from index.js, the `ahp` crate through the addon): every upstream reducer
// fixture in tests/fixtures/ahp/ gives its expected state through them, with
// the comparison rules of tests/ahp_fixtures.rs (object keys whose value is
// null removed on both sides, key order ignored); input that does not parse
// throws HostError `invalid_argument` naming `state` or `action`.

import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { EXPECTED_FIXTURES, fixtureFiles, readFixture, stripNulls } from './helpers/ahp-fixtures.mjs'

const require = createRequire(import.meta.url)
const { reduceSession, reduceChat, HostError } = require('../index.js')

test('every AHP reducer fixture gives its expected state through reduceSession / reduceChat', () => {
  const files = fixtureFiles()
  assert.equal(files.length, EXPECTED_FIXTURES, files.join('\n'))
  const failures = []
  const byReducer = { session: 0, chat: 0 }
  for (const file of files) {
    const fixture = readFixture(file)
    const reduce = { session: reduceSession, chat: reduceChat }[fixture.reducer]
    assert.ok(reduce, `${file}: reducer ${fixture.reducer}`)
    byReducer[fixture.reducer]++
    let state = fixture.initial
    for (const action of fixture.actions) {
      const result = reduce(state, action)
      assert.ok(['applied', 'noOp', 'outOfScope', 'invalid'].includes(result.outcome), `${file}: ${result.outcome}`)
      state = result.state
    }
    try {
      assert.deepEqual(stripNulls(state), stripNulls(fixture.expected))
    } catch (err) {
      failures.push(`${file}: ${err.message}`)
    }
  }
  assert.deepEqual(failures, [])
  assert.ok(byReducer.session > 0 && byReducer.chat > 0, JSON.stringify(byReducer))
})

test('a wrong final state is a mismatch under these rules (the comparison can fail)', () => {
  const file = fixtureFiles().find((f) => f.startsWith('034-'))
  const fixture = readFixture(file)
  // Only the initial state, no actions applied: differs from `expected`.
  assert.notDeepEqual(stripNulls(fixture.initial), stripNulls(fixture.expected))
})

const SESSION = { provider: 'mcp', title: '', status: 1, lifecycle: 'ready', activeClients: [], chats: [] }

test('reduceSession reports the outcome: applied, outOfScope for a chat action', () => {
  const applied = reduceSession(SESSION, { type: 'session/titleChanged', title: 'T' })
  assert.equal(applied.outcome, 'applied')
  assert.equal(applied.state.title, 'T')
  assert.equal(applied.error, undefined)
  // The input is not changed (pure function).
  assert.equal(SESSION.title, '')
  const other = reduceSession(SESSION, { type: 'chat/titleChanged', title: 'C' })
  assert.equal(other.outcome, 'outOfScope')
  assert.deepEqual(other.state, SESSION)
})

test('a state or action that does not parse throws HostError invalid_argument naming it', () => {
  const chat = { resource: 'ahp-chat:/c', title: '', status: 1, modifiedAt: '', turns: [] }
  for (const [fn, state, action, what] of [
    [reduceSession, { provider: 'mcp' }, { type: 'session/titleChanged', title: 'T' }, 'state'],
    [reduceSession, SESSION, [], 'action'],
    [reduceSession, { ...SESSION, status: 'idle' }, { type: 'session/titleChanged', title: 'T' }, 'state'],
    [reduceSession, SESSION, undefined, 'action'],
    [reduceChat, {}, { type: 'chat/titleChanged', title: 'T' }, 'state'],
    [reduceChat, chat, 'text', 'action'],
    [reduceChat, chat, { title: 'no type' }, 'action'],
    [reduceChat, null, { type: 'chat/titleChanged', title: 'T' }, 'state'],
    [reduceSession, SESSION, { type: 'session/titleChanged', title: 1n }, 'action'],
  ]) {
    assert.throws(() => fn(state, action), (err) => {
      assert.ok(err instanceof HostError, String(err))
      assert.equal(err.code, 'invalid_argument')
      assert.match(err.message, new RegExp(`^${what}: `))
      return true
    })
  }
})
