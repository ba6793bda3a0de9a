// Mid-call step-up authorization through the JS API: a Streamable HTTP
// server (stepup-server.mjs, two static tokens) answers 403
// insufficient_scope to one tool call; the AHP tool call pauses in
// auth-required (chat action + session inputNeeded), other calls go on,
// authenticate() resumes it, and no token ever appears anywhere.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, waitState, serverState, waitFor, startHttpFixture } from './helpers/host.mjs'

const BASE = 'canary-base-token-51c0'
const ADMIN = 'canary-admin-token-9e2d'
const CHAT = 'ahp-chat:/stepup'

function stepupServer(t, env = {}) {
  return startHttpFixture(t, 'stepup-server.mjs', { BASE_TOKEN: BASE, ADMIN_TOKEN: ADMIN, ...env })
}

async function signedIn(t, env = {}) {
  const server = await stepupServer(t, env)
  const h = newHost(t)
  const id = await h.host.addServer({ name: 'stepup', config: { type: 'streamable-http', url: server.url } })
  await waitState(h.host, id, 'authRequired')
  const resource = serverState(h.host, id).resource.resource
  await h.host.authenticate({ resource, token: BASE })
  await waitState(h.host, id, 'ready')
  return { ...h, server, id, resource }
}

test('a 403 insufficient_scope pauses the AHP tool call; authenticate resumes it; the server stays ready', async (t) => {
  const { host, actions, logs, server, id, resource } = await signedIn(t)
  const [admin] = host.listTools().filter((x) => x.toolName === 'admin')
  const pending = host.callTool({ name: admin.name, chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-1' })
  await waitFor(() => host.getState().inputNeeded?.length === 1, { what: 'inputNeeded entry' })
  // Events reach JS apart from native state reads: wait for the action too.
  await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallAuthRequired'), { what: 'the auth-required action' })
  const needed = host.getState().inputNeeded[0]
  assert.equal(needed.kind, 'toolAuthentication')
  assert.equal(needed.chat, CHAT)
  assert.equal(needed.toolCall.auth.resource.resource, resource)
  assert.deepEqual(needed.toolCall.auth.requiredScopes, ['mcp:read', 'mcp:admin'])
  assert.deepEqual(needed.toolCall.contributor, { kind: 'mcp', customizationId: id })
  const paused = actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallAuthRequired')
  assert.equal(paused.action.auth.reason, 'insufficientScope')
  // Other calls keep working and the server never leaves ready.
  assert.equal((await host.callTool({ serverId: id, name: 'read' })).content[0].text, 'read-ok')
  assert.equal(serverState(host, id).kind, 'ready')
  await host.authenticate({ resource, token: ADMIN, scopes: ['mcp:read', 'mcp:admin'] })
  assert.equal((await pending).content[0].text, 'admin-ok')
  await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'the completion action' })
  const chat = actions.filter((e) => e.channel === CHAT).map((e) => e.action.type)
  assert.deepEqual(chat, ['chat/toolCallAuthRequired', 'chat/toolCallAuthResolved', 'chat/toolCallComplete'])
  assert.equal(host.getState().inputNeeded, undefined)
  assert.deepEqual(actions.map((e) => e.serverSeq), actions.map((_, i) => i + 1))
  assert.ok(!actions.some((e) => e.action.type === 'session/mcpServerStateChanged' && e.action.id === id && e.serverSeq > paused.serverSeq), 'no server state change during the step-up')
  const stats = await server.stats()
  assert.deepEqual([stats.forbidden, stats.calls.admin, stats.calls.read], [1, 1, 1])
  // The new token serves later calls without another 403.
  assert.equal((await host.callTool({ serverId: id, name: 'admin' })).content[0].text, 'admin-ok')
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  assert.ok(!everything.includes(BASE) && !everything.includes(ADMIN), 'a token leaked into actions, logs or state')
})

