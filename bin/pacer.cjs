#!/usr/bin/env node
// The `pacer` command: runs the CLI from TypeScript source through tsx (no build step needed).
require('tsx/cjs/api').register()
const { main } = require('../src/main/cli/index.ts')
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err) => {
    console.error(`pacer: ${err && err.message ? err.message : String(err)}`)
    process.exitCode = 1
  },
)
