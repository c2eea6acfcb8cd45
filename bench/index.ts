// `npm run bench [-- NAME...]`: runs every bench/*.ts (but this file) one after another, each in its
// own process so that one bench's heap, JIT state and open files cannot colour the next one's
// figures. A bench is a plain script that prints its figures and sets a non-zero exit code when a
// check inside it fails.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import path from 'node:path'

const here = __dirname
const runTs = path.resolve(here, '../bin/run-ts.cjs')
const wanted = process.argv.slice(2)

const benches = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'index.ts' && !f.endsWith('.d.ts'))
  .filter((f) => wanted.length === 0 || wanted.includes(path.basename(f, '.ts')))
  .sort()

if (benches.length === 0) {
  console.error(`no bench matches ${wanted.join(', ')}`)
  process.exit(2)
}

const failed: string[] = []
for (const file of benches) {
  console.log(`\n=== bench/${file}`)
  const run = spawnSync(process.execPath, [runTs, path.join(here, file)], { stdio: 'inherit' })
  if (run.status !== 0) failed.push(file)
}
console.log(`\n${benches.length - failed.length} benches ok, ${failed.length} failed`)
if (failed.length > 0) process.exitCode = 1