test('without a chat, a 403 insufficient_scope rejects with auth_required; a client can cancel a paused call', async (t) => {
  const { host, actions, id } = await signedIn(t)
  await assert.rejects(host.callTool({ serverId: id, name: 'admin' }), (e) => e.code === 'auth_required' && e.rpcCode === -32007 && e.data.insufficientScope === true)
  const pending = host.callTool({ serverId: id, name: 'admin', chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-2' })
  await waitFor(() => host.getState().inputNeeded?.length === 1, { what: 'inputNeeded entry' })
  const refused = host.dispatch({ type: 'chat/toolCallComplete', turnId: 'turn-1', toolCallId: 'tc-2', result: { success: true, pastTenseMessage: 'done' } }, { clientId: 'ui', clientSeq: 1 })
  assert.match(refused.rejectionReason, /only be completed as failed/)
  const echo = host.dispatch({ type: 'chat/toolCallComplete', turnId: 'turn-1', toolCallId: 'tc-2', result: { success: false, pastTenseMessage: 'Cancelled', error: { code: 'cancelled', message: 'declined' } } }, { clientId: 'ui', clientSeq: 2 })
  assert.equal(echo.channel, CHAT)
  assert.equal(echo.rejectionReason, undefined)
  await assert.rejects(pending, (e) => e.code === 'cancelled')
  await waitFor(() => host.getState().inputNeeded === undefined, { what: 'inputNeeded removed' })
  await waitFor(() => actions.filter((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete').length >= 2, { what: 'both echoes' })
  const completes = actions.filter((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete')
  assert.deepEqual(completes.map((e) => [e.origin?.clientSeq, e.rejectionReason === undefined]), [[1, false], [2, true]],
    'the two client dispatches (the first refused) and no host completion after the client cancelled')
  assert.equal(serverState(host, id).kind, 'ready')
})

// Issue 9: a server that leaves `ready` while a chat tool call waits for
// authentication settles it in the same step: the input-needed entry goes,
// the call completes as failed with a code naming the cause, the promise
// rejects with that code, and `authenticate` for the resource is refused
// with -32602 (nobody waits for it any more).
async function pausedCall(t, toolCallId) {
  const h = await signedIn(t)
  const [admin] = h.host.listTools().filter((x) => x.toolName === 'admin')
  const before = h.actions.length
  const pending = h.host.callTool({ name: admin.name, chat: CHAT, turnId: 'turn-1', toolCallId })
  pending.catch(() => {})
  await waitFor(() => h.host.getState().inputNeeded?.length === 1, { what: 'inputNeeded entry' })
  await waitFor(() => h.actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallAuthRequired'), { what: 'the auth-required action' })
  // Its inputNeededSet envelope too (state has the entry before the JS event
  // arrives; under load it can come in a later batch than the auth-required one).
  await waitFor(() => h.actions.slice(before).some((e) => e.action.type === 'session/inputNeededSet'), { what: 'the inputNeededSet action' })
  return { ...h, pending, from: h.actions.length }
}

/** Action types from index `from` on, without the client's own echo. */
function typesSince(actions, from) {
  return actions.slice(from).filter((e) => !e.origin).map((e) => e.action.type)
}

for (const [how, code, leave] of [
  ['a stop request', 'server_stopped', (host, id) => host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'ui', clientSeq: 1 })],
  ['a toggle off', 'server_disabled', (host, id) => host.dispatch({ type: 'session/customizationToggled', id, enablement: [{ kind: 'session', enabled: false }] }, { clientId: 'ui', clientSeq: 1 })],
  ['a removal', 'server_removed', (host, id) => host.remove(id)],
]) {
  test(`${how} rejects the paused call with ${code}, removes its inputNeeded entry and refuses a later authenticate (-32602)`, async (t) => {
    const { host, actions, id, resource, pending, from, server } = await pausedCall(t, 'tc-leave')
    await leave(host, id)
    await assert.rejects(pending, (e) => e.code === code && e.message.includes(id))
    await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'the completion' })
    assert.equal(host.getState().inputNeeded, undefined)
    const complete = actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete')
    assert.equal(complete.action.result.success, false)
    assert.equal(complete.action.result.error.code, code)
    const types = typesSince(actions, from)
    assert.deepEqual(types.slice(0, 2), ['session/inputNeededRemoved', 'chat/toolCallComplete'], types.join(', '))
    await assert.rejects(host.authenticate({ resource, token: ADMIN }), (e) => e.code === 'invalid_params' && e.rpcCode === -32602)
    assert.equal((await server.stats()).calls.admin, 0)
  })
}

test('dispose rejects the paused call with disposed and removes its inputNeeded entry before the final completion', async (t) => {
  const { host, actions, pending, from } = await pausedCall(t, 'tc-dispose')
  await host.dispose()
  await assert.rejects(pending, (e) => e.code === 'disposed')
  await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'the completion' })
  const types = typesSince(actions, from)
  const removed = types.indexOf('session/inputNeededRemoved')
  assert.ok(removed >= 0 && removed < types.indexOf('chat/toolCallComplete'), types.join(', '))
  const complete = actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete')
  assert.equal(complete.action.result.error.code, 'disposed')
})

test('disposeSync rejects the paused call with disposed and removes its inputNeeded entry before the final completion', async (t) => {
  const { host, actions, pending, from } = await pausedCall(t, 'tc-dispose-sync')
  host.disposeSync()
  await assert.rejects(pending, (e) => e.code === 'disposed')
  await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'the completion' })
  const types = typesSince(actions, from)
  const removed = types.indexOf('session/inputNeededRemoved')
  assert.ok(removed >= 0 && removed < types.indexOf('chat/toolCallComplete'), types.join(', '))
})

