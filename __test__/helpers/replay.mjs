// The tests' AHP client mirror of the session: the envelopes the host
// emitted, replayed through `ahp`'s own session reducer (the Rust crate,
// reached through the package's `reduceSession`), never a JavaScript copy
// of it.

import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { reduceSession, AhpStateMirror } = require('../../index.js')

/**
 * Replays `envelopes` on the session channel `channel`, in `serverSeq`
 * order, rejected echoes skipped (the AHP client rule), from `initial` (a
 * `SessionState`) or from the host's empty session (an unseeded
 * `AhpStateMirror`'s). Returns the state.
 */
export function replaySession(envelopes, channel, initial) {
  const ordered = envelopes.filter((e) => e.channel === channel).sort((x, y) => x.serverSeq - y.serverSeq)
  let state = initial ?? new AhpStateMirror({ session: channel }).session
  for (const e of ordered) if (e.rejectionReason === undefined) state = reduceSession(state, e.action).state
  return state
}
