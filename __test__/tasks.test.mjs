// Task-based tool calls (Tasks extension `io.modelcontextprotocol/tasks`,
// SEP-2663): a `tools/call` answered with `resultType: "task"` is followed
// through `tasks/get` until it ends; `callTool` resolves the final result
// (or the task handle with `taskHandle: true`), status updates reach
// `onProgress` and, for an AHP tool call, `chat/toolCallContentChanged`;
// `inputRequests` are answered through the handlers (or an AHP client) and
// sent with `tasks/update`; aborting sends `tasks/cancel`. Real server: the
// official TypeScript SDK v2 with custom task handlers
// (fixtures/task-server.mjs), over stdio and Streamable HTTP. Tasks that
// outlive the app: a host disposed mid-task leaves the task recorded under
// dataDir and its AHP tool call running; a new host on the same dataDir
// re-attaches once the server is back and completes (or fails) the call.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, statSync, existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { newHost, waitState, waitFor, fixtureEntry, startHttpFixture, callText, rejectsWith, tmpDir } from './helpers/host.mjs'
import { replaySession } from './helpers/replay.mjs'

const CHAT = 'ahp-chat:/tasks'
const submitted = (value) => ({ state: 'submitted', value: { kind: 'text', value } })

async function taskServer(t, host, transport, name = `tasks-${transport}`) {
  const config = transport === 'http'
    ? { type: 'streamable-http', url: (await startHttpFixture(t, 'task-server.mjs', {}, ['http'])).url }
    : fixtureEntry('task-server.mjs', ['stdio'])
  const id = await host.addServer({ name, config })
  await waitState(host, id, 'ready')
  return id
}

