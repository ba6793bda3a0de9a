// Windows: commands the way Windows users write them. A bare `command` is
// found through PATH and PATHEXT (`tool` → `tool.cmd`, never npm's POSIX
// twin `tool`); a `.cmd` shim runs through cmd.exe with every argument
// quoted by Rust's std so that it reaches the server unchanged (spaces, &,
// ^, %, quotes, backslashes…) and never starts a second command; an
// argument cmd.exe cannot be given unchanged (a line break) is refused with
// `invalid_argument` naming it; a shim in a folder with a space runs; a
// `./` command is contained in its plugin root whatever its case, and a
// junction out of the root does not get it out.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { newHost, tmpDir, waitFor, serverState, callText, writeShim, writePlugin, UNDER_WINE } from './helpers.mjs'

/** Puts `dir` first on this process's PATH (the host's base environment) for the test. */
function pathFirst(t, dir) {
  const before = process.env.PATH
  process.env.PATH = `${dir};${before}`
  t.after(() => { process.env.PATH = before })
}

/** Adds a stdio server running `command args`; resolves its state once settled (ready or error). */
async function startShim(t, command, args) {
  const { host } = newHost(t)
  const id = await host.addServer({ name: 'shim', config: { type: 'stdio', command, args } })
  const state = await waitFor(() => {
    const s = serverState(host, id)
    return ['ready', 'error'].includes(s?.kind) && s
  }, { timeout: 60_000, what: `server ${command} to be ready or in error`, describe: () => JSON.stringify(serverState(host, id)) })
  return { host, id, state }
}

test('a bare command finds its .cmd shim through PATH and PATHEXT', async (t) => {
  const bin = join(tmpDir(t), 'bin')
  writeShim(bin, 'ahp-win-tool')
  pathFirst(t, bin)
  const { host, id, state } = await startShim(t, 'ahp-win-tool', ['plain', 'two words'])
  assert.equal(state.kind, 'ready', JSON.stringify(state))
  assert.deepEqual(JSON.parse(await callText(host, id, 'argv')), ['plain', 'two words'])
})

/** Arguments cmd.exe would split, expand or run if they were not quoted. */
const TRICKY = [
  'two words', ' leading and trailing ', '', 'a&b', 'a && b', 'a|b', 'a^b', '^^', 'a<b>c', '(paren)',
  '!bang!', 'say "hi"', '"', '""', 'back\\slash', 'trailing\\', 'dir\\ ', 'x\\"y',
  "it's", 'semi;colon', 'comma,equal=', 'tab\there', 'ünïcödé ✓',
]

test('arguments reach a .cmd shim server unchanged: spaces, &, |, ^, !, quotes, backslashes', async (t) => {
  const shim = writeShim(join(tmpDir(t), 'bin'), 'ahp-win-args')
  const { host, id, state } = await startShim(t, shim, TRICKY)
  assert.equal(state.kind, 'ready', JSON.stringify(state))
  const got = JSON.parse(await callText(host, id, 'argv'))
  for (let i = 0; i < TRICKY.length; i++) assert.equal(got[i], TRICKY[i], `args[${i}] ${JSON.stringify(TRICKY[i])} arrived as ${JSON.stringify(got[i])}`)
  assert.equal(got.length, TRICKY.length, JSON.stringify(got))
})

test('no argument runs a second command through cmd.exe', async (t) => {
  const dir = tmpDir(t)
  const shim = writeShim(join(dir, 'bin'), 'ahp-win-inject')
  const marker = (n) => join(dir, `injected-${n}.txt`)
  const attacks = [
    `x & echo pwned > "${marker(1)}"`,
    `x" & echo pwned > "${marker(2)}" & "`,
    `x^" & echo pwned > "${marker(3)}"`,
    `\\" & type nul > "${marker(5)}" & \\"`,
    `x | echo pwned > "${marker(6)}"`,
  ]
  const { host, id, state } = await startShim(t, shim, attacks)
  assert.equal(state.kind, 'ready', JSON.stringify(state))
  assert.deepEqual(JSON.parse(await callText(host, id, 'argv')), attacks)
  for (let n = 1; n <= attacks.length; n++) assert.equal(existsSync(marker(n)), false, `attack ${n} ran a command: ${attacks[n - 1]}`)
})

// Rust's std writes each `%` as `%%cd:~,%` (cmd.exe expands `%cd:~,%` to
// nothing), so `%NAME%` is never expanded on Windows. Wine 8's cmd.exe
// expands it anyway: there the values differ, which is a difference of Wine
// (reported as a todo, not hidden), and still no command may run.
test('% reaches a .cmd shim server unchanged (%VAR% not expanded) and runs no command', { todo: UNDER_WINE && "Wine 8's cmd.exe expands %VAR% inside Rust std's escape" }, async (t) => {
  const dir = tmpDir(t)
  const shim = writeShim(join(dir, 'bin'), 'ahp-win-percent')
  const marker = join(dir, 'injected-percent.txt')
  const args = ['%PATH%', '%%', '100%', '%NO_SUCH_VAR%', `%COMSPEC% /c echo pwned > "${marker}"`]
  const { host, id, state } = await startShim(t, shim, args)
  assert.equal(state.kind, 'ready', JSON.stringify(state))
  const got = JSON.parse(await callText(host, id, 'argv'))
  assert.equal(existsSync(marker), false, 'a % argument ran a command')
  assert.deepEqual(got, args)
})

