// Form elicitations of AHP tool calls (callTool with chat, turnId,
// toolCallId) are published the AHP way too: `chat/inputRequested` on the
// chat plus `session/inputNeededSet` of kind `chatInput`, answered by an AHP
// client's `chat/inputCompleted` through `dispatch`. The first answer wins,
// the app's `elicitation` handler or the AHP client; the other is withdrawn
// (the handler's `context.signal` aborts; the AHP side gets
// `chat/inputCompleted` and `session/inputNeededRemoved`). Real servers: the
// official SDK v1 (2025 era, `elicitation/create` inside a tool; stdio and
// Streamable HTTP) and the TypeScript SDK v2 (2026-07-28, MRTR
// `input_required` rounds).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, waitFor, fixtureEntry, startHttpFixture, sleep } from './helpers/host.mjs'

const CHAT = 'ahp-chat:/c1'
const ORIGIN = { clientId: 'client-1', clientSeq: 1 }
const submitted = (value) => ({ state: 'submitted', value: { kind: 'text', value } })

// The two eras: a 2025-era `elicitation/create` inside the tool (SDK v1),
// and MRTR rounds (SDK v2 `survey`: name, then color).
const ERAS = [
  { era: '2025 elicitation/create', script: 'elicit-server.mjs', args: [], tool: 'elicit', fields: ['name'], expect: JSON.stringify({ action: 'accept', content: { name: 'Ada' } }) },
  { era: 'MRTR input_required', script: 'modern-server.mjs', args: ['stdio'], tool: 'survey', fields: ['name', 'color'], expect: 'Ada likes teal' },
]
const ANSWERS = { name: 'Ada', color: 'teal' }

async function addServer(host, { script, args }, name = 'el') {
  const id = await host.addServer({ name, config: fixtureEntry(script, args) })
  await waitState(host, id, 'ready')
  return id
}

function chatCall(host, serverId, name, toolCallId, extra = {}) {
  return host.callTool({ serverId, name, arguments: {}, chat: CHAT, turnId: 'turn-1', toolCallId, ...extra })
}

/** The open `chatInput` entry of tool call `toolCallId` (waits for it). */
function openInput(host, toolCallId, not = new Set()) {
  return waitFor(() => (host.getState().inputNeeded ?? []).find((e) =>
    e.kind === 'chatInput' && e.request.id.startsWith(`${toolCallId}/`) && !not.has(e.request.id)), { what: `an input request of ${toolCallId}` })
}

function complete(host, requestId, response, answers, seq = 1) {
  const action = { type: 'chat/inputCompleted', requestId, response }
  if (answers) action.answers = answers
  return host.dispatch(action, { ...ORIGIN, clientSeq: seq })
}

/** Action types emitted for the inputs of `toolCallId` and its completion, in order. */
function trail(actions, toolCallId) {
  return actions
    .map((e) => e.action)
    .filter((a) => [a.request?.id, a.request?.request?.id, a.requestId].some((id) => id?.startsWith(`${toolCallId}/`)) ||
      a.id?.includes(`:${toolCallId}/`) || (a.type === 'chat/toolCallComplete' && a.toolCallId === toolCallId))
    .map((a) => a.type === 'chat/inputCompleted' ? `${a.type}:${a.response}` : a.type)
}

/** A handler that never answers; records its contexts and the aborts of their signals. */
function waitingHandler() {
  const seen = { contexts: [], aborted: [] }
  const elicitation = (params, ctx) => new Promise((_, reject) => {
    seen.contexts.push(ctx)
    ctx.signal.addEventListener('abort', () => {
      seen.aborted.push(ctx.signal.reason?.code)
      reject(ctx.signal.reason)
    })
  })
  return { seen, elicitation }
}