for (const transport of ['stdio', 'http']) {
  test(`${transport}: a task-based tool resolves its final result; each status update reaches onProgress`, async (t) => {
    const { host } = newHost(t)
    const id = await taskServer(t, host, transport)
    const seen = []
    const result = await host.callTool({ serverId: id, name: 'work', arguments: { steps: 2 }, onProgress: (p) => seen.push([p.progress, p.message]) })
    assert.deepEqual(result.content, [{ type: 'text', text: 'worked 2 steps' }])
    assert.ok(!('resultType' in result), JSON.stringify(result))
    assert.deepEqual(seen, [[1, 'accepted'], [2, 'step 1 of 2'], [3, 'step 2 of 2'], [4, 'completed']])
    // The same tool through the handle option: the task handle, not followed.
    const handle = await host.callTool({ serverId: id, name: 'work', arguments: { steps: 1 }, taskHandle: true })
    assert.equal(handle.resultType, 'task')
    assert.equal(handle.status, 'working')
    assert.match(handle.taskId, /^task-work-/)
    assert.equal(handle.pollIntervalMs, 20)
  })

  test(`${transport}: input_required inside a task is answered by the elicitation handler and sent with tasks/update`, async (t) => {
    const asked = []
    const { host } = newHost(t, {
      handlers: { elicitation: async (params) => (asked.push(params.message), { action: 'accept', content: { name: 'Ada' } }) },
    })
    const id = await taskServer(t, host, transport)
    assert.equal(await callText(host, id, 'ask'), 'Hello, Ada')
    assert.deepEqual(asked, ['Your name?'])
  })

  test(`${transport}: a failed task rejects task_failed with its JSON-RPC error; a purged one task_expired`, async (t) => {
    const { host } = newHost(t)
    const id = await taskServer(t, host, transport)
    const err = await rejectsWith(() => host.callTool({ serverId: id, name: 'fail', arguments: {} }), 'task_failed')
    assert.match(err.message, /rate limit exceeded/)
    assert.match(err.message, /"fail"/)
    assert.equal(err.data.code, -32603)
    const gone = await rejectsWith(() => host.callTool({ serverId: id, name: 'vanish', arguments: {} }), 'task_expired')
    assert.match(gone.message, /no longer knows task "task-vanish-/)
  })

  test(`${transport}: aborting a task-based call sends tasks/cancel once`, async (t) => {
    const { host } = newHost(t)
    const id = await taskServer(t, host, transport)
    const ac = new AbortController()
    const seen = []
    const call = host.callTool({ serverId: id, name: 'hold', arguments: {}, signal: ac.signal, onProgress: (p) => seen.push(p.message) })
    await waitFor(() => seen.includes('holding'), { what: 'the task to be held' })
    ac.abort()
    await rejectsWith(() => call, 'cancelled')
    const cancelled = JSON.parse(await callText(host, id, 'cancelled'))
    assert.equal(cancelled.length, 1)
    assert.match(cancelled[0], /^task-hold-/)
  })

  test(`${transport}: as an AHP tool call: status as chat/toolCallContentChanged, the input as a chat input request, then chat/toolCallComplete; replay equals getState()`, async (t) => {
    const { host, actions } = newHost(t, { chatElicitation: true })
    const id = await taskServer(t, host, transport)
    const call = host.callTool({ serverId: id, name: 'ask', arguments: {}, chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-ask' })
    const entry = await waitFor(() => (host.getState().inputNeeded ?? []).find((e) => e.kind === 'chatInput' && e.request.id.startsWith('tc-ask/')), { what: 'the chat input request' })
    assert.deepEqual(entry.request.questions.map((q) => q.id), ['name'])
    const echo = host.dispatch({ type: 'chat/inputCompleted', requestId: entry.request.id, response: 'accept', answers: { name: submitted('Grace') } }, { clientId: 'c', clientSeq: 1 })
    assert.equal(echo.rejectionReason, undefined)
    assert.equal((await call).content[0].text, 'Hello, Grace')
    const mine = actions.filter((e) => e.channel === CHAT).map((e) => e.action)
    const changed = mine.filter((a) => a.type === 'chat/toolCallContentChanged').map((a) => a.content[0].text)
    assert.deepEqual(changed, ['1 accepted', '2 waiting for a name', '3 completed'])
    assert.equal(mine.at(-1).type, 'chat/toolCallComplete')
    assert.equal(mine.at(-1).result.success, true)
    assert.deepEqual(host.getState().inputNeeded ?? [], [])
    const session = actions.find((e) => e.action.type.startsWith('session/')).channel
    assert.deepEqual(replaySession(actions, session), host.getState())
  })
}

test('an AHP client cancelling a running task-based tool call (failed chat/toolCallComplete) sends tasks/cancel; the host adds no completion of its own', async (t) => {
  const { host, actions } = newHost(t)
  const id = await taskServer(t, host, 'stdio')
  const seen = []
  const call = host.callTool({ serverId: id, name: 'hold', arguments: {}, chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-x', onProgress: (p) => seen.push(p.message) })
  await waitFor(() => seen.includes('holding'), { what: 'the task to be held' })
  // Another call's cancel is refused: only a running task-based call is cancelled.
  const other = host.dispatch({ type: 'chat/toolCallComplete', turnId: 'turn-1', toolCallId: 'tc-none', result: { success: false, pastTenseMessage: 'Cancelled', error: { code: 'cancelled', message: 'stop' } } }, { clientId: 'ui', clientSeq: 1 })
  assert.match(other.rejectionReason, /.+/)
  const echo = host.dispatch({ type: 'chat/toolCallComplete', turnId: 'turn-1', toolCallId: 'tc-x', result: { success: false, pastTenseMessage: 'Cancelled', error: { code: 'cancelled', message: 'stop' } } }, { clientId: 'ui', clientSeq: 2 })
  assert.equal(echo.rejectionReason, undefined)
  assert.equal(echo.channel, CHAT)
  await rejectsWith(() => call, 'cancelled')
  const cancelled = JSON.parse(await callText(host, id, 'cancelled'))
  assert.equal(cancelled.length, 1)
  assert.match(cancelled[0], /^task-hold-/)
  const done = actions.filter((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete' && e.action.toolCallId === 'tc-x')
  assert.equal(done.length, 1)
  assert.deepEqual(done[0].origin, { clientId: 'ui', clientSeq: 2 })
  const session = actions.find((e) => e.action.type.startsWith('session/')).channel
  assert.deepEqual(replaySession(actions, session), host.getState())
})

test('a failed task-based AHP tool call completes failed with the task error', async (t) => {
  const { host, actions } = newHost(t)
  const id = await taskServer(t, host, 'stdio')
  await rejectsWith(() => host.callTool({ serverId: id, name: 'fail', arguments: {}, chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-f' }), 'task_failed')
  const done = actions.filter((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete').map((e) => e.action)
  assert.equal(done.length, 1)
  assert.equal(done[0].result.success, false)
  assert.equal(done[0].result.error.code, 'task_failed')
  assert.equal(done[0].result.error.data.code, -32603)
})

// ─── tasks that outlive the app (dataDir) ────────────────────────────────────

// One record file per host instance under <dataDir>/.tasks (src/host/tasks/store.rs).
const recordFiles = (dataDir) => {
  const dir = join(dataDir, '.tasks')
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.json')).map((n) => join(dir, n)) : []
}
const recorded = (dataDir) => recordFiles(dataDir).flatMap((f) => JSON.parse(readFileSync(f, 'utf8')).tasks)

for (const transport of ['stdio', 'http']) {
  const outcome = { completes: 'completes the AHP tool call', expired: 'fails it task_expired', cancelled: "lets an AHP client cancel it (tasks/cancel; the client's echo completes it)" }
  for (const ending of Object.keys(outcome)) {
    test(`${transport}: a host disposed mid-task leaves it recorded; a new host on the same dataDir re-attaches and ${outcome[ending]}`, async (t) => {
      const store = join(tmpDir(t, 'ahp-task-store-'), 'store.json')
      const http = transport === 'http' ? await startHttpFixture(t, 'task-server.mjs', {}, ['http', store]) : undefined
      const config = http ? { type: 'streamable-http', url: http.url } : fixtureEntry('task-server.mjs', ['stdio', store])
      const first = newHost(t)
      const dataDir = first.dataDir
      const id = await first.host.addServer({ name: 'tasks-restart', config })
      await waitState(first.host, id, 'ready')
      const seen = []
      const call = first.host.callTool({ serverId: id, name: 'hold', arguments: {}, chat: CHAT, turnId: 'turn-1', toolCallId: 'tc-r', onProgress: (p) => seen.push(p.message) })
      call.catch(() => {})
      await waitFor(() => seen.includes('holding'), { what: 'the task to be held' })
      // Written off the JS thread, so looked at until it is there.
      const records = await waitFor(() => recorded(dataDir).length && recorded(dataDir), { what: 'the task record' })
      assert.deepEqual(records.map((r) => [r.serverId, r.tool, r.chat, r.turnId, r.toolCallId]), [[id, 'hold', CHAT, 'turn-1', 'tc-r']])
      assert.match(records[0].taskId, /^task-hold-/)
      assert.ok(!JSON.stringify(records).includes('arguments'))
      assert.equal(recordFiles(dataDir).length, 1)
      assert.equal(statSync(recordFiles(dataDir)[0]).mode & 0o777, 0o600)
      assert.equal(statSync(join(dataDir, '.tasks')).mode & 0o777, 0o700)
      await first.host.dispose()
      await rejectsWith(() => call, 'disposed')
      // The AHP tool call stays running: the first host did not complete it.
      assert.equal(first.actions.filter((e) => e.action.type === 'chat/toolCallComplete').length, 0)
      assert.equal(recorded(dataDir).length, 1)

      const second = newHost(t, { dataDir })
      const again = await second.host.addServer({ name: 'tasks-restart', config })
      assert.equal(again, id)
      await waitState(second.host, id, 'ready')
      if (ending === 'cancelled') {
        await waitFor(() => second.actions.some((e) => e.channel === CHAT && e.action.type === 'chat/toolCallContentChanged' && e.action.toolCallId === 'tc-r'), { what: 'the re-attached task to be followed' })
        const failed = { success: false, pastTenseMessage: 'Cancelled', error: { code: 'cancelled', message: 'stop' } }
        const echo = second.host.dispatch({ type: 'chat/toolCallComplete', turnId: 'turn-1', toolCallId: 'tc-r', result: failed }, { clientId: 'ui', clientSeq: 1 })
        assert.equal(echo.rejectionReason, undefined)
        await waitFor(() => recorded(dataDir).length === 0, { what: 'the record to be removed' })
        const cancelled = JSON.parse(await callText(second.host, id, 'cancelled'))
        assert.deepEqual(cancelled, [records[0].taskId])
        assert.equal(second.actions.filter((e) => e.action.type === 'chat/toolCallComplete').length, 1)
        const session = second.actions.find((e) => e.action.type.startsWith('session/')).channel
        assert.deepEqual(replaySession(second.actions, session), second.host.getState())
        return
      }
      await callText(second.host, id, ending === 'completes' ? 'release' : 'purge')
      const done = await waitFor(() => second.actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete'), { what: 'the re-attached call to complete' })
      assert.equal(done.action.toolCallId, 'tc-r')
      assert.equal(done.action.turnId, 'turn-1')
      if (ending === 'completes') {
        assert.equal(done.action.result.success, true)
        assert.equal(done.action.result.content[0].text, 'released')
      } else {
        assert.equal(done.action.result.success, false)
        assert.equal(done.action.result.error.code, 'task_expired')
      }
      await waitFor(() => recorded(dataDir).length === 0, { what: 'the record to be removed' })
      const session = second.actions.find((e) => e.action.type.startsWith('session/')).channel
      assert.deepEqual(replaySession(second.actions, session), second.host.getState())
    })
  }
}

test('secrets stay out of tasks.json, actions and logs: a canary bearer header and a canary argument of a recorded task', async (t) => {
  const CANARY_TOKEN = 'canary-task-token-5d1e7b'
  const CANARY_ARG = 'canary-task-argument-92c4'
  const store = join(tmpDir(t, 'ahp-task-store-'), 'store.json')
  const http = await startHttpFixture(t, 'task-server.mjs', {}, ['http', store])
  const { host, actions, logs, dataDir } = newHost(t)
  const config = { type: 'streamable-http', url: http.url, headers: { Authorization: `Bearer ${CANARY_TOKEN}` } }
  const id = await host.addServer({ name: 'tasks-canary', config })
  await waitState(host, id, 'ready')
  const seen = []
  const call = host.callTool({ serverId: id, name: 'hold', arguments: { note: CANARY_ARG }, chat: CHAT, turnId: 'turn-c', toolCallId: 'tc-c', onProgress: (p) => seen.push(p.message) })
  await waitFor(() => seen.includes('holding'), { what: 'the task to be held' })
  await waitFor(() => recorded(dataDir).length === 1, { what: 'the task record' })
  const file = readFileSync(recordFiles(dataDir)[0], 'utf8')
  assert.equal(recorded(dataDir).length, 1, file)
  for (const canary of [CANARY_TOKEN, CANARY_ARG]) assert.ok(!file.includes(canary), `tasks.json holds ${canary}`)
  await callText(host, id, 'release')
  await call
  const published = JSON.stringify(actions) + JSON.stringify(logs)
  assert.ok(!published.includes(CANARY_TOKEN), 'the bearer token reached an action or a log')
})
