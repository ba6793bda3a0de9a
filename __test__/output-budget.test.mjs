// The model-facing output budget of an AHP chat tool call (issue 29 item
// 5; src/chat/budget.rs, src/chat/spill.rs): `chat/toolCallComplete` holds
// the result cut to the budget (at a character boundary) with a marker and
// an AHP `resource` link to a private spill file under `dataDir`, which
// holds the whole result, redacted like the chat state; the `callTool`
// result stays whole. Budgets: per call, then per server, then
// `limits.modelOutputMaxChars`.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { newHost, waitState, waitFor, fixtureEntry, startHttpFixture, uniqueMarker } from './helpers/host.mjs'

const SERVER = 'output-budget-server.mjs'
const CHAT = 'ahp-chat:/budget-chat'
const RUN = [...'abcé😀']

/** The fixture's `big` text: `n` code points, `prefix` then RUN repeated. */
function pattern(prefix, n) {
  const out = [...prefix]
  for (let i = 0; out.length < n; i++) out.push(RUN[i % RUN.length])
  return out.slice(0, n).join('')
}

const codePoints = (s) => [...s].length

let calls = 0
/** Runs `callTool` as an AHP chat tool call; resolves `{result, done}` (`done`: its `chat/toolCallComplete` result). */
async function chatCall(host, actions, call) {
  const toolCallId = `tc-${++calls}`
  const result = await host.callTool({ ...call, chat: CHAT, turnId: 'turn-1', toolCallId })
  const find = () => actions.find((e) => e.channel === CHAT && e.action.type === 'chat/toolCallComplete' && e.action.toolCallId === toolCallId)
  await waitFor(find, { what: `toolCallComplete ${toolCallId}` })
  return { result, done: find().action.result }
}

/** The marker and the link of a cut result: `{text, marker, link, path}`. */
function cutParts(done) {
  const content = done.content
  const link = content.at(-1)
  assert.equal(link.type, 'resource', JSON.stringify(content.map((b) => b.type)))
  assert.equal(link.contentType, 'application/json')
  const marker = content.at(-2)
  assert.equal(marker.type, 'text')
  assert.ok(marker.text.endsWith(`; the whole result is in ${link.uri}]`), marker.text)
  return { marker: marker.text, link, path: fileURLToPath(link.uri), kept: content.slice(0, -2) }
}

/** Every file under `dir`, recursively. */
function allFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name))
}

test('a result over the host budget: the chat state holds the cut text, a marker and a link; the spill file the whole result; callTool the whole result', async (t) => {
  const { host, actions, dataDir } = newHost(t, { limits: { modelOutputMaxChars: 1000 } })
  const id = await host.addServer({ name: 'big', config: fixtureEntry(SERVER) })
  await waitState(host, id, 'ready')
  const { result, done } = await chatCall(host, actions, { serverId: id, name: 'big', arguments: { chars: 5000 } })
  const whole = pattern('0:', 5000)
  assert.equal(result.content[0].text, whole, 'callTool is whole')
  const { marker, link, path, kept } = cutParts(done)
  assert.deepEqual(kept, [{ type: 'text', text: pattern('0:', 1000) }], 'cut at 1 000 code points, no character split')
  assert.equal(marker, `[… 4,000 of 5,000 characters left out (text); the whole result is in ${link.uri}]`)
  assert.ok(path.startsWith(join(dataDir, '.tool-results') + '/'), path)
  const file = readFileSync(path, 'utf8')
  assert.deepEqual(JSON.parse(file), result, 'the spill file holds the whole result')
  assert.equal(link.sizeHint, Buffer.byteLength(file))
  if (process.platform !== 'win32') {
    assert.equal(statSync(path).mode & 0o777, 0o600)
    assert.equal(statSync(join(dataDir, '.tool-results')).mode & 0o777, 0o700)
  }
  // Within the budget: nothing cut, no new file; without `chat`: never cut.
  const small = await chatCall(host, actions, { serverId: id, name: 'big', arguments: { chars: 1000 } })
  assert.deepEqual(small.done.content, [{ type: 'text', text: pattern('0:', 1000) }])
  const plain = await host.callTool({ serverId: id, name: 'big', arguments: { chars: 5000 } })
  assert.equal(plain.content[0].text, whole)
  assert.equal(readdirSync(join(dataDir, '.tool-results')).length, 1)
})

