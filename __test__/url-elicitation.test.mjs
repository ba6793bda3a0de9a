// URL-mode elicitation (SEP-1036; MCP 2025-11-25 "Client Features ›
// Elicitation", URL mode; issue 31 item 2) against a real server of the
// official TypeScript SDK (fixtures/url-elicit-server.mjs) over stdio and
// Streamable HTTP. The host declares `elicitation.url` only with a URL
// handler (`handlers.elicitation: {handler, url: true}`) or
// `chatElicitation`; a URL request reaches the handler with the URL's
// origin, or an AHP client as a chat input request with `url`
// (`chat/inputRequested` + `session/inputNeededSet`, replayed here through
// the `ahp` reducers); the answer goes back as `{action}` alone. A
// `tools/call` answered -32042 shows its elicitations the same way, waits
// for `notifications/elicitation/complete` (sent when the test, playing the
// user's browser, opens the URL: the host never does) and is sent again
// once. The URLs carry a canary secret in their query: it is in the AHP
// input request and the handler's params, and in no log record, error or
// other action.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, fixtureEntry, waitState, waitFor, startHttpFixture, callText, HostError, McpHost } from './helpers/host.mjs'
import { replaySession } from './helpers/replay.mjs'

const CHAT = 'ahp-chat:/url-1'
const ORIGIN = { clientId: 'client-1', clientSeq: 1 }
const TRANSPORTS = [
  { name: 'stdio', config: async () => fixtureEntry('url-elicit-server.mjs') },
  { name: 'Streamable HTTP', config: async (t) => ({ type: 'streamable-http', url: (await startHttpFixture(t, 'url-elicit-server.mjs', {}, ['http'])).url }) },
]
const SECRET = /SECRET-[0-9a-f-]{36}/

async function addReady(t, host, transport = TRANSPORTS[0]) {
  const id = await host.addServer({ name: 'urls', config: await transport.config(t) })
  await waitState(host, id, 'ready')
  return id
}

const call = async (host, id, name, args) => JSON.parse(await callText(host, id, name, args))
const chatCall = (host, serverId, name, args, toolCallId, extra = {}) =>
  host.callTool({ serverId, name, arguments: args, chat: CHAT, turnId: 'turn-1', toolCallId, ...extra })

/** The open `chatInput` entry of tool call `toolCallId` (waits for it). */
const openInput = (host, toolCallId) => waitFor(() => (host.getState().inputNeeded ?? []).find((e) =>
  e.kind === 'chatInput' && e.request.id.startsWith(`${toolCallId}/`)), { what: `an input request of ${toolCallId}` })

const complete = (host, requestId, response, seq = 1) =>
  host.dispatch({ type: 'chat/inputCompleted', requestId, response }, { ...ORIGIN, clientSeq: seq })

/** Action types of the inputs of `toolCallId` and its completion, in order. */
const trail = (actions, toolCallId) => actions.filter((e) => e.rejectionReason === undefined).map((e) => e.action)
  .filter((a) => [a.request?.id, a.request?.request?.id, a.requestId].some((id) => id?.startsWith(`${toolCallId}/`)) ||
    a.id?.includes(`:${toolCallId}/`) || (a.type === 'chat/toolCallComplete' && a.toolCallId === toolCallId))
  .map((a) => a.type === 'chat/inputCompleted' ? `${a.type}:${a.response}` : a.type)

/**
 * The session channel's envelopes replayed through the `ahp` reducers equal
 * the host's state. `getState()` is read at once while envelopes reach the
 * listener in a later batch (a busy machine delays that batch), so this waits
 * until the listener has caught up, then compares (a difference that stays is
 * reported with the diff).
 */
async function assertReplayed(host, actions) {
  const channel = actions.find((e) => e.action.type.startsWith('session/')).channel
  const same = () => { try { assert.deepEqual(replaySession(actions, channel), host.getState()); return true } catch { return false } }
  await waitFor(same, { what: 'the replayed envelopes to equal getState()', timeout: 5_000 }).catch(() => {})
  assert.deepEqual(replaySession(actions, channel), host.getState())
}

