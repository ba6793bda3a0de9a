// The task records under dataDir (src/host/tasks/store.rs) are read the way
// mcp.json is (regular files only, bounded, non-blocking, never on the JS
// thread), bounded in count, shared safely by two hosts on one dataDir,
// written without following a planted link; no plugin data directory takes
// their place, and a Streamable HTTP server gets no data directory.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { newHost, waitState, waitFor, fixtureEntry, startHttpFixture, callText, rejectsWith, tmpDir, writePlugin, FIXTURES, NODE } from './helpers/host.mjs'

const CHAT = 'ahp-chat:/task-records'
const instance = () => randomBytes(8).toString('hex')
// The record files: one per host under .tasks/, and the single tasks.json
// of hosts before them (read too, so each test fails on such a host for
// what it checks, not for the layout).
const recordFiles = (dataDir) => {
  const dir = join(dataDir, '.tasks')
  const files = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.json')).map((n) => join(dir, n)) : []
  const former = join(dataDir, 'tasks.json')
  return existsSync(former) && statSync(former).isFile() ? [...files, former] : files
}
const recorded = (dataDir) => recordFiles(dataDir).flatMap((f) => {
  try { return JSON.parse(readFileSync(f, 'utf8')).tasks } catch { return [] }
})

function record(i, serverId) {
  return { taskId: `planted-${i}`, serverId, tool: 'hold', chat: CHAT, turnId: 'turn-p', toolCallId: `tc-p-${i}`, displayName: 'hold', recordedAtMs: Date.now(), ttlMs: null }
}

/** Runs fixtures/task-records-child.mjs on `dataDir` under a 3 GiB address-space limit; kills it after `deadline` ms. */
async function runChild(t, dataDir, deadline = 60_000) {
  const script = `ulimit -v 3145728; exec "$0" "$1" "$2"`
  const child = spawn('sh', ['-c', script, NODE, join(FIXTURES, 'task-records-child.mjs'), dataDir], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => { out += d })
  child.stderr.on('data', (d) => { err += d })
  const timer = setTimeout(() => child.kill('SIGKILL'), deadline)
  const exit = await new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  clearTimeout(timer)
  const logs = out.split('\n').filter((l) => l.startsWith('LOG ')).map((l) => JSON.parse(l.slice(4)))
  return { out, err, exit, logs }
}

for (const kind of ['a named pipe', 'a /dev/zero symlink']) {
  test(`${kind} as a task record file (and as the former tasks.json) neither blocks the host nor fills its memory`, async (t) => {
    const dataDir = tmpDir(t, 'ahp-task-records-')
    mkdirSync(join(dataDir, '.tasks'), { mode: 0o700 })
    const planted = join(dataDir, '.tasks', `${instance()}.json`)
    const paths = [planted, join(dataDir, 'tasks.json')]
    if (kind === 'a named pipe') {
      const made = spawn('mkfifo', paths)
      assert.equal(await new Promise((r) => made.on('exit', r)), 0)
    } else {
      for (const path of paths) symlinkSync('/dev/zero', path)
    }
    const { out, err, exit, logs } = await runChild(t, dataDir)
    const shown = `${out}\n${err}\n${JSON.stringify(exit)}`
    assert.deepEqual(exit, { code: 0, signal: null }, shown)
    assert.match(out, /CREATED[\s\S]*CALLED[\s\S]*DISPOSED/, shown)
    const rss = Number(/RSS (\d+)/.exec(out)[1])
    assert.ok(rss < 1024 ** 3, `RSS ${rss} bytes`)
    const warned = logs.filter((l) => l.level === 'warn').map((l) => l.message)
    // A link is never followed: the /dev/zero one is refused as a link.
    const why = kind === 'a named pipe' ? /named pipe \(FIFO\), not a regular file/ : /symbolic link, not a regular file/
    assert.ok(warned.some((m) => m.includes(planted) && why.test(m)), warned.join('\n'))
    // The planted file was the host's to clean up: removed, not read again by the next host.
    assert.equal(existsSync(planted), false)
  })
}