test('the budget is shared by every text block, and counted in code points', async (t) => {
  const { host, actions } = newHost(t, { limits: { modelOutputMaxChars: 250 } })
  const id = await host.addServer({ name: 'big', config: fixtureEntry(SERVER) })
  await waitState(host, id, 'ready')
  const { result, done } = await chatCall(host, actions, { serverId: id, name: 'big', arguments: { chars: 100, blocks: 4 } })
  assert.equal(result.content.length, 4)
  const { marker, kept } = cutParts(done)
  assert.deepEqual(kept.map((b) => b.text), [pattern('0:', 100), pattern('1:', 100), pattern('2:', 50)])
  assert.equal(kept.map((b) => codePoints(b.text)).reduce((a, b) => a + b), 250)
  assert.match(marker, /^\[… 150 of 400 characters left out \(text\);/)
})

test('per call beats per server beats the host', async (t) => {
  const { host, actions } = newHost(t, { limits: { modelOutputMaxChars: 900 } })
  const own = await host.addServer({ name: 'own', config: fixtureEntry(SERVER), modelOutputMaxChars: 300 })
  const plain = await host.addServer({ name: 'plain', config: fixtureEntry(SERVER) })
  await waitState(host, own, 'ready')
  await waitState(host, plain, 'ready')
  const keptChars = async (serverId, extra = {}) => {
    const { done } = await chatCall(host, actions, { serverId, name: 'big', arguments: { chars: 2000 }, ...extra })
    return codePoints(cutParts(done).kept[0].text)
  }
  assert.equal(await keptChars(plain), 900, 'the host budget')
  assert.equal(await keptChars(own), 300, "the server's beats the host's")
  assert.equal(await keptChars(own, { modelOutputMaxChars: 40 }), 40, "the call's beats the server's")
  assert.equal(await keptChars(plain, { modelOutputMaxChars: 1500 }), 1500, "the call's beats the host's")
})

test('binary past the budget is never inlined; what fits stays', async (t) => {
  const { host, actions } = newHost(t, { limits: { modelOutputMaxChars: 100 } })
  const id = await host.addServer({ name: 'pic', config: fixtureEntry(SERVER) })
  await waitState(host, id, 'ready')
  const { result, done } = await chatCall(host, actions, { serverId: id, name: 'picture', arguments: { bytes: 3000 } })
  assert.equal(Buffer.from(result.content[1].data, 'base64').length, 3000, 'callTool has the image')
  const { marker, path, kept } = cutParts(done)
  assert.deepEqual(kept, [{ type: 'text', text: 'a picture' }])
  assert.ok(!done.content.some((b) => b.type === 'embeddedResource'))
  assert.deepEqual(done.structuredContent, { width: 640, height: 480 }, 'what fits after it stays')
  assert.match(marker, /^\[… 4,009 of 4,044 characters left out \(1 binary block\);/)
  assert.equal(JSON.parse(readFileSync(path, 'utf8')).content[1].data, result.content[1].data)
  // A small image fits the budget: inlined as before.
  const small = await chatCall(host, actions, { serverId: id, name: 'picture', arguments: { bytes: 30 } })
  assert.equal(small.done.content[1].type, 'embeddedResource')
  assert.equal(small.done.content.length, 2)
})

test('a kept env value and header value a server echoes are [redacted] in the spill file, and nowhere under dataDir', async (t) => {
  const [envCanary, headerCanary] = [uniqueMarker('budget-env-'), uniqueMarker('budget-header-')]
  const { host, actions, logs, dataDir } = newHost(t, { limits: { modelOutputMaxChars: 60 } })
  const stdio = await host.addServer({ name: 'env', config: { ...fixtureEntry(SERVER), env: { SECRET_THING: envCanary } } })
  const { url } = await startHttpFixture(t, SERVER, {}, ['http'])
  const http = await host.addServer({ name: 'hdr', config: { type: 'streamable-http', url, headers: { 'X-Api-Key': headerCanary } } })
  await waitState(host, stdio, 'ready')
  await waitState(host, http, 'ready')
  const files = []
  for (const [serverId, canary] of [[stdio, envCanary], [http, headerCanary]]) {
    const { result, done } = await chatCall(host, actions, { serverId, name: 'secrets', arguments: { pad: 2000 } })
    assert.ok(result.content[0].text.includes(canary), 'callTool gets the result whole')
    const { path } = cutParts(done)
    const file = readFileSync(path, 'utf8')
    assert.ok(!file.includes(canary), 'the spill file holds the secret')
    assert.match(file, /env=(undefined|\[redacted\]) header=(undefined|\[redacted\]) \.{2000}/)
    assert.ok(file.includes('=[redacted] '), file.slice(0, 200))
    files.push(path)
  }
  assert.equal(new Set(files).size, 2)
  for (const f of allFiles(dataDir)) {
    const bytes = readFileSync(f, 'latin1')
    assert.ok(!bytes.includes(envCanary) && !bytes.includes(headerCanary), `${f} holds a canary`)
  }
  const seen = JSON.stringify(actions) + JSON.stringify(logs)
  assert.ok(!seen.includes(envCanary) && !seen.includes(headerCanary))
})

test('a spill file that cannot be written: the call completes, cut, with a marker saying why and a warn log', async (t) => {
  const { host, actions, logs, dataDir } = newHost(t, { limits: { modelOutputMaxChars: 100 } })
  writeFileSync(join(dataDir, '.tool-results'), 'a file where the directory goes')
  const id = await host.addServer({ name: 'big', config: fixtureEntry(SERVER) })
  await waitState(host, id, 'ready')
  const { result, done } = await chatCall(host, actions, { serverId: id, name: 'big', arguments: { chars: 500 } })
  assert.equal(codePoints(result.content[0].text), 500)
  assert.deepEqual(done.content.map((b) => b.type), ['text', 'text'], 'no link')
  assert.equal(done.content[0].text, pattern('0:', 100))
  assert.match(done.content[1].text, /^\[… 400 of 500 characters left out \(text\); the whole result was not kept: .*\.tool-results: cannot create: .*\]$/)
  const warn = logs.find((l) => l.level === 'warn' && l.target === 'host.tools')
  assert.ok(warn, JSON.stringify(logs))
  assert.equal(warn.serverId, id)
  assert.match(warn.message, /over the model output budget \(100 characters\) and the whole result was not kept/)
})
