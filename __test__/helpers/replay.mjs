// The tests' AHP client mirror of the session: the envelopes the host
// emitted, replayed through `ahp`'s own session reducer (the Rust crate,
// reached through the binding's `replaySessionEnvelopes`), never a
// JavaScript copy of it.

import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { replaySessionEnvelopes } = require('../../binding.js')

/**
 * Replays `envelopes` on the session channel `channel`, in `serverSeq`
 * order, rejected echoes skipped (the AHP client rule), from `initial` (a
 * `SessionState`) or from the host's empty session. Returns the state.
 */
export function replaySession(envelopes, channel, initial) {
  const ordered = envelopes.filter((e) => e.channel === channel).sort((x, y) => x.serverSeq - y.serverSeq)
  const from = initial === undefined ? undefined : JSON.stringify(initial)
  return JSON.parse(replaySessionEnvelopes(channel, JSON.stringify(ordered), from))
}
