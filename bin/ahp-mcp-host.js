#!/usr/bin/env node
'use strict'
const { run } = require('../lib/cli.js')

// The reader of our output may go away early (e.g. `| head -1`): from then
// on output is dropped, but the run goes on to its end, so the exit code
// still says whether a server became ready (a script with `pipefail` sees
// it), and every server it started is stopped.
let outputClosed = false
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err
  outputClosed = true
})
const out = { write: (text) => outputClosed || process.stdout.write(text) }

run(process.argv.slice(2), out).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err.message}\n`)
    process.exit(2)
  },
)
