#!/usr/bin/env node
// `npm run build:cli`: bundles the `pacer` command (src/main/cli/index.ts and what it imports) into
// out/cli/pacer.cjs with esbuild, so the command starts without compiling TypeScript (tsx) on every
// run. bin/pacer.cjs runs this bundle when it is no older than its sources (out/cli/inputs.json).
//
// - One CommonJS file, no code splitting: each command's module is behind an import() in index.ts,
//   which esbuild turns into a lazy init inside the file, so `pacer --help` evaluates commander and
//   the command definitions only.
// - External, required from node_modules at run time: better-sqlite3 (a native addon), tsx (loads
//   .ts agent modules; it must be the real package), @redis/client (team mode only, imported
//   lazily by the engine). The pure-JS dependencies (zod, commander, csv-*, ...) are bundled: one
//   file to compile beats Node resolving and compiling their hundreds of files on every start.
// - The team store's Lua scripts are read from disk beside the code (engine/redis/lua.ts reads
//   __dirname/lua): copied to out/cli/lua, as electron.vite.config.ts copies them to out/main/lua.
import { build } from 'esbuild'
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
// `--out DIR` builds elsewhere (the install test packs a copy without touching this clone's out/).
const outArg = process.argv.indexOf('--out')
const OUT = outArg > 0 ? resolve(process.argv[outArg + 1]) : join(ROOT, 'out/cli')
// The OpenTelemetry SDK stays a package too: loaded only by a command that exports, and its
// CommonJS modules lose their named exports when bundled into a dynamic import.
export const EXTERNAL = ['better-sqlite3', 'tsx', 'tsx/*', '@redis/client', '@opentelemetry/*']

const started = Date.now()
rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { pacer: 'src/main/cli/index.ts' },
  outdir: OUT,
  outExtension: { '.js': '.mjs' },
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  // The sources are CommonJS-minded (__dirname, require.resolve) and bundled CommonJS packages
  // call require(): every chunk gets both (all chunks sit in out/cli, where lua/ is too).
  banner: {
    js: [
      "import { createRequire as __pacerCreateRequire } from 'node:module'",
      "import { dirname as __pacerDirname } from 'node:path'",
      "import { fileURLToPath as __pacerFileURLToPath } from 'node:url'",
      'const require = __pacerCreateRequire(import.meta.url)',
      'const __filename = __pacerFileURLToPath(import.meta.url)',
      'const __dirname = __pacerDirname(__filename)',
    ].join('\n'),
  },
  target: 'node20',
  external: EXTERNAL,
  // Error classes keep their names in messages and stack traces.
  keepNames: true,
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
})
cpSync(join(ROOT, 'src/main/engine/redis/lua'), join(OUT, 'lua'), { recursive: true })
// The sources the bundle was built from: bin/pacer.cjs falls back to them when one is newer.
const inputs = Object.keys(result.metafile.inputs)
  .filter((file) => !file.includes('node_modules/'))
  .map((file) => relative(ROOT, join(ROOT, file)))
writeFileSync(join(OUT, 'inputs.json'), `${JSON.stringify(inputs, null, 1)}\n`)
const bytes = result.metafile.outputs[relative(ROOT, join(OUT, 'pacer.mjs'))]?.bytes ?? 0
console.log(
  `build-cli: ${relative(ROOT, join(OUT, 'pacer.mjs'))} (${Math.round(bytes / 1024)} kB, ${inputs.length} sources) in ${Date.now() - started} ms`,
)