// Issue 9: a pushed token that expires mid-turn (EXPIRE_AFTER=1: the token's
// second tools/call gets 401 invalid_token). The AHP tool call pauses in
// auth-required (reason expired) with an inputNeeded entry while the server
// goes authRequired (expired); authenticate with a new token reconnects the
// server and the call resumes; a stop while paused still settles it.
async function expiredCall(t, toolCallId) {
  const h = await signedIn(t, { EXPIRE_AFTER: '1' })
  assert.equal((await h.host.callTool({ serverId: h.id, name: 'read' })).content[0].text, 'read-ok')
  const from = h.actions.length
  const [read] = h.host.listTools().filter((x) => x.toolName === 'read')
  const pending = h.host.callTool({ name: read.name, chat: CHAT, turnId: 'turn-1', toolCallId })
  pending.catch(() => {})
  await waitFor(() => h.host.getState().inputNeeded?.length === 1, { what: 'inputNeeded entry' })
  await waitFor(() => h.actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallAuthRequired'), { what: 'the auth-required action' })
  await waitState(h.host, h.id, 'authRequired')
  return { ...h, pending, from }
}

test('a token that expires mid-turn pauses the AHP tool call (expired); authenticate with a new token reconnects and resumes it', async (t) => {
  const { host, actions, logs, server, id, resource, pending, from } = await expiredCall(t, 'tc-exp')
  const needed = host.getState().inputNeeded[0]
  assert.equal(needed.kind, 'toolAuthentication')
  assert.equal(needed.toolCall.auth.reason, 'expired')
  assert.equal(needed.toolCall.auth.resource.resource, resource)
  const paused = actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallAuthRequired')
  assert.equal(paused.action.auth.reason, 'expired')
  assert.equal(serverState(host, id).reason, 'expired')
  await host.authenticate({ resource, token: ADMIN })
  assert.equal(serverState(host, id).kind, 'ready')
  assert.equal((await pending).content[0].text, 'read-ok')
  await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'the completion action' })
  const chat = actions.slice(from).filter((e) => e.channel === CHAT).map((e) => e.action.type)
  assert.deepEqual(chat, ['chat/toolCallAuthRequired', 'chat/toolCallAuthResolved', 'chat/toolCallComplete'])
  const complete = actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete')
  assert.equal(complete.action.result.success, true)
  assert.equal(host.getState().inputNeeded, undefined)
  assert.deepEqual(actions.map((e) => e.serverSeq), actions.map((_, i) => i + 1))
  const stats = await server.stats()
  assert.deepEqual([stats.calls.read, stats.expired], [2, 1])
  const everything = JSON.stringify({ actions, logs, state: host.getState() })
  assert.ok(!everything.includes(BASE) && !everything.includes(ADMIN), 'a token leaked into actions, logs or state')
})

test('a stop request settles a call paused on an expired token (server_stopped)', async (t) => {
  const { host, actions, id, resource, pending, from } = await expiredCall(t, 'tc-exp-stop')
  host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'ui', clientSeq: 1 })
  await assert.rejects(pending, (e) => e.code === 'server_stopped')
  await waitFor(() => actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'the completion' })
  assert.equal(host.getState().inputNeeded, undefined)
  const types = typesSince(actions, from)
  const removed = types.indexOf('session/inputNeededRemoved')
  assert.ok(removed >= 0 && removed < types.indexOf('chat/toolCallComplete'), types.join(', '))
  await assert.rejects(host.authenticate({ resource, token: ADMIN }), (e) => e.code === 'invalid_params' && e.rpcCode === -32602)
})
