#!/usr/bin/env node
// The `pacer` command. It runs the built CLI (out/cli/pacer.cjs, `npm run build:cli`) when that is
// there and no newer than its sources; otherwise the TypeScript sources through tsx, so a fresh
// clone and a source being edited need no build step (PACER_FROM_SOURCE=1 forces that path).
const { existsSync, readFileSync, statSync } = require('node:fs')
const { join } = require('node:path')

const root = join(__dirname, '..')
const built = join(root, 'out/cli/pacer.mjs')

/**
 * Whether the bundle reflects the sources: every file it was built from (out/cli/inputs.json) is
 * older than it. An installed package ships no sources (no src/): the bundle is all there is.
 */
function builtIsCurrent() {
  if (process.env.PACER_FROM_SOURCE === '1' || !existsSync(built)) return false
  if (!existsSync(join(root, 'src'))) return true
  try {
    const builtAt = statSync(built).mtimeMs
    const inputs = JSON.parse(readFileSync(join(root, 'out/cli/inputs.json'), 'utf8'))
    return inputs.every((file) => statSync(join(root, file)).mtimeMs <= builtAt)
  } catch {
    // A source gone or renamed, or no list: rebuilt or not, the sources are the truth.
    return false
  }
}

function finish(main) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code
    },
    (err) => {
      console.error(`pacer: ${err && err.message ? err.message : String(err)}`)
      process.exitCode = 1
    },
  )
}

if (builtIsCurrent()) {
  import(require('node:url').pathToFileURL(built).href).then(
    (cli) => finish(cli.main),
    (err) => {
      console.error(
        `pacer: cannot load the built CLI ${built}: ${err.message} (npm run build:cli rebuilds it; PACER_FROM_SOURCE=1 runs the sources)`,
      )
      process.exitCode = 1
    },
  )
} else {
  // The CommonJS hooks compile the sources; the ESM hooks let their lazy import('./run') find a
  // .ts file (the CommonJS API alone leaves import() to Node, which does not). tsx's ESM API is
  // imported, not required: its CommonJS build cannot find its own loader from here.
  require('tsx/cjs/api').register()
  import('tsx/esm/api').then(
    ({ register }) => {
      register()
      finish(require('../src/main/cli/index.ts').main)
    },
    (err) => {
      console.error(`pacer: cannot load tsx to run the sources: ${err.message}`)
      process.exitCode = 1
    },
  )
}