/** The canary secrets of every URL handed out appear only in the AHP input request's `url`. */
function assertSecretOnlyInInputs(secrets, { actions, logs, errors = [] }) {
  assert.ok(secrets.length > 0, 'a URL with a secret was handed out')
  const shown = actions.filter((e) => !['chat/inputRequested', 'session/inputNeededSet'].includes(e.action.type))
  const inputs = actions.filter((e) => ['chat/inputRequested', 'session/inputNeededSet'].includes(e.action.type))
  const outside = JSON.stringify({ shown, logs, errors: errors.map((e) => [e.message, e.data]) })
  for (const secret of secrets) {
    assert.ok(!outside.includes(secret), `the URL's secret ${secret} leaked`)
    for (const e of inputs) {
      const request = e.action.request.request ?? e.action.request
      assert.ok(!JSON.stringify({ ...request, url: undefined }).includes(secret), 'only the url field carries it')
    }
  }
}

/** The canary secrets of the URLs in `actions` (the fixtures' `SECRET-<uuid>` and `SECRET-mrtr-<n>`). */
const secretsIn = (actions) => [...new Set(actions.flatMap((e) => JSON.stringify(e.action).match(/SECRET-[0-9a-z-]+/g) ?? []))]

for (const transport of TRANSPORTS) {
  test(`URL handler over ${transport.name}: declared; the handler gets the URL and its origin; accept goes back without content`, async (t) => {
    const seen = []
    const elicitation = {
      url: true,
      handler: async (params, context) => {
        seen.push({ params, context })
        if (params.mode === 'url') return { action: 'accept', content: { ignored: true } }
        return { action: 'decline' }
      },
    }
    const { host, logs, actions } = newHost(t, { handlers: { elicitation } })
    const id = await addReady(t, host, transport)
    assert.deepEqual((await call(host, id, 'caps')).elicitation, { form: {}, url: {} })
    const answer = await call(host, id, 'url_elicit', { id: 'e-handler' })
    assert.deepEqual(answer, { result: { action: 'accept' } }, 'URL mode answers carry no content')
    assert.equal(seen.length, 1)
    const { params, context } = seen[0]
    assert.equal(params.mode, 'url')
    assert.equal(params.elicitationId, 'e-handler')
    assert.equal(params.message, 'Connect your account')
    const url = new URL(params.url)
    assert.match(url.searchParams.get('code'), SECRET)
    assert.equal(context.origin, url.origin)
    assert.equal(context.serverId, id)
    assert.equal(context.chatInput, undefined)
    assert.ok(!JSON.stringify({ logs, actions }).includes(url.searchParams.get('code')))
  })

  test(`chat call over ${transport.name}: an AHP input request with url and origin, answered by the AHP client`, async (t) => {
    const { host, actions, logs } = newHost(t, { chatElicitation: true })
    const id = await addReady(t, host, transport)
    assert.deepEqual((await call(host, id, 'caps')).elicitation, { form: {}, url: {} })
    const pending = chatCall(host, id, 'url_elicit', { id: 'e-chat' }, 'tc-u')
    const entry = await openInput(host, 'tc-u')
    const url = new URL(entry.request.url)
    assert.equal(url.pathname, '/connect')
    assert.match(url.search, SECRET)
    assert.equal(entry.request.message, `Connect your account\n\nSite: ${url.origin}`)
    assert.equal(entry.request.questions, undefined)
    assert.equal(entry.chat, CHAT)
    await assertReplayed(host, actions)
    // An answer with question answers is refused; a plain accept is taken.
    const refused = host.dispatch({ type: 'chat/inputCompleted', requestId: entry.request.id, response: 'accept', answers: { x: { state: 'submitted', value: { kind: 'text', value: 'y' } } } }, ORIGIN)
    assert.match(refused.rejectionReason, /URL elicitation has no questions/)
    assert.equal(complete(host, entry.request.id, 'accept', 2).rejectionReason, undefined)
    const result = await pending
    assert.deepEqual(JSON.parse(result.content[0].text), { result: { action: 'accept' } })
    assert.deepEqual(trail(actions, 'tc-u'),
      ['chat/inputRequested', 'session/inputNeededSet', 'chat/inputCompleted:accept', 'session/inputNeededRemoved', 'chat/toolCallComplete'])
    await assertReplayed(host, actions)
    assertSecretOnlyInInputs(secretsIn(actions), { actions, logs })
  })

  test(`-32042 over ${transport.name}: shown to the AHP client, completed in the browser, the call retried once`, async (t) => {
    const { host, actions, logs } = newHost(t, { chatElicitation: true })
    const id = await addReady(t, host, transport)
    const pending = chatCall(host, id, 'needs_url', { id: `e-req-${transport.name}` }, 'tc-r')
    const entry = await openInput(host, 'tc-r')
    assert.match(entry.request.message, /^Authorize Example Co\n\nSite: http:\/\/127\.0\.0\.1:\d+$/)
    await assertReplayed(host, actions)
    // The user consents, then opens the URL (the host never does): the
    // server completes it, notifies, and the host sends the call again.
    assert.equal(complete(host, entry.request.id, 'accept').rejectionReason, undefined)
    assert.equal(await (await fetch(entry.request.url)).text(), 'connected')
    const result = await pending
    assert.deepEqual(JSON.parse(result.content[0].text), { done: `e-req-${transport.name}`, attempts: 2 })
    assert.deepEqual(trail(actions, 'tc-r'),
      ['chat/inputRequested', 'session/inputNeededSet', 'chat/inputCompleted:accept', 'session/inputNeededRemoved', 'chat/toolCallComplete'])
    await assertReplayed(host, actions)
    assertSecretOnlyInInputs(secretsIn(actions), { actions, logs })
  })
}

