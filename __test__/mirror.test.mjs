// AhpStateMirror (lib/mirror.js) with hand-made envelopes and the native
// reducers: duplicates and gaps of the serverSeq stream, seed, optimistic
// dispatch confirmed by its echo and rolled back by a rejection, chat channels.

import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { reduceSession, reduceChat, AhpStateMirror: Default } = require('../index.js')
const { AhpStateMirror } = require('../lib/mirror.js')

const SESSION = 'ahp-session:/s'
const CHAT = 'ahp-chat:/c'
const reducers = { reduceSession, reduceChat }

const title = (t) => ({ type: 'session/titleChanged', title: t })
const env = (serverSeq, action, more = {}) => ({ channel: SESSION, serverSeq, action, ...more })
const server = (id) => ({
  type: 'session/customizationUpdated',
  customization: { type: 'mcpServer', id, uri: `file:///${id}`, name: id, state: { kind: 'stopped' } },
})

function events(mirror) {
  const seen = []
  for (const e of ['change', 'gap', 'duplicate', 'rejected', 'confirmed']) mirror.on(e, (p) => seen.push([e, p]))
  return seen
}

test('envelopes in order are applied; a duplicate is ignored and reported', () => {
  const m = new AhpStateMirror({ session: SESSION, reducers })
  const seen = events(m)
  m.receive(env(1, title('A')))
  m.receive(env(2, title('B')))
  m.receive(env(2, title('X')))
  m.receive(env(1, title('Y')))
  assert.equal(m.session.title, 'B')
  assert.equal(m.serverSeq, 2)
  assert.deepEqual(seen.filter(([e]) => e === 'duplicate'), [['duplicate', { serverSeq: 2 }], ['duplicate', { serverSeq: 1 }]])
})

test('a gap is reported and nothing more is applied until seed; seed resumes', () => {
  const m = new AhpStateMirror({ session: SESSION, reducers })
  const seen = events(m)
  m.receive(env(1, title('A')))
  m.receive(env(3, title('C')))
  m.receive(env(2, title('B')))
  m.receive(env(4, title('D')))
  assert.equal(m.session.title, 'A')
  assert.deepEqual(seen.filter(([e]) => e === 'gap'), [['gap', { expected: 2, got: 3 }]])
  const base = new AhpStateMirror({ session: SESSION, reducers }).session
  m.seed({ serverSeq: 4, session: { ...base, title: 'D' } })
  assert.equal(m.session.title, 'D')
  m.receive(env(5, title('E')))
  assert.equal(m.session.title, 'E')
  assert.equal(m.serverSeq, 5)
})

test('a snapshot in the constructor sets the state and the serverSeq', () => {
  const base = new AhpStateMirror({ session: SESSION, reducers }).session
  const m = new AhpStateMirror({ session: SESSION, reducers, snapshot: { serverSeq: 10, session: { ...base, title: 'S' } } })
  m.receive(env(10, title('old')))
  assert.equal(m.session.title, 'S')
  m.receive(env(11, title('new')))
  assert.equal(m.session.title, 'new')
})

test('optimistic dispatch shows at once and is confirmed by its echo', () => {
  const m = new AhpStateMirror({ session: SESSION, reducers, clientId: 'ui' })
  const seen = events(m)
  m.receive(env(1, server('a')))
  const sent = m.dispatch(SESSION, title('mine'))
  assert.deepEqual(sent, { channel: SESSION, clientSeq: 1, action: title('mine') })
  assert.equal(m.session.title, 'mine')
  assert.equal(m.pending, 1)
  // A host action before the echo: the pending action stays on top.
  m.receive(env(2, title('host')))
  assert.equal(m.session.title, 'mine')
  m.receive(env(3, title('mine'), { origin: { clientId: 'ui', clientSeq: 1 } }))
  assert.equal(m.pending, 0)
  assert.equal(m.session.title, 'mine')
  assert.deepEqual(seen.filter(([e]) => e === 'confirmed'), [['confirmed', { clientSeq: 1 }]])
  // Another client's echo with the same clientSeq is an ordinary envelope.
  m.receive(env(4, title('other'), { origin: { clientId: 'them', clientSeq: 1 } }))
  assert.equal(m.session.title, 'other')
})

