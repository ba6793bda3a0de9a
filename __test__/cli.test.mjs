// The CLI (`bin/ahp-mcp-host.js`) as a shell user runs it: when the reader
// of its output goes away early (`… | head`), it ends without an unhandled
// EPIPE error and still exits with the run's own code (0: a server became
// ready; 1: none did), so a script with `pipefail` sees a failed run.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** Runs the CLI on `args`, reads its first output, closes the pipe as `head -1` does; resolves with its exit code and stderr. */
async function runClosingOutput(args) {
  const cli = spawn(process.execPath, ['bin/ahp-mcp-host.js', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  cli.stderr.on('data', (d) => { stderr += d })
  await new Promise((resolve) => {
    cli.stdout.once('data', () => { cli.stdout.destroy(); resolve() })
  })
  const [code, signal] = await once(cli, 'exit')
  assert.equal(signal, null)
  assert.doesNotMatch(stderr, /EPIPE|Unhandled/, stderr)
  return { code, stderr }
}

test('a closed output pipe ends the CLI quietly with the exit code of its run', async () => {
  const ok = await runClosingOutput(['run', 'examples/everything-stdio', '--json'])
  assert.equal(ok.code, 0, ok.stderr)
  // No server of examples/broken starts: 1, as without the pipe closed
  // (the output used to be cut with exit code 0).
  const failed = await runClosingOutput(['run', 'examples/broken'])
  assert.equal(failed.code, 1, failed.stderr)
})

test('bad usage names what is wrong on its first line, then the usage, with exit code 2', async () => {
  const cases = [
    [[], 'missing command: the command is run'],
    [['frobnicate', 'x'], 'unknown command "frobnicate": the command is run'],
    [['run'], 'run needs at least one plugin folder'],
    [['run', 'examples/broken', '--bogus'], 'unknown option --bogus'],
  ]
  for (const [args, first] of cases) {
    const cli = spawn(process.execPath, ['bin/ahp-mcp-host.js', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    cli.stderr.on('data', (d) => { stderr += d })
    const [code] = await once(cli, 'exit')
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`)
    const lines = stderr.split('\n')
    assert.equal(lines[0], first, stderr)
    assert.match(lines[1], /^usage: ahp-mcp-host run /, stderr)
  }
})

// `run` only calls tools annotated read-only (readOnlyHint: true); a
// destructive or unannotated tool is never called by default; `--call
// <tool> --args <json>` calls exactly the named tool.
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'

function annotatedPlugin(t, serverArgs = []) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ahp-cli-test-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const plugin = path.join(dir, 'annotated')
  mkdirSync(plugin)
  const callLog = path.join(dir, 'calls.jsonl')
  const server = { type: 'stdio', command: process.execPath, args: [path.join(root, '__test__', 'fixtures', 'annotated-server.mjs'), ...serverArgs], env: { CALL_LOG: callLog } }
  writeFileSync(path.join(plugin, 'mcp.json'), JSON.stringify({ mcpServers: { tools: server } }))
  const calls = () => (existsSync(callLog) ? readFileSync(callLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : [])
  return { plugin, calls, dataHome: dir }
}

async function runCli(args, dataHome) {
  const cli = spawn(process.execPath, ['bin/ahp-mcp-host.js', ...args], {
    cwd: root,
    env: { ...process.env, XDG_DATA_HOME: dataHome },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  cli.stdout.on('data', (d) => { stdout += d })
  cli.stderr.on('data', (d) => { stderr += d })
  const [code] = await once(cli, 'exit')
  return { code, stdout, stderr }
}

test('run calls only a tool annotated readOnlyHint: true, never a destructive or unannotated one', async (t) => {
  const { plugin, calls, dataHome } = annotatedPlugin(t)
  const { code, stdout, stderr } = await runCli(['run', plugin], dataHome)
  assert.equal(code, 0, stdout + stderr)
  assert.deepEqual(calls(), [{ tool: 'look', args: {} }])
  assert.match(stdout, /call look\(\{\}\) -> look called/)
  // Each catalogue line says whose tools came and went (new-user check of issue 28).
  const published = stdout.split('\n').filter((l) => l.includes('tool catalogue published'))
  assert.match(published[0], /published: \d+ tools? \(\+\d+ [^)]+\)$/, stdout)
  assert.match(published.at(-1), /published: 0 tools \(-\d+ [^)]+\)$/, stdout)
})

test('run calls no tool at all when none is annotated read-only', async (t) => {
  const { plugin, calls, dataHome } = annotatedPlugin(t, ['--no-read-only'])
  const { code, stdout, stderr } = await runCli(['run', plugin], dataHome)
  assert.equal(code, 0, stdout + stderr)
  assert.deepEqual(calls(), [])
  assert.match(stdout, /none called \(name one with --call\)/)
})

test('run --call <tool> --args <json> calls exactly the named tool with those arguments', async (t) => {
  const { plugin, calls, dataHome } = annotatedPlugin(t)
  const { code, stdout, stderr } = await runCli(['run', plugin, '--call', 'wipe', '--args', '{"really":true}', '--json'], dataHome)
  assert.equal(code, 0, stdout + stderr)
  assert.deepEqual(calls(), [{ tool: 'wipe', args: { really: true } }])
  const called = stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.kind === 'call')
  assert.deepEqual(called.map((c) => [c.tool, c.result.content[0].text]), [['wipe', 'wipe called']])
  // By its catalogue name too; an unknown tool calls nothing and exits 1.
  const byName = await runCli(['run', plugin, '--call', 'mcp__annotated_tools__plain'], dataHome)
  assert.equal(byName.code, 0, byName.stdout + byName.stderr)
  const missing = await runCli(['run', plugin, '--call', 'nope'], dataHome)
  assert.equal(missing.code, 1)
  assert.match(missing.stdout, /--call nope: no ready server has this tool/)
  assert.deepEqual(calls().map((c) => c.tool), ['wipe', 'plain'])
})

test('--help describes --call and --args; --args without --call is refused', async (t) => {
  const help = await runCli(['--help'], tmpdir())
  assert.equal(help.code, 0)
  assert.match(help.stdout, /--call <tool>/)
  assert.match(help.stdout, /readOnlyHint: true/)
  const bad = await runCli(['run', 'x', '--args', '{}'], tmpdir())
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--args needs --call/)
})

// Issue 24, item 1: the CLI's host is referenced only by the function
// awaiting the call; with collection forced every 20 ms it still prints the
// result (it used to exit 0 with none once the host was collected).
test('run --call on a slow tool prints its result under constant garbage collection', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ahp-cli-gc-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const plugin = path.join(dir, 'slow')
  mkdirSync(plugin)
  const server = { type: 'stdio', command: process.execPath, args: [path.join(root, '__test__', 'fixtures', 'slow-server.mjs')] }
  writeFileSync(path.join(plugin, 'mcp.json'), JSON.stringify({ mcpServers: { slow: server } }))
  const preload = path.join(root, '__test__', 'fixtures', 'gc-loop.cjs')
  const cli = spawn(process.execPath, ['--expose-gc', '-r', preload, 'bin/ahp-mcp-host.js', 'run', plugin, '--call', 'wait', '--args', '{"ms":3000}', '--json'], {
    cwd: root,
    env: { ...process.env, XDG_DATA_HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  cli.stdout.on('data', (d) => { stdout += d })
  cli.stderr.on('data', (d) => { stderr += d })
  const [code] = await once(cli, 'exit')
  assert.equal(code, 0, stdout + stderr)
  const called = stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((l) => l.kind === 'call')
  assert.deepEqual(called.map((c) => c.result?.content?.[0]?.text), ['waited'], stdout + stderr)
})