test('2026-07-28 MRTR: a URL input request of an AHP tool call is an AHP input with url; accept goes back alone', async (t) => {
  const { host, actions, logs } = newHost(t, { chatElicitation: true })
  const id = await host.addServer({ name: 'modern', config: fixtureEntry('modern-server.mjs', ['stdio', 'url-tools']) })
  await waitState(host, id, 'ready')
  const pending = chatCall(host, id, 'connect', {}, 'tc-m')
  const entry = await openInput(host, 'tc-m')
  assert.match(entry.request.url, /^https:\/\/connect\.example\.test\/link\?code=SECRET-mrtr-\d+$/)
  assert.equal(entry.request.message, 'Link your account\n\nSite: https://connect.example.test')
  await assertReplayed(host, actions)
  assert.equal(complete(host, entry.request.id, 'accept').rejectionReason, undefined)
  assert.equal((await pending).content[0].text, 'link elicit accept action,kind')
  assertSecretOnlyInInputs(secretsIn(actions), { actions, logs })
})

test('-32042: opened before anyone answered, the completion answers accept; the URL handler is withdrawn', async (t) => {
  const aborted = []
  const elicitation = {
    url: true,
    handler: (params, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => { aborted.push(params.elicitationId); reject(ctx.signal.reason) })),
  }
  const { host, actions } = newHost(t, { handlers: { elicitation } })
  const id = await addReady(t, host)
  const pending = chatCall(host, id, 'needs_url', { id: 'e-early' }, 'tc-e')
  const entry = await openInput(host, 'tc-e')
  await fetch(entry.request.url)
  assert.equal(JSON.parse((await pending).content[0].text).attempts, 2)
  // The host completed the input itself (no origin) with accept.
  const done = actions.find((e) => e.action.type === 'chat/inputCompleted' && e.action.requestId === entry.request.id)
  assert.equal(done.action.response, 'accept')
  assert.equal(done.origin, undefined)
  await waitFor(() => aborted.length === 1, { what: 'the URL handler withdrawn' })
  assert.deepEqual(aborted, ['e-early'])
})

test('-32042 without notification: a decline fails the call url_elicitation_required, with origins and never the URL', async (t) => {
  const { host, actions, logs } = newHost(t, { chatElicitation: true })
  const id = await addReady(t, host)
  const pending = chatCall(host, id, 'needs_url', { id: 'e-decline' }, 'tc-d')
  const entry = await openInput(host, 'tc-d')
  assert.equal(complete(host, entry.request.id, 'decline').rejectionReason, undefined)
  const error = await pending.then(() => assert.fail('resolved'), (e) => e)
  assert.ok(error instanceof HostError)
  assert.equal(error.code, 'url_elicitation_required')
  const origin = new URL(entry.request.url).origin
  assert.deepEqual(error.data, { reason: 'decline', elicitations: [{ elicitationId: 'e-decline', message: 'Authorize Example Co', origin }] })
  assert.match(error.message, /was declined/)
  assertSecretOnlyInInputs(secretsIn(actions), { actions, logs, errors: [error] })
})

