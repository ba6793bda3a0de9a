// Tool calls as AHP tool calls, time limits and bounds, against real servers:
// server-everything (progress, structured content, image and resource
// results), slow-server.mjs (records every tools/call and
// notifications/cancelled in CANCEL_LOG), oversize-server.mjs (huge, deep
// and endless messages).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { newHost, waitState, waitFor, everythingEntry, fixtureEntry, tmpDir, sleep, rejectsWith, readJsonLines } from './helpers/host.mjs'

const CHAT = 'ahp-chat:/test-chat'
let seq = 0
const chatCall = (extra = {}) => ({ chat: CHAT, turnId: 'turn-1', toolCallId: `tc-${++seq}`, ...extra })
const onChat = (actions, toolCallId) => actions.filter((e) => e.channel === CHAT && e.action.toolCallId === toolCallId).map((e) => e.action)
/**
 * The chat actions of a finished call, once its `chat/toolCallComplete` has
 * reached JS (events and the call's result travel separately).
 */
async function settled(actions, toolCallId) {
  await waitFor(() => onChat(actions, toolCallId).some((a) => a.type === 'chat/toolCallComplete'), { what: `completion of ${toolCallId}` })
  return onChat(actions, toolCallId)
}

async function slowServer(t, host) {
  const log = join(tmpDir(t), 'calls.jsonl')
  const id = await host.addServer({ name: 'slow', config: { ...fixtureEntry('slow-server.mjs'), env: { CANCEL_LOG: log } } })
  await waitState(host, id, 'ready')
  return { id, log }
}

test('server-everything: progress in order, then a completed AHP tool call', async (t) => {
  const { host, actions } = newHost(t)
  const id = await host.addServer({ name: 'ev', config: everythingEntry() })
  await waitState(host, id, 'ready')
  const call = chatCall()
  const result = await host.callTool({ serverId: id, name: 'trigger-long-running-operation', arguments: { duration: 0.5, steps: 5 }, ...call })
  assert.match(result.content[0].text, /Long running operation completed/)
  const chat = (await settled(actions, call.toolCallId))
  assert.deepEqual(chat.map((a) => a.type), [...Array(5).fill('chat/toolCallContentChanged'), 'chat/toolCallComplete'])
  assert.deepEqual(chat.slice(0, 5).map((a) => a.content[0].text), ['1/5', '2/5', '3/5', '4/5', '5/5'])
  assert.deepEqual(chat[0]._meta.progress, { progress: 1, total: 5, message: null })
  const done = chat[5].result
  assert.equal(done.success, true)
  assert.match(done.content[0].text, /Long running operation completed/)
  // serverSeq stays gapless across the session and chat channels.
  assert.deepEqual(actions.map((e) => e.serverSeq), actions.map((_, i) => i + 1))
})

test('server-everything: structured content, image and embedded resource results map to AHP content', async (t) => {
  const { host, actions } = newHost(t)
  const id = await host.addServer({ name: 'ev', config: everythingEntry() })
  await waitState(host, id, 'ready')
  const structured = chatCall()
  const r1 = await host.callTool({ serverId: id, name: 'get-structured-content', arguments: { location: 'Chicago' }, ...structured })
  const [c1] = (await settled(actions, structured.toolCallId))
  assert.deepEqual(c1.result.structuredContent, r1.structuredContent)
  assert.equal(typeof c1.result.structuredContent.temperature, 'number')
  const image = chatCall()
  const r2 = await host.callTool({ serverId: id, name: 'get-tiny-image', ...image })
  const img = r2.content.find((b) => b.type === 'image')
  const [c2] = (await settled(actions, image.toolCallId))
  assert.deepEqual(c2.result.content.find((b) => b.type === 'embeddedResource'), { type: 'embeddedResource', data: img.data, contentType: img.mimeType })
  const resource = chatCall()
  const r3 = await host.callTool({ serverId: id, name: 'get-resource-reference', arguments: { resourceType: 'Text', resourceId: 3 }, ...resource })
  const embedded = r3.content.find((b) => b.type === 'resource')
  const [c3] = (await settled(actions, resource.toolCallId))
  const mapped = c3.result.content.find((b) => b.type === 'embeddedResource')
  assert.equal(Buffer.from(mapped.data, 'base64').toString('utf8'), embedded.resource.text)
  assert.equal(mapped.contentType, embedded.resource.mimeType)
})

