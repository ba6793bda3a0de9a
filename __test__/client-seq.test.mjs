// AHP `ActionOrigin.clientSeq` of `dispatch`: a client matches echoes by it,
// so it must be a non-negative safe integer and is echoed exactly; anything
// else is refused with a HostError `invalid_argument` naming
// `origin.clientSeq` (never rounded, clamped or coerced). Both the JS wrapper
// and the native side check it (the native check is exercised directly on
// the binding's `NativeHost`).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { newHost, HostError, ROOT, tmpDir } from './helpers/host.mjs'

const require = createRequire(import.meta.url)
const { NativeHost } = require(join(ROOT, 'binding.js'))

const ACTION = { type: 'session/mcpServerStopRequested', id: 'nothing-here' }
const BAD = [NaN, Infinity, -Infinity, 1e-7, 1.5, 1e300, 2 ** 64, 2 ** 53, -1, -0.5, Number.MIN_SAFE_INTEGER]
const NOT_NUMBERS = ['5', 5n, {}, [1], true, null]
const GOOD = [0, 1, 7, 2 ** 32, Number.MAX_SAFE_INTEGER]

test('dispatch refuses a clientSeq that is not a non-negative safe integer, naming it', async (t) => {
  const { host, actions } = newHost(t)
  for (const clientSeq of [...BAD, ...NOT_NUMBERS]) {
    assert.throws(() => host.dispatch(ACTION, { clientId: 'seq', clientSeq }), (err) => {
      assert.ok(err instanceof HostError, String(clientSeq))
      assert.equal(err.code, 'invalid_argument')
      assert.match(err.message, /^origin\.clientSeq: must be a non-negative safe integer/)
      return true
    }, `clientSeq = ${typeof clientSeq === 'bigint' ? `${clientSeq}n` : String(clientSeq)}`)
  }
  // Nothing was echoed for a refused dispatch.
  assert.equal(actions.filter((e) => e.origin?.clientId === 'seq').length, 0)
})

test('dispatch echoes a valid clientSeq exactly (0 to 2^53-1); a missing one is 0', async (t) => {
  const { host } = newHost(t)
  for (const clientSeq of GOOD) {
    const echo = host.dispatch(ACTION, { clientId: 'seq', clientSeq })
    assert.deepEqual(echo.origin, { clientId: 'seq', clientSeq })
    assert.match(echo.rejectionReason, /nothing-here/)
  }
  assert.equal(host.dispatch(ACTION, { clientId: 'seq' }).origin.clientSeq, 0)
})

test('the native dispatch checks clientSeq too: never clamped or rounded', async (t) => {
  const dataDir = tmpDir(t, 'ahp-mcp-host-data-')
  const native = new NativeHost(JSON.stringify({ dataDir }), () => {}, [], async () => '{}', false, async () => '{}', 'null')
  t.after(() => native.dispose())
  for (const clientSeq of BAD) {
    const r = JSON.parse(native.dispatch(JSON.stringify(ACTION), 'seq', clientSeq))
    assert.equal(r.ok, false, `clientSeq = ${clientSeq}`)
    assert.equal(r.code, 'invalid_argument')
    assert.match(r.message, /^origin\.clientSeq: must be a non-negative safe integer/)
  }
  for (const clientSeq of GOOD) {
    const r = JSON.parse(native.dispatch(JSON.stringify(ACTION), 'seq', clientSeq))
    assert.equal(r.ok, true)
    assert.equal(r.value.origin.clientSeq, clientSeq)
  }
})