test('-32042: the caller aborts while the input is open (withdrawn: cancel) or while the host waits for completion', async (t) => {
  const { host, actions } = newHost(t, { chatElicitation: true })
  const id = await addReady(t, host)
  // Open: the abort withdraws the input request before the call completes.
  const open = new AbortController()
  const first = chatCall(host, id, 'needs_url', { id: 'e-abort-open' }, 'tc-a1', { signal: open.signal })
  await openInput(host, 'tc-a1')
  open.abort(new Error('user pressed stop'))
  await assert.rejects(first, (e) => e.code === 'cancelled')
  assert.deepEqual(trail(actions, 'tc-a1'),
    ['chat/inputRequested', 'session/inputNeededSet', 'chat/inputCompleted:cancel', 'session/inputNeededRemoved', 'chat/toolCallComplete'])
  // Accepted, never completed: the abort ends the wait (the spec's manual control).
  const waiting = new AbortController()
  const second = chatCall(host, id, 'needs_url', { id: 'e-abort-wait' }, 'tc-a2', { signal: waiting.signal })
  const entry = await openInput(host, 'tc-a2')
  assert.equal(complete(host, entry.request.id, 'accept').rejectionReason, undefined)
  await waitFor(() => (host.getState().inputNeeded ?? []).length === 0, { what: 'the input answered' })
  waiting.abort(new Error('gave up'))
  await assert.rejects(second, (e) => e.code === 'cancelled')
  assert.deepEqual(trail(actions, 'tc-a2'),
    ['chat/inputRequested', 'session/inputNeededSet', 'chat/inputCompleted:accept', 'session/inputNeededRemoved', 'chat/toolCallComplete'])
  await assertReplayed(host, actions)
})

test('-32042 with nobody to show it: url_elicitation_required at once (reason unanswerable)', async (t) => {
  const { host, actions, logs } = newHost(t, {})
  const id = await addReady(t, host)
  const error = await host.callTool({ serverId: id, name: 'needs_url', arguments: { id: 'e-none' } }).then(() => assert.fail('resolved'), (e) => e)
  assert.equal(error.code, 'url_elicitation_required')
  assert.equal(error.data.reason, 'unanswerable')
  assert.deepEqual(error.data.elicitations.map((e) => [e.elicitationId, e.message]), [['e-none', 'Authorize Example Co']])
  assert.match(error.data.elicitations[0].origin, /^http:\/\/127\.0\.0\.1:\d+$/)
  assert.doesNotMatch(error.message + JSON.stringify(error.data), /SECRET|code=/)
  assert.deepEqual(actions.filter((e) => e.action.type.includes('input')), [])
  assert.doesNotMatch(JSON.stringify(logs), /SECRET/)
})

test('-32042 through a URL handler: required again after the one retry fails requiredAgain; no completion ends at the total limit', async (t) => {
  const opened = []
  // The "browser" of this handler: opens the URL the way the test says, then accepts.
  let how = ''
  const elicitation = {
    url: true,
    handler: async (params, context) => {
      opened.push({ url: params.url, origin: context.origin })
      await fetch(params.url + how)
      return { action: 'accept' }
    },
  }
  const { host, actions, logs } = newHost(t, { handlers: { elicitation } })
  const id = await addReady(t, host)
  // Completed: the retry succeeds without any AHP action.
  assert.equal(JSON.parse(await callText(host, id, 'needs_url', { id: 'e-ok' })).attempts, 2)
  // Notified but not completed on the server: the retry gets -32042 again.
  how = '&complete=no'
  const again = await host.callTool({ serverId: id, name: 'needs_url', arguments: { id: 'e-again' } }).then(() => assert.fail('resolved'), (e) => e)
  assert.equal(again.code, 'url_elicitation_required')
  assert.equal(again.data.reason, 'requiredAgain')
  assert.equal(opened.length, 2, 'the retry was not shown again')
  // Never notified: the call waits for the completion until its total limit.
  how = '&notify=no'
  const ended = await host.callTool({ serverId: id, name: 'needs_url', arguments: { id: 'e-silent' }, maxTotalTimeoutMs: 1500 })
    .then(() => assert.fail('resolved'), (e) => e)
  assert.equal(ended.code, 'timeout')
  assert.deepEqual(opened.map((o) => o.origin), opened.map((o) => new URL(o.url).origin))
  const secrets = opened.map((o) => new URL(o.url).searchParams.get('code'))
  assertSecretOnlyInInputs(secrets, { actions, logs, errors: [again, ended] })
})

