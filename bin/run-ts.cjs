#!/usr/bin/env node
// Runs a TypeScript entry point straight from source (tsx), so `npx pacer` and `npm run bench`
// work right after `npm install` on a fresh clone, with no build step. The ESM hooks as well as the
// CommonJS ones: the CLI's lazy import('./run') is left to Node by the CommonJS API alone, which
// does not find a .ts file (bench:scale's child runs the CLI's main() this way).
require('tsx/cjs/api').register()
const path = require('node:path')
const entry = process.argv[2]
if (!entry) {
  console.error('usage: run-ts.cjs FILE.ts [args...]')
  process.exit(2)
}
process.argv.splice(2, 1)
import('tsx/esm/api').then(
  ({ register }) => {
    register()
    require(path.resolve(entry))
  },
  (err) => {
    console.error(`run-ts: cannot load tsx: ${err.message}`)
    process.exitCode = 1
  },
)