test('an argument a batch file cannot be given (a line break) is refused with invalid_argument naming it', async (t) => {
  const shim = writeShim(join(tmpDir(t), 'bin'), 'ahp-win-refused')
  const { state } = await startShim(t, shim, ['fine', 'line one\r\nline two'])
  assert.equal(state.kind, 'error', JSON.stringify(state))
  assert.equal(state.error.errorType, 'invalid_argument', JSON.stringify(state.error))
  assert.match(state.error.message, /args\[1\]/)
  assert.match(state.error.message, /line break/)
})

test('a shim in a folder with a space runs, by absolute path and through PATH', async (t) => {
  const spaced = join(tmpDir(t), 'my tools', 'sub dir')
  const shim = writeShim(spaced, 'ahp-win-spaced')
  const direct = await startShim(t, shim, ['direct'])
  assert.equal(direct.state.kind, 'ready', JSON.stringify(direct.state))
  assert.deepEqual(JSON.parse(await callText(direct.host, direct.id, 'argv')), ['direct'])
  pathFirst(t, spaced)
  const found = await startShim(t, 'ahp-win-spaced', ['on path'])
  assert.equal(found.state.kind, 'ready', JSON.stringify(found.state))
  assert.deepEqual(JSON.parse(await callText(found.host, found.id, 'argv')), ['on path'])
})

/** Waits until server `id` of `host` is ready or in error; returns its state. */
function settled(host, id) {
  return waitFor(() => {
    const s = serverState(host, id)
    return ['ready', 'error'].includes(s?.kind) && s
  }, { timeout: 60_000, what: `${id} settled`, describe: () => JSON.stringify(serverState(host, id)) })
}

test('a ./ command with backslashes runs a shim inside the plugin root (PATHEXT added); one that leaves the root is refused', async (t) => {
  const dir = tmpDir(t)
  const root = join(dir, 'plugin root')
  writeShim(join(root, 'bin'), 'server')
  writeShim(dir, 'outside')
  writePlugin(root, {
    mcpServers: {
      inside: { type: 'stdio', command: '.\\bin\\server', args: ['inside'] },
      escape: { type: 'stdio', command: '.\\..\\outside.cmd' },
    },
  })
  const { host } = newHost(t)
  const added = await host.addPlugin({ root, name: 'rooted' })
  assert.equal(added.load.kind, 'loaded', JSON.stringify(added.load))
  const inside = await settled(host, 'rooted/inside')
  assert.equal(inside.kind, 'ready', JSON.stringify(inside))
  assert.deepEqual(JSON.parse(await callText(host, 'rooted/inside', 'argv')), ['inside'])
  const escape = await settled(host, 'rooted/escape')
  assert.equal(escape.kind, 'error')
  assert.equal(escape.error.errorType, 'command_outside_root', JSON.stringify(escape.error))
})

test('containment is case-insensitive: .\\BIN\\SERVER runs the shim in bin', async (t) => {
  const root = join(tmpDir(t), 'plugin')
  writeShim(join(root, 'bin'), 'server')
  writePlugin(root, { mcpServers: { cased: { type: 'stdio', command: '.\\BIN\\SERVER', args: ['cased'] } } })
  const { host } = newHost(t)
  const added = await host.addPlugin({ root, name: 'cased' })
  assert.equal(added.load.kind, 'loaded', JSON.stringify(added.load))
  const cased = await settled(host, 'cased/cased')
  assert.equal(cased.kind, 'ready', JSON.stringify(cased))
  assert.deepEqual(JSON.parse(await callText(host, 'cased/cased', 'argv')), ['cased'])
})

test('a junction inside the plugin root pointing out of it does not get a ./ command out', { skip: UNDER_WINE && 'Wine 8 cannot create a junction (symlink: ENOTSUP); runs on Windows' }, async (t) => {
  const dir = tmpDir(t)
  const root = join(dir, 'plugin')
  mkdirSync(root, { recursive: true })
  writeShim(join(dir, 'elsewhere'), 'outside')
  // A directory junction (no privilege needed, unlike a symbolic link).
  symlinkSync(join(dir, 'elsewhere'), join(root, 'link'), 'junction')
  writePlugin(root, { mcpServers: { junction: { type: 'stdio', command: '.\\link\\outside.cmd' } } })
  const { host } = newHost(t)
  const added = await host.addPlugin({ root, name: 'linked' })
  assert.equal(added.load.kind, 'loaded', JSON.stringify(added.load))
  const junction = await settled(host, 'linked/junction')
  assert.equal(junction.kind, 'error')
  assert.equal(junction.error.errorType, 'command_outside_root', JSON.stringify(junction.error))
})