for (const era of ERAS) {
  test(`${era.era}: the AHP client answers first; the JS handler is withdrawn (its signal aborts)`, async (t) => {
    const { seen, elicitation } = waitingHandler()
    const { host, actions } = newHost(t, { handlers: { elicitation } })
    const id = await addServer(host, era)
    const call = chatCall(host, id, era.tool, 'tc-a')
    const answered = new Set()
    for (const field of era.fields) {
      const entry = await openInput(host, 'tc-a', answered)
      answered.add(entry.request.id)
      assert.equal(entry.chat, CHAT)
      assert.deepEqual(entry.request.questions.map((q) => [q.kind, q.id]), [['text', field]])
      await waitFor(() => seen.contexts.length === answered.size, { what: 'the JS handler to be asked' })
      assert.deepEqual(seen.contexts.at(-1).chatInput, { chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-a', requestId: entry.request.id })
      const echo = complete(host, entry.request.id, 'accept', { [field]: submitted(ANSWERS[field]) })
      assert.equal(echo.rejectionReason, undefined)
      assert.equal(echo.channel, CHAT)
      assert.deepEqual(echo.origin, ORIGIN)
      await waitFor(() => seen.aborted.length === answered.size, { what: 'the JS handler to be withdrawn' })
    }
    const result = await call
    assert.equal(result.content[0].text, era.expect)
    assert.deepEqual(seen.aborted, era.fields.map(() => 'cancelled'))
    const round = ['chat/inputRequested', 'session/inputNeededSet', 'chat/inputCompleted:accept', 'session/inputNeededRemoved']
    assert.deepEqual(trail(actions, 'tc-a'), [...era.fields.flatMap(() => round), 'chat/toolCallComplete'])
    assert.deepEqual(host.getState().inputNeeded ?? [], [])
  })

  test(`${era.era}: the JS handler answers first; the AHP input is withdrawn`, async (t) => {
    let host
    const elicitation = async (params, ctx) => {
      // Answer once the AHP side is visible, so both are live.
      await openInput(host, 'tc-j', new Set())
      const field = Object.keys(params.requestedSchema.properties)[0]
      assert.ok(ctx.chatInput.requestId.startsWith('tc-j/'))
      return { action: 'accept', content: { [field]: ANSWERS[field] } }
    }
    let actions
    ;({ host, actions } = newHost(t, { handlers: { elicitation } }))
    const id = await addServer(host, era)
    const result = await chatCall(host, id, era.tool, 'tc-j')
    assert.equal(result.content[0].text, era.expect)
    const round = ['chat/inputRequested', 'session/inputNeededSet', 'chat/inputCompleted:accept', 'session/inputNeededRemoved']
    assert.deepEqual(trail(actions, 'tc-j'), [...era.fields.flatMap(() => round), 'chat/toolCallComplete'])
    // The host completed each input request with the handler's answer (no origin).
    const completions = actions.filter((e) => e.action.type === 'chat/inputCompleted')
    assert.deepEqual(completions.map((e) => [e.channel, e.origin, e.action.answers]),
      era.fields.map((f) => [CHAT, undefined, { [f]: submitted(ANSWERS[f]) }]))
    // A late AHP answer is refused.
    const late = complete(host, completions[0].action.requestId, 'accept', { name: submitted('Bob') })
    assert.match(late.rejectionReason, /no input request .* is waiting/)
    assert.deepEqual(host.getState().inputNeeded ?? [], [])
  })

  test(`${era.era}: without a JS handler the AHP client alone answers (chatElicitation declares the capability)`, async (t) => {
    const { host, actions } = newHost(t, { chatElicitation: true })
    const id = await addServer(host, era)
    // The client answers each input later than the call's inactivity
    // timeout: waiting on it is not inactivity (the server's own rounds
    // must each come within the timeout, which a loaded machine keeps).
    const call = chatCall(host, id, era.tool, 'tc-n', { timeoutMs: 1500 })
    const answered = new Set()
    for (const field of era.fields) {
      const entry = await openInput(host, 'tc-n', answered)
      answered.add(entry.request.id)
      await sleep(2000)
      assert.equal(complete(host, entry.request.id, 'accept', { [field]: submitted(ANSWERS[field]) }).rejectionReason, undefined)
    }
    assert.equal((await call).content[0].text, era.expect)
    assert.equal(trail(actions, 'tc-n').filter((a) => a === 'chat/inputRequested').length, era.fields.length)
  })

  test(`${era.era}: an AHP decline goes to the server as decline`, async (t) => {
    const { host } = newHost(t, { chatElicitation: true })
    const id = await addServer(host, era)
    const call = chatCall(host, id, era.tool, 'tc-d')
    const entry = await openInput(host, 'tc-d')
    assert.equal(complete(host, entry.request.id, 'decline').rejectionReason, undefined)
    const text = (await call).content[0].text
    assert.equal(text, era.tool === 'elicit' ? JSON.stringify({ action: 'decline' }) : 'declined (elicit)')
  })

  test(`${era.era}: a call cancelled while waiting withdraws its input (cancel) before it completes; the JS handler's signal aborts`, async (t) => {
    const { seen, elicitation } = waitingHandler()
    const { host, actions } = newHost(t, { handlers: { elicitation } })
    const id = await addServer(host, era)
    const abort = new AbortController()
    const call = chatCall(host, id, era.tool, 'tc-c', { signal: abort.signal })
    await openInput(host, 'tc-c')
    await waitFor(() => seen.contexts.length === 1, { what: 'the JS handler to be asked' })
    abort.abort(new Error('user pressed stop'))
    await assert.rejects(call, (e) => e.code === 'cancelled')
    assert.deepEqual(trail(actions, 'tc-c'),
      ['chat/inputRequested', 'session/inputNeededSet', 'chat/inputCompleted:cancel', 'session/inputNeededRemoved', 'chat/toolCallComplete'])
    await waitFor(() => seen.aborted.length === 1, { what: 'the JS handler to be withdrawn' })
    assert.deepEqual(host.getState().inputNeeded ?? [], [])
  })

  test(`${era.era}: unanswered, the call ends at maxTotalTimeoutMs (not timeoutMs) and its input is withdrawn`, async (t) => {
    const { host, actions } = newHost(t, { chatElicitation: true })
    const id = await addServer(host, era)
    const call = chatCall(host, id, era.tool, 'tc-t', { timeoutMs: 200, maxTotalTimeoutMs: 1_500 })
    await assert.rejects(call, (e) => {
      assert.equal(e.code, 'timeout')
      assert.deepEqual(e.data, { kind: 'total', ms: 1_500 })
      return true
    })
    assert.deepEqual(trail(actions, 'tc-t'),
      ['chat/inputRequested', 'session/inputNeededSet', 'chat/inputCompleted:cancel', 'session/inputNeededRemoved', 'chat/toolCallComplete'])
  })
}

test('the form keeps the schema order and types; answers that do not fit are refused, drafts count, defaults fill in', async (t) => {
  const { host, actions } = newHost(t, { chatElicitation: true })
  const id = await addServer(host, ERAS[0])
  const call = chatCall(host, id, 'form', 'tc-f')
  const entry = await openInput(host, 'tc-f')
  const { questions, message } = entry.request
  assert.equal(message, 'About you')
  assert.deepEqual(questions.map((q) => [q.id, q.kind]),
    [['name', 'text'], ['age', 'integer'], ['color', 'single-select'], ['tags', 'multi-select'], ['subscribe', 'boolean']])
  assert.deepEqual(questions[0], { kind: 'text', id: 'name', title: 'Name', message: 'Your full name', required: true })
  assert.deepEqual(questions[1], { kind: 'integer', id: 'age', message: 'age', required: false, min: 0 })
  assert.deepEqual(questions[2].options, [{ id: 'red', label: 'Red' }, { id: 'teal', label: 'Teal', recommended: true }])
  assert.deepEqual(questions[3].options, [{ id: 'a', label: 'a' }, { id: 'b', label: 'b' }])
  assert.equal(questions[4].defaultValue, true)
  const requestId = entry.request.id
  // A text for the integer field, a missing required field, an unknown option, an unknown question: refused.
  const refusals = [
    { name: submitted('Ada'), age: submitted('36') },
    { age: { state: 'submitted', value: { kind: 'number', value: 36 } } },
    { name: submitted('Ada'), color: { state: 'submitted', value: { kind: 'selected', value: 'blue' } } },
    { name: submitted('Ada'), nickname: submitted('A') },
  ].map((answers, i) => complete(host, requestId, 'accept', answers, i + 1).rejectionReason)
  assert.match(refusals[0], /"age" must be an integer/)
  assert.match(refusals[1], /"name" is required/)
  assert.match(refusals[2], /"color" must be one of \["red", "teal"\]/)
  assert.match(refusals[3], /no question "nickname"/)
  assert.equal((host.getState().inputNeeded ?? []).length, 1, 'still open')
  // A draft synced with chat/inputAnswerChanged counts at completion.
  const draft = host.dispatch({ type: 'chat/inputAnswerChanged', requestId, questionId: 'name', answer: { state: 'draft', value: { kind: 'text', value: 'Ada' } } }, { ...ORIGIN, clientSeq: 9 })
  assert.equal(draft.rejectionReason, undefined)
  assert.equal(draft.channel, CHAT)
  const bad = host.dispatch({ type: 'chat/inputAnswerChanged', requestId, questionId: 'nope', answer: submitted('x') }, { ...ORIGIN, clientSeq: 10 })
  assert.match(bad.rejectionReason, /no question "nope"/)
  const done = complete(host, requestId, 'accept', {
    age: { state: 'submitted', value: { kind: 'number', value: 36 } },
    color: { state: 'submitted', value: { kind: 'selected', value: 'red' } },
    tags: { state: 'submitted', value: { kind: 'selected-many', value: ['b'] } },
  }, 11)
  assert.equal(done.rejectionReason, undefined)
  const text = (await call).content[0].text
  // Content in the schema's order, typed; the default of `subscribe` filled in (SEP-1034).
  assert.equal(text, JSON.stringify({ action: 'accept', content: { name: 'Ada', age: 36, color: 'red', tags: ['b'], subscribe: true } }))
  assert.equal(actions.filter((e) => e.rejectionReason).length, 5)
})

test('an input request this host does not have is refused on the session channel', (t) => {
  const { host } = newHost(t)
  const echo = complete(host, 'nobody/elicitation/1', 'accept', {})
  assert.equal(echo.channel, 'ahp-session:/mcp-host')
  assert.match(echo.rejectionReason, /no input request "nobody\/elicitation\/1"/)
})

test('Streamable HTTP: each elicitation belongs to the call whose response stream carried it', async (t) => {
  const { url } = await startHttpFixture(t, 'elicit-server.mjs', {}, ['http'])
  const { host } = newHost(t, { chatElicitation: true })
  const id = await host.addServer({ name: 'el-http', config: { type: 'streamable-http', url } })
  await waitState(host, id, 'ready')
  const first = chatCall(host, id, 'elicit', 'tc-1')
  const a = await openInput(host, 'tc-1')
  const second = chatCall(host, id, 'elicit', 'tc-2')
  const b = await openInput(host, 'tc-2')
  assert.equal(complete(host, b.request.id, 'accept', { name: submitted('Bob') }).rejectionReason, undefined)
  assert.equal(complete(host, a.request.id, 'accept', { name: submitted('Ada') }, 2).rejectionReason, undefined)
  assert.equal((await first).content[0].text, JSON.stringify({ action: 'accept', content: { name: 'Ada' } }))
  assert.equal((await second).content[0].text, JSON.stringify({ action: 'accept', content: { name: 'Bob' } }))
})

test('stdio: an elicitation is published only while its call is the only tool call in flight', async (t) => {
  const asked = []
  const { host, actions } = newHost(t, {
    chatElicitation: true,
    // Only answers what is not published (the second call's elicitation).
    handlers: { elicitation: (params, ctx) => ctx.chatInput ? new Promise(() => {}) : (asked.push(ctx), { action: 'accept', content: { name: 'Cy' } }) },
  })
  const id = await addServer(host, ERAS[0])
  const first = chatCall(host, id, 'elicit', 'tc-1')
  const a = await openInput(host, 'tc-1')
  // Two calls in flight: the second one's elicitation has no link to its call.
  const second = await chatCall(host, id, 'elicit', 'tc-2')
  assert.equal(second.content[0].text, JSON.stringify({ action: 'accept', content: { name: 'Cy' } }))
  assert.equal(asked.length, 1)
  assert.equal(asked[0].chatInput, undefined)
  assert.equal(complete(host, a.request.id, 'accept', { name: submitted('Ada') }).rejectionReason, undefined)
  assert.equal((await first).content[0].text, JSON.stringify({ action: 'accept', content: { name: 'Ada' } }))
  // A call without chat context publishes nothing.
  const plain = await host.callTool({ serverId: id, name: 'elicit', arguments: {} })
  assert.equal(plain.content[0].text, JSON.stringify({ action: 'accept', content: { name: 'Cy' } }))
  assert.equal(actions.filter((e) => e.action.type === 'chat/inputRequested').length, 1)
})

test('a request the server cancels aborts the JS handler\'s signal (a call without chat context)', async (t) => {
  const { seen, elicitation } = waitingHandler()
  const { host } = newHost(t, { handlers: { elicitation } })
  const id = await addServer(host, ERAS[0])
  await assert.rejects(host.callTool({ serverId: id, name: 'elicit', arguments: {}, maxTotalTimeoutMs: 1_000 }), (e) => e.code === 'timeout')
  await waitFor(() => seen.aborted.length === 1, { what: 'the handler to be withdrawn' })
  assert.equal(seen.contexts[0].chatInput, undefined)
  assert.deepEqual(seen.aborted, ['cancelled'])
})