test('5,000 recorded tasks: at most 256 are taken, the rest dropped with a warning naming the count', async (t) => {
  const { host, actions, logs, dataDir } = newHost(t)
  mkdirSync(join(dataDir, '.tasks'), { mode: 0o700 })
  const tasks = Array.from({ length: 5_000 }, (_, i) => record(i, 'tasks-many'))
  writeFileSync(join(dataDir, '.tasks', `${instance()}.json`), JSON.stringify({ version: 1, tasks }), { mode: 0o600 })
  const id = await host.addServer({ name: 'tasks-many', config: fixtureEntry('task-server.mjs', ['stdio']) })
  await waitState(host, id, 'ready')
  const warning = await waitFor(() => logs.find((l) => l.target === 'host.tasks' && l.level === 'warn'), { what: 'the dropped-records warning' })
  assert.match(warning.message, /4744 recorded tasks beyond the limit of 256/)
  const completions = () => actions.filter((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete')
  // The server knows none of them: each taken one fails task_expired, then its record goes.
  await waitFor(() => recorded(dataDir).length === 0 && completions().length === 256, { timeout: 60_000, what: '256 completions, no record left', describe: () => `${completions().length} completions, ${recorded(dataDir).length} records` })
  assert.ok(completions().every((e) => e.action.result.error?.code === 'task_expired'))
  assert.equal(new Set(completions().map((e) => e.action.toolCallId)).size, 256)
  // A sibling's call is served meanwhile.
  assert.ok(JSON.parse(await callText(host, id, 'gets')) >= 0)
})

test('a record file planted as a symlink to records outside dataDir is not followed: nothing is adopted', async (t) => {
  const { host, actions, logs, dataDir } = newHost(t)
  mkdirSync(join(dataDir, '.tasks'), { mode: 0o700 })
  const outside = join(tmpDir(t, 'ahp-task-outside-'), 'records.json')
  writeFileSync(outside, JSON.stringify({ version: 1, tasks: [record(1, 'tasks-link'), record(2, 'tasks-link')] }))
  const planted = join(dataDir, '.tasks', `${instance()}.json`)
  symlinkSync(outside, planted)
  const id = await host.addServer({ name: 'tasks-link', config: fixtureEntry('task-server.mjs', ['stdio']) })
  await waitState(host, id, 'ready')
  const warning = await waitFor(() => logs.find((l) => l.target === 'host.tasks' && l.level === 'warn' && l.message.includes(planted)), { what: 'the refused-link warning' })
  assert.match(warning.message, /symbolic link, not a regular file/)
  assert.equal(JSON.parse(await callText(host, id, 'gets')), 0, 'the server was asked about adopted tasks')
  assert.equal(actions.filter((e) => e.channel === CHAT).length, 0, 'chat actions for calls this host never made')
  assert.ok(existsSync(outside), 'the link target is left alone')
})

test('two hosts on one dataDir keep each other\'s task records', async (t) => {
  const dataDir = tmpDir(t, 'ahp-task-shared-')
  const storeA = join(tmpDir(t, 'ahp-task-store-'), 'a.json')
  const storeB = join(tmpDir(t, 'ahp-task-store-'), 'b.json')
  const configA = fixtureEntry('task-server.mjs', ['stdio', storeA])
  const configB = fixtureEntry('task-server.mjs', ['stdio', storeB])
  const a = newHost(t, { dataDir })
  const b = newHost(t, { dataDir })
  const hold = async (ctx, name, config, toolCallId) => {
    const id = await ctx.host.addServer({ name, config })
    await waitState(ctx.host, id, 'ready')
    const seen = []
    const call = ctx.host.callTool({ serverId: id, name: 'hold', arguments: {}, chat: CHAT, turnId: 'turn-s', toolCallId, onProgress: (p) => seen.push(p.message) })
    call.catch(() => {})
    await waitFor(() => seen.includes('holding'), { what: `${toolCallId} to be held` })
    await waitFor(() => recorded(dataDir).some((r) => r.toolCallId === toolCallId), { what: `${toolCallId} recorded` })
    return { id, call }
  }
  const first = await hold(a, 'srv-a', configA, 'tc-a')
  await hold(b, 'srv-b', configB, 'tc-b')
  // Host A's task ends: its record goes, host B's stays.
  await callText(a.host, first.id, 'release')
  await first.call
  await waitFor(() => !recorded(dataDir).some((r) => r.toolCallId === 'tc-a'), { what: 'tc-a unrecorded' })
  assert.deepEqual(recorded(dataDir).map((r) => r.toolCallId), ['tc-b'])
  await b.host.dispose()
  // Host A, still running, never took host B's task.
  assert.equal(a.actions.filter((e) => e.action.type === 'chat/toolCallComplete' && e.action.toolCallId === 'tc-b').length, 0)
  // A third host adds B's server and completes B's call.
  const c = newHost(t, { dataDir })
  const id = await c.host.addServer({ name: 'srv-b', config: configB })
  await waitState(c.host, id, 'ready')
  await waitFor(() => c.actions.some((e) => e.action.type === 'chat/toolCallContentChanged' && e.action.toolCallId === 'tc-b'), { what: 'tc-b followed again' })
  await callText(c.host, id, 'release')
  const done = await waitFor(() => c.actions.find((e) => e.action.type === 'chat/toolCallComplete' && e.action.toolCallId === 'tc-b'), { what: 'tc-b completed by the third host' })
  assert.equal(done.action.result.success, true)
  await waitFor(() => recorded(dataDir).length === 0, { what: 'no record left' })
})

test('a planted tasks.json.tmp symlink is not followed; plugins named tasks.json or .tasks do not take the records\' place', async (t) => {
  const { host, dataDir } = newHost(t)
  const victim = join(tmpDir(t, 'ahp-task-victim-'), 'victim.txt')
  writeFileSync(victim, 'untouched')
  symlinkSync(victim, join(dataDir, 'tasks.json.tmp'))
  for (const name of ['tasks.json', '.tasks']) {
    const root = writePlugin(join(tmpDir(t), name), { mcpServers: { tools: fixtureEntry('tools-server.mjs') } })
    await host.addPlugin({ root, name })
    await waitState(host, `${name}/tools`, 'ready')
  }
  const id = await host.addServer({ name: 'tasks-links', config: fixtureEntry('task-server.mjs', ['stdio']) })
  await waitState(host, id, 'ready')
  const seen = []
  const call = host.callTool({ serverId: id, name: 'hold', arguments: {}, chat: CHAT, turnId: 'turn-l', toolCallId: 'tc-l', onProgress: (p) => seen.push(p.message) })
  await waitFor(() => seen.includes('holding'), { what: 'the task to be held' })
  await waitFor(() => recorded(dataDir).length === 1, { what: 'the task record', describe: () => readdirSync(dataDir).join(', ') })
  assert.equal(readFileSync(victim, 'utf8'), 'untouched')
  assert.ok(statSync(join(dataDir, '.tasks')).isDirectory())
  assert.ok(readdirSync(dataDir).some((n) => /^\.tasks-[0-9a-f]{8}$/.test(n)), readdirSync(dataDir).join(', '))
  await callText(host, id, 'release')
  await call
  await waitFor(() => recorded(dataDir).length === 0, { what: 'the record removed' })
  assert.equal(readFileSync(victim, 'utf8'), 'untouched')
})

test('a Streamable HTTP server gets no data directory', async (t) => {
  const { host, dataDir } = newHost(t)
  const http = await startHttpFixture(t, 'task-server.mjs', {}, ['http'])
  const id = await host.addServer({ name: 'web-no-data', config: { type: 'streamable-http', url: http.url } })
  await waitState(host, id, 'ready')
  await host.remove(id)
  assert.equal(existsSync(join(dataDir, 'web-no-data')), false, readdirSync(dataDir).join(', '))
})