test('a rejection rolls the action back; the other pending actions stay, in order', () => {
  const m = new AhpStateMirror({ session: SESSION, reducers, clientId: 'ui' })
  const seen = events(m)
  m.receive(env(1, server('a')))
  m.receive(env(2, server('b')))
  const reference = new AhpStateMirror({ session: SESSION, reducers })
  reference.receive(env(1, server('a')))
  reference.receive(env(2, server('b')))
  const toggleA = { type: 'session/mcpServerStateChanged', id: 'a', state: { kind: 'starting' } }
  const one = m.dispatch(SESSION, toggleA)
  const two = m.dispatch(SESSION, title('t2'))
  const three = m.dispatch(SESSION, title('t3'))
  assert.equal(m.session.customizations.find((c) => c.id === 'a').state.kind, 'starting')
  assert.equal(m.session.title, 't3')
  m.receive(env(3, toggleA, { origin: { clientId: 'ui', clientSeq: one.clientSeq }, rejectionReason: 'no' }))
  assert.equal(m.pending, 2)
  assert.deepEqual(seen.filter(([e]) => e === 'rejected'), [['rejected', { clientSeq: 1, channel: SESSION, action: toggleA, reason: 'no' }]])
  // The state is the state without the rejected action; two and three still apply, in order.
  reference.receive(env(3, title('t2')))
  reference.receive(env(4, title('t3')))
  assert.deepEqual(m.session, reference.session)
  m.receive(env(4, title('t3'), { origin: { clientId: 'ui', clientSeq: three.clientSeq } }))
  assert.equal(m.session.title, 't2', 'two is still pending on top of the confirmed t3')
  m.receive(env(5, title('t2'), { origin: { clientId: 'ui', clientSeq: two.clientSeq }, rejectionReason: 'late' }))
  assert.equal(m.session.title, 't3')
  assert.equal(m.pending, 0)
})

test('a rejection arriving on the session channel rolls back a chat dispatch', () => {
  const m = new AhpStateMirror({ session: SESSION, reducers, clientId: 'ui' })
  const sent = m.dispatch(CHAT, { type: 'chat/activityChanged', activity: 'opt' })
  assert.equal(m.chat(CHAT).activity, 'opt')
  m.receive(env(1, sent.action, { origin: { clientId: 'ui', clientSeq: sent.clientSeq }, rejectionReason: 'not here' }))
  assert.equal(m.chat(CHAT), undefined, 'nothing but the rolled-back dispatch named the chat')
  assert.equal(m.pending, 0)
})

test('chat channels: each chat has its own state; session actions do not reach it', () => {
  const m = new Default({ session: SESSION })
  const other = 'ahp-chat:/d'
  m.receive({ channel: CHAT, serverSeq: 1, action: { type: 'chat/activityChanged', activity: 'one' } })
  m.receive({ channel: other, serverSeq: 2, action: { type: 'chat/activityChanged', activity: 'two' } })
  m.receive(env(3, title('session')))
  assert.equal(m.chat(CHAT).activity, 'one')
  assert.equal(m.chat(other).activity, 'two')
  assert.equal(m.chat('ahp-chat:/none'), undefined)
  assert.deepEqual(m.chatUris.sort(), [CHAT, other])
  assert.equal(m.session.title, 'session')
  // A seeded chat replaces the mirrored one; the next envelope applies on top.
  const seeded = { resource: CHAT, title: 'seeded', status: 1, modifiedAt: '', turns: [] }
  m.seed({ serverSeq: 3, chats: { [CHAT]: seeded } })
  assert.equal(m.session.title, 'session', 'seed without a session keeps it')
  m.receive({ channel: CHAT, serverSeq: 4, action: { type: 'chat/activityChanged', activity: 'after' } })
  assert.equal(m.chat(CHAT).activity, 'after')
  assert.equal(m.chat(CHAT).title, 'seeded')
})

test('a rejected envelope of another client is not applied', () => {
  const m = new AhpStateMirror({ session: SESSION, reducers })
  m.receive(env(1, title('no'), { origin: { clientId: 'them', clientSeq: 1 }, rejectionReason: 'refused' }))
  assert.equal(m.session.title, '')
  assert.equal(m.serverSeq, 1)
})

test('lib/mirror.js runs in a bare context: no require, process or other Node globals', async () => {
  const { readFileSync } = await import('node:fs')
  const vm = await import('node:vm')
  const source = readFileSync(new URL('../lib/mirror.js', import.meta.url), 'utf8')
  const module = { exports: {} }
  // Only what a browser bundle gives a CommonJS module: `module` and `exports`.
  vm.runInNewContext(source, { module, exports: module.exports })
  const m = new module.exports.AhpStateMirror({ session: SESSION, reducers })
  m.receive(env(1, title('bare')))
  assert.equal(m.session.title, 'bare')
  // The package subpath resolves to the same file.
  assert.equal(require.resolve('ahp-mcp-host/mirror'), require.resolve('../lib/mirror.js'))
  assert.equal(require.resolve('ahp-mcp-host'), require.resolve('../index.js'))
})
