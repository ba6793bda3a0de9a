// Every request settles however the app holds the host (issue 24, items 1
// and 2): a host that only an awaiting function references is not collected
// while a request or a whenReady of it is pending, and a throwing `action`
// listener loses no other listener's actions and no request's answer.
// Each case runs in a child process (fixtures/pending-child.mjs) with
// garbage collection forced every 20 ms and an `uncaughtException` handler.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { NODE, FIXTURES, tmpDir } from './helpers/host.mjs'

const LIMIT = { timeout: 90_000 }

/** Runs the child in `mode`; resolves its parsed JSON line (or fails with its output). */
function runChild(t, mode) {
  const child = spawn(NODE, ['--expose-gc', join(FIXTURES, 'pending-child.mjs'), mode], {
    env: { ...process.env, AHP_TEST_DATA: tmpDir(t, 'ahp-pending-') },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => { out += d })
  child.stderr.on('data', (d) => { err += d })
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (!line) return reject(new Error(`the child (${mode}) exited ${code} without an answer; stdout: ${out} stderr: ${err}`))
      resolve(JSON.parse(line))
    })
  })
}

test('a host only an awaiting function references is not collected while callTool is pending', LIMIT, async (t) => {
  const { result, error } = await runChild(t, 'call')
  assert.equal(error, undefined)
  assert.equal(result, 'waited')
})

test('a host only an awaiting function references is not collected while whenReady is pending', LIMIT, async (t) => {
  const { result, error } = await runChild(t, 'ready')
  assert.equal(error, undefined)
  assert.equal(result, 'stuck-stdin')
})

test('throwing action, log and onProgress listeners: every call settles, the other listener sees every action, each error is reported as uncaught', LIMIT, async (t) => {
  const { result, error } = await runChild(t, 'listeners')
  assert.equal(error, undefined)
  assert.deepEqual(result.outcomes, Array(10).fill('done 3'))
  assert.equal(result.first, 1)
  assert.equal(result.gaps, 0, `serverSeq gaps in what the second listener saw: ${JSON.stringify(result)}`)
  assert.ok(result.uncaught >= 10, `each throw is reported as an uncaught exception (${result.uncaught})`)
})
