'use strict'
// HostError, the one error class of the JS API (index.d.ts `HostError`),
// here so that index.js and every lib/host module make it the same way.

/**
 * Error with a stable string `code` (see index.d.ts `HostErrorCode`) and, for
 * AHP errors, the JSON-RPC number as `rpcCode` (-32007 AuthRequired, -32602
 * InvalidParams).
 */
class HostError extends Error {
  constructor(code, message, data, rpcCode) {
    super(message)
    this.name = 'HostError'
    this.code = code
    if (data !== undefined && data !== null) this.data = data
    if (rpcCode !== undefined) this.rpcCode = rpcCode
  }
}

/** A HostError `invalid_argument` with `message` (which names the parameter and field). */
const invalidArgument = (message) => new HostError('invalid_argument', message)

module.exports = { HostError, invalidArgument }