test('isError results and JSON-RPC errors complete the AHP tool call as failed, distinctly', async (t) => {
  const { host, actions } = newHost(t)
  const { id } = await slowServer(t, host)
  const fail = chatCall()
  const r = await host.callTool({ serverId: id, name: 'fail', ...fail })
  assert.equal(r.isError, true)
  const [f] = (await settled(actions, fail.toolCallId))
  assert.deepEqual(f.result.error, { code: 'tool_error', message: 'it broke' })
  assert.equal(f.result.success, false)
  const proto = chatCall()
  await assert.rejects(host.callTool({ serverId: id, name: 'protocol_error', arguments: { code: 42 }, ...proto }),
    (e) => e.code === 'protocol_error' && e.rpcCode === undefined && e.data.code === 42 && e.data.data.detail === 'x' && /boom/.test(e.message))
  const [p] = (await settled(actions, proto.toolCallId))
  assert.equal(p.result.success, false)
  assert.equal(p.result.error.code, 'protocol_error')
  assert.equal(p.result.error.data.code, 42)
})

test('inactivity timeout is reset by progress; the absolute cap is not; each expiry sends one notifications/cancelled', async (t) => {
  const { host, actions } = newHost(t)
  const { id, log } = await slowServer(t, host)
  // 6 progress steps 150 ms apart outlast a 400 ms inactivity limit only because each one resets it.
  const r = await host.callTool({ serverId: id, name: 'progress', arguments: { steps: 6, intervalMs: 150 }, timeoutMs: 400 })
  assert.equal(r.content[0].text, 'done 6')
  // Progress keeps coming, but the 500 ms absolute cap ends the call.
  const capped = chatCall()
  await assert.rejects(host.callTool({ serverId: id, name: 'progress', arguments: { steps: 100, intervalMs: 50 }, timeoutMs: 400, maxTotalTimeoutMs: 500, ...capped }),
    (e) => e.code === 'timeout' && e.data.kind === 'total')
  const done = (await settled(actions, capped.toolCallId)).at(-1)
  assert.equal(done.type, 'chat/toolCallComplete')
  assert.equal(done.result.error.code, 'timeout')
  // No progress at all: the inactivity limit ends it.
  await assert.rejects(host.callTool({ serverId: id, name: 'never', timeoutMs: 300 }), (e) => e.code === 'timeout' && e.data.kind === 'inactivity')
  await waitFor(() => readJsonLines(log).filter((l) => 'reason' in l).length >= 2, { what: 'two cancellations logged' })
  await sleep(200)
  const entries = readJsonLines(log)
  const calls = entries.filter((l) => l.call)
  for (const name of ['never']) {
    const req = calls.find((c) => c.call === name)
    assert.equal(entries.filter((l) => 'reason' in l && l.requestId === req.requestId).length, 1, `one cancellation for ${name}`)
  }
  const cappedReq = calls.filter((c) => c.call === 'progress')[1]
  assert.equal(entries.filter((l) => 'reason' in l && l.requestId === cappedReq.requestId).length, 1, 'one cancellation for the capped call')
  assert.equal(entries.filter((l) => 'reason' in l).length, 2, 'the completed call was never cancelled')
  for (const c of calls) assert.notEqual(c.progressToken, null, 'every request carries a progress token')
  assert.equal(new Set(calls.map((c) => JSON.stringify(c.progressToken))).size, calls.length, 'progress tokens are unique')
  // The server stays ready and answers.
  assert.equal(host.getState().customizations.find((c) => c.id === id).state.kind, 'ready')
  assert.equal((await host.callTool({ serverId: id, name: 'rich' })).content[0].text, 'hello')
})

test('a response arriving after cancellation is dropped quietly and nothing is held', async (t) => {
  const { host, logs } = newHost(t)
  const { id, log } = await slowServer(t, host)
  const controller = new AbortController()
  const pending = host.callTool({ serverId: id, name: 'wait', arguments: { ms: 400, late: true }, signal: controller.signal })
  await waitFor(() => readJsonLines(log).some((l) => l.call === 'wait'), { what: 'the call to arrive' })
  controller.abort(new Error('stop'))
  await assert.rejects(pending, (e) => e.code === 'cancelled')
  await waitFor(() => readJsonLines(log).some((l) => 'lateAnswer' in l), { what: 'the late answer' })
  await sleep(200)
  assert.equal(host.getState().customizations.find((c) => c.id === id).state.kind, 'ready')
  assert.equal((await host.callTool({ serverId: id, name: 'rich' })).content[0].text, 'hello')
  assert.deepEqual(logs.filter((l) => l.level === 'error' && l.serverId === id), [])
  assert.equal(readJsonLines(log).filter((l) => 'reason' in l).length, 1)
})