test('-32042 listing a URL that is not http(s): nothing shown, a protocol_error as for any JSON-RPC error, a warn log says why', async (t) => {
  const { host, actions, logs } = newHost(t, { chatElicitation: true })
  const id = await addReady(t, host)
  const elicitations = [{ mode: 'url', message: 'm', url: 'javascript:alert(document.cookie)//?k=SECRET-1', elicitationId: 'x' }]
  const error = await chatCall(host, id, 'raw_required', { elicitations }, 'tc-j').then(() => assert.fail('resolved'), (e) => e)
  assert.equal(error.code, 'protocol_error')
  assert.equal(error.data.code, -32042)
  assert.equal(error.data.data.elicitations[0].url, '<url>')
  const warned = logs.find((l) => l.target === 'host.requests' && /-32042/.test(l.message))
  assert.match(warned.message, /data\.elicitations\[0\]: url has scheme "javascript": only http and https URLs are shown to the user: nothing was shown/)
  assert.equal(warned.level, 'warn')
  assert.doesNotMatch(JSON.stringify([error.message, error.data, logs]), /SECRET/)
  assert.deepEqual(trail(actions, 'tc-j'), ['chat/toolCallComplete'])
})

test('-32042 on a request other than tools/call: protocol_error whose data shows each URL as its origin', async (t) => {
  const { host, logs } = newHost(t, { chatElicitation: true })
  const id = await addReady(t, host)
  const error = await host.getPrompt(id, 'connect').then(() => assert.fail('resolved'), (e) => e)
  assert.equal(error.code, 'protocol_error')
  assert.equal(error.data.code, -32042)
  const [shown] = error.data.data.elicitations
  assert.equal(shown.elicitationId, 'prompt')
  assert.match(shown.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  assert.doesNotMatch(JSON.stringify([error.message, error.data, logs]), /SECRET|code=/)
})

test('URL elicitation/create: -32602 when URL mode is not declared or the URL is refused; the handler never sees it', async (t) => {
  const seen = []
  const { host } = newHost(t, { handlers: { elicitation: async (params) => { seen.push(params); return { action: 'accept' } } } })
  const id = await addReady(t, host)
  assert.deepEqual((await call(host, id, 'caps')).elicitation, { form: {} })
  const url = { mode: 'url', message: 'm', url: 'https://a.example/x', elicitationId: 'u1' }
  const undeclared = await call(host, id, 'raw_elicit', { params: url })
  assert.equal(undeclared.error.code, -32602)
  assert.match(undeclared.error.message, /URL mode was not declared/)
  const { host: withUrl } = newHost(t, { handlers: { elicitation: { handler: async (params) => { seen.push(params); return { action: 'accept' } }, url: true } } })
  const urlId = await addReady(t, withUrl)
  for (const [bad, why] of [
    ['file:///etc/passwd', /scheme "file"/],
    ['https://bank.example@evil.example/', /userinfo/],
    [`https://a.example/?q=${'x'.repeat(9000)}`, /MAX_ELICITATION_URL_BYTES/],
  ]) {
    const refused = await call(withUrl, urlId, 'raw_elicit', { params: { ...url, url: bad } })
    assert.equal(refused.error?.code, -32602, bad.slice(0, 40))
    assert.match(refused.error.message, why)
  }
  assert.deepEqual(seen, [])
})

test('handlers.elicitation registration: {handler, url} is checked', () => {
  const refused = (elicitation, pattern) => assert.throws(() => new McpHost({ handlers: { elicitation } }), (e) => e.code === 'invalid_argument' && pattern.test(e.message))
  refused({ handler: () => {}, url: 'yes' }, /options\.handlers\.elicitation\.url/)
  refused({ url: true }, /options\.handlers\.elicitation\.handler: must be a function/)
  refused({ handler: () => {}, tools: true }, /options\.handlers\.elicitation/)
  refused(42, /options\.handlers\.elicitation: must be a function or \{handler, url\?\}/)
})
