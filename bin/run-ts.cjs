#!/usr/bin/env node
// Runs a TypeScript entry point straight from source (tsx), so `npx pacer` and `npm run bench`
// work right after `npm install` on a fresh clone, with no build step.
require('tsx/cjs/api').register()
const path = require('node:path')
const entry = process.argv[2]
if (!entry) {
  console.error('usage: run-ts.cjs FILE.ts [args...]')
  process.exit(2)
}
process.argv.splice(2, 1)
require(path.resolve(entry))
