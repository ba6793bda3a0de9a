// The CLI (`bin/ahp-mcp-host.js`) as a shell user runs it: when the reader
// of its output goes away early (`… | head`), it exits 0 without an
// unhandled EPIPE error, and leaves no server process behind.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

test('a closed output pipe ends the CLI quietly with exit code 0', async () => {
  const cli = spawn(process.execPath, ['bin/ahp-mcp-host.js', 'run', 'examples/everything-stdio', '--json'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  cli.stderr.on('data', (d) => { stderr += d })
  // Read the first line, then close our end of the pipe, as `head -1` does.
  await new Promise((resolve) => {
    cli.stdout.once('data', () => { cli.stdout.destroy(); resolve() })
  })
  const [code, signal] = await once(cli, 'exit')
  assert.equal(signal, null)
  assert.equal(code, 0, stderr)
  assert.doesNotMatch(stderr, /EPIPE|Unhandled/, stderr)
})