test('oversized and deep results fail with limit_exceeded; memory stays bounded; the server stays usable', async (t) => {
  const { host, actions, logs } = newHost(t, { limits: { maxResultBytes: 1_000_000 } })
  const id = await host.addServer({ name: 'big', config: fixtureEntry('oversize-server.mjs') })
  await waitState(host, id, 'ready')
  const before = process.memoryUsage().rss
  // 50 MiB in one line: discarded by the stdio reader without buffering; the call fails at once.
  const call = chatCall()
  await assert.rejects(host.callTool({ serverId: id, name: 'big_result', arguments: { mb: 50 }, ...call }),
    (e) => e.code === 'limit_exceeded' && /stdio message limit/.test(e.message))
  assert.equal((await settled(actions, call.toolCallId)).at(-1).result.error.code, 'limit_exceeded')
  assert.ok(logs.some((l) => l.target === 'host.stdio' && /discarded the response to request/.test(l.message)))
  // Under the line limit but over maxResultBytes.
  await assert.rejects(host.callTool({ serverId: id, name: 'big_result', arguments: { mb: 2 } }),
    (e) => e.code === 'limit_exceeded' && /maxResultBytes \(1000000\)/.test(e.message) && e.message.includes(id))
  await assert.rejects(host.callTool({ serverId: id, name: 'deep_result', arguments: { depth: 100 } }),
    (e) => e.code === 'limit_exceeded' && /maxJsonDepth \(64\)/.test(e.message))
  // Too deep to parse at all: discarded by the reader, the call fails at once.
  await assert.rejects(host.callTool({ serverId: id, name: 'deep_result', arguments: { depth: 500 } }),
    (e) => e.code === 'limit_exceeded' && /levels deep/.test(e.message))
  assert.equal((await host.callTool({ serverId: id, name: 'echo' })).content[0].text, 'ok')
  // A 10 MiB line that never ends: the call times out, nothing accumulates.
  await assert.rejects(host.callTool({ serverId: id, name: 'endless_line', timeoutMs: 3_000 }), (e) => e.code === 'timeout')
  const grown = process.memoryUsage().rss - before
  assert.ok(grown < 48 * 1024 * 1024, `host RSS grew by ${grown} bytes`)
})

test('aborting a 60 s tool sends one notifications/cancelled with its request id and completes the AHP call as cancelled', async (t) => {
  const { host, actions } = newHost(t)
  const { id, log } = await slowServer(t, host)
  const controller = new AbortController()
  const call = chatCall()
  const pending = host.callTool({ serverId: id, name: 'wait', signal: controller.signal, ...call })
  await waitFor(() => readJsonLines(log).some((l) => l.call === 'wait'), { what: 'the call to arrive' })
  controller.abort(new Error('user pressed stop'))
  await assert.rejects(pending, (e) => e.code === 'cancelled' && e.cause?.message === 'user pressed stop')
  await waitFor(() => readJsonLines(log).some((l) => 'reason' in l), { what: 'the cancellation' })
  await sleep(200)
  const entries = readJsonLines(log)
  const req = entries.find((l) => l.call === 'wait')
  const cancels = entries.filter((l) => 'reason' in l)
  assert.equal(cancels.length, 1)
  assert.equal(cancels[0].requestId, req.requestId)
  assert.equal(typeof cancels[0].reason, 'string')
  const done = (await settled(actions, call.toolCallId)).at(-1)
  assert.equal(done.type, 'chat/toolCallComplete')
  assert.deepEqual([done.result.success, done.result.error.code], [false, 'cancelled'])
  assert.equal((await host.callTool({ serverId: id, name: 'rich' })).content[0].text, 'hello')
})

test('bad callTool options are refused with invalid_argument naming the field', async (t) => {
  const { host } = newHost(t)
  const { id } = await slowServer(t, host)
  await rejectsWith(() => host.callTool(null), 'invalid_argument')
  const sig = await rejectsWith(() => host.callTool({ serverId: id, name: 'rich', signal: {} }), 'invalid_argument')
  assert.match(sig.message, /^signal: /)
  const neg = await rejectsWith(() => host.callTool({ serverId: id, name: 'rich', timeoutMs: -5 }), 'invalid_argument')
  assert.match(neg.message, /^options\.timeoutMs: must be a non-negative integer, got -5/)
  assert.doesNotMatch(neg.message, /line \d+ column/)
  const args = await rejectsWith(() => host.callTool({ serverId: id, name: 'rich', arguments: [1, 2] }), 'invalid_argument')
  assert.match(args.message, /arguments: invalid type: sequence/)
  const partial = await rejectsWith(() => host.callTool({ serverId: id, name: 'rich', chat: CHAT }), 'invalid_argument')
  assert.match(partial.message, /chat, turnId and toolCallId go together/)
  await rejectsWith(() => host.callTool({ serverId: id, name: 'rich', chat: '', turnId: 't', toolCallId: 'x' }), 'invalid_argument')
  const unknown = await rejectsWith(() => host.callTool({ serverId: id, name: 'rich', timeout: 5 }), 'invalid_argument')
  assert.match(unknown.message, /unknown field `timeout`/)
  assert.equal((await host.callTool({ serverId: id, name: 'rich' })).content[0].text, 'hello')
})
