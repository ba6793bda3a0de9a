#!/usr/bin/env node
'use strict'
const { run } = require('../lib/cli.js')

// The reader of our output went away (e.g. `| head`): stop quietly; the
// exit hook of index.js kills every server this process started.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err.message}\n`)
    process.exit(2)
  },
)
