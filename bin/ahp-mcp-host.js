#!/usr/bin/env node
'use strict'
const { run } = require('../lib/cli.js')

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err.message}\n`)
    process.exit(2)
  },
)
