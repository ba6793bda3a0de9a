// Plugin config files that are not regular files (issue 13 case 7): an
// `mcp.json` that is a named pipe, a symlink to /dev/zero or /dev/urandom,
// a directory, or a regular file over `limits.maxConfigFileBytes` gives the
// plugin load state `error` at once, with a message naming the file and
// why (as for any other unusable mcp.json), never a plugin stuck `loading`;
// nothing is read from a device (memory stays flat); the id can be removed
// and added again; a sibling plugin is unaffected; and a Node process that
// disposes its host afterwards exits by itself.
//
// Bounds here are generous and only catch "never settles" / "never exits".

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import {
  newHost, tmpDir, writePlugin, fixtureEntry, findCustomization, waitState, callText, waitFor,
  killChild, FIXTURES, NODE,
} from './helpers/host.mjs'

const NEVER_MS = 20_000

/** `p`, or a failure naming `what` if it has not settled within NEVER_MS. */
function settlesSoon(p, what) {
  let timer
  const never = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not settle`)), NEVER_MS) })
  return Promise.race([p, never]).finally(() => clearTimeout(timer))
}

/** A plugin root `name` whose mcp.json is made by `make(path)`. */
function oddPlugin(dir, name, make) {
  const root = join(dir, name)
  mkdirSync(root, { recursive: true })
  make(join(root, 'mcp.json'))
  return root
}

const fifo = (path) => execFileSync('mkfifo', [path])
const linkTo = (target) => (path) => symlinkSync(target, path)

/** Adds the plugin at `root` and checks it settled at once with load state `error` matching `why`. */
async function addsWithLoadError(host, root, why) {
  const added = await settlesSoon(host.addPlugin({ root }), `addPlugin(${root})`)
  assert.equal(added.load.kind, 'error', JSON.stringify(added.load))
  assert.ok(added.load.message.startsWith(join(root, 'mcp.json')), added.load.message)
  assert.match(added.load.message, why)
  assert.deepEqual(added.servers, [])
  const entry = findCustomization(host.getState(), added.id)
  assert.equal(entry.load.kind, 'error')
  assert.equal(entry.load.message, added.load.message)
  return added
}

test('mcp.json as a named pipe: load error at once naming the file; the id is removed and added again; a sibling works', async (t) => {
  const dir = tmpDir(t)
  const { host } = newHost(t)
  const pipe = oddPlugin(dir, 'piped', fifo)
  const added = await addsWithLoadError(host, pipe, /: cannot read: it is a named pipe \(FIFO\), not a regular file$/)
  const sibling = writePlugin(join(dir, 'sibling'), { mcpServers: { tools: fixtureEntry('tools-server.mjs') } })
  assert.equal((await host.addPlugin({ root: sibling })).load.kind, 'loaded')
  await waitState(host, 'sibling/tools', 'ready')
  // The id is not stuck: remove it, then add a good plugin under the same name.
  await settlesSoon(host.remove(added.id), 'remove')
  const good = writePlugin(join(dir, 'good'), { mcpServers: { tools: fixtureEntry('tools-server.mjs') } })
  const again = await host.addPlugin({ root: good, name: added.id })
  assert.equal(again.load.kind, 'loaded')
  await waitState(host, `${added.id}/tools`, 'ready')
  assert.equal(await callText(host, `${added.id}/tools`, 'echo', { message: 'fine' }), 'echo:fine')
  assert.equal(await callText(host, 'sibling/tools', 'echo', { message: 'too' }), 'echo:too')
})

test('mcp.json as a symlink to /dev/zero or /dev/urandom: load error, nothing read, memory flat', async (t) => {
  const dir = tmpDir(t)
  const { host } = newHost(t)
  const before = process.memoryUsage().rss
  for (const device of ['/dev/zero', '/dev/urandom']) {
    const root = oddPlugin(dir, device.slice(5), linkTo(device))
    await addsWithLoadError(host, root, /: cannot read: it is a character device, not a regular file$/)
  }
  const grown = process.memoryUsage().rss - before
  assert.ok(grown < 64 * 1024 * 1024, `RSS grew by ${grown} bytes`)
})

test('mcp.json as a directory: load error naming the file', async (t) => {
  const { host } = newHost(t)
  const root = oddPlugin(tmpDir(t), 'dir', (path) => mkdirSync(path))
  await addsWithLoadError(host, root, /: cannot read: it is a directory, not a regular file$/)
})

test('mcp.json over limits.maxConfigFileBytes: load error naming the limit; at the limit it loads', async (t) => {
  const dir = tmpDir(t)
  const { host } = newHost(t, { limits: { maxConfigFileBytes: 1024 } })
  const text = JSON.stringify({ mcpServers: { tools: fixtureEntry('tools-server.mjs') } })
  const exact = text + ' '.repeat(1024 - Buffer.byteLength(text))
  assert.equal((await host.addPlugin({ root: writePlugin(join(dir, 'exact'), exact) })).load.kind, 'loaded')
  const over = writePlugin(join(dir, 'over'), exact + ' ')
  await addsWithLoadError(host, over, /: cannot read: it is larger than maxConfigFileBytes \(1024 bytes\)$/)
})

test('the default maxConfigFileBytes is 8 MiB', async (t) => {
  const dir = tmpDir(t)
  const { host } = newHost(t)
  const big = oddPlugin(dir, 'big', (path) => writeFileSync(path, Buffer.alloc(8 * 1024 * 1024 + 1, 0x20)))
  await addsWithLoadError(host, big, /: cannot read: it is larger than maxConfigFileBytes \(8388608 bytes\)$/)
})

/** Runs fixtures/config-child.mjs; resolves with its exit and output once it exited (or fails after NEVER_MS). */
async function runChild(t, root, mode) {
  const child = spawn(NODE, [join(FIXTURES, 'config-child.mjs'), root, mode], {
    env: { ...process.env, AHP_TEST_DATA: tmpDir(t, 'ahp-mcp-host-child-data-') },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.after(() => killChild(child, 'SIGKILL'))
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => { stdout += d })
  child.stderr.on('data', (d) => { stderr += d })
  let exited
  child.once('exit', (code, signal) => { exited = { code, signal } })
  const output = () => `child stdout: ${stdout}\nchild stderr: ${stderr}\nexit: ${JSON.stringify(exited)}`
  await waitFor(() => exited, { timeout: NEVER_MS, what: `the child (${mode}) to exit by itself`, describe: output })
  return { ...exited, stdout, output }
}

for (const [kind, make] of [['a named pipe', fifo], ['a symlink to /dev/zero', linkTo('/dev/zero')]]) {
  for (const mode of ['settled', 'at-once']) {
    test(`a process whose plugin mcp.json is ${kind} exits by itself after dispose() (${mode})`, async (t) => {
      const root = oddPlugin(tmpDir(t), 'child', make)
      const { code, signal, stdout, output } = await runChild(t, root, mode)
      assert.equal(signal, null, output())
      assert.equal(code, 0, output())
      assert.match(stdout, /^(ADDED \{"kind":"error".*not a regular file"\}|REJECTED disposed)$/m, output())
      assert.match(stdout, /^DISPOSED$/m, output())
    })
  }
}
