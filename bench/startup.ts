// `npm run bench:startup [-- --runs N]`: how long `pacer` takes to start, from the TypeScript
// sources (tsx) and from the built CLI (out/cli, `npm run build:cli`), side by side with `node -e ''`
// in the same run: `pacer --help`, and `pacer batches` / `pacer summary` on an empty database and
// on a 1M-row ledger (built once by ledger-fixture.ts with direct SQL, cached in the temp folder).
// Each round runs every variant once, in turn, so a machine busy with something else slows them
// alike; the table shows each median and its ratio to `node -e ''`'s (issue 24's targets: --help
// at most 3x, summary on the 1M ledger at most 5x). "built" goes through bin/pacer.cjs as a user's `pacer` does, freshness check
// included; "bundle" imports out/cli/pacer.mjs directly, as an installed package (no src/) runs it.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { openDatabase } from '../src/main/engine/db'
import { ledgerFixture } from './startup/ledger-fixture'

const ROOT = path.resolve(__dirname, '..')
const PACER = path.join(ROOT, 'bin/pacer.cjs')
const BUNDLE_RUNNER = `import(${JSON.stringify(path.join(ROOT, 'out/cli/pacer.mjs'))}).then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c })`

const runsArg = process.argv.indexOf('--runs')
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 20
if (!Number.isInteger(RUNS) || RUNS < 1) throw new TypeError(`--runs: expected an integer ≥ 1`)

const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-cli.mjs')], {
  stdio: 'inherit',
})
if (build.status !== 0) throw new Error('build-cli failed')

const dir = mkdtempSync(path.join(tmpdir(), 'pacer-startup-'))
const db = path.join(dir, 'empty.db')
openDatabase(db).close()
const big = ledgerFixture(1_000_000)

interface Variant {
  label: string
  args: string[]
  env?: NodeJS.ProcessEnv
}
const commands: [string, string[]][] = [
  ['--help', ['--help']],
  ['batches', ['batches', '--db', db]],
  ['summary', ['summary', '--db', db]],
  ['batches 1M', ['batches', '--db', big]],
  ['summary 1M', ['summary', '--db', big]],
]
const variants: Variant[] = [{ label: "node -e ''", args: ['-e', ''] }]
for (const [name, args] of commands) {
  variants.push(
    { label: `${name} source`, args: [PACER, ...args], env: { PACER_FROM_SOURCE: '1' } },
    { label: `${name} built`, args: [PACER, ...args] },
    { label: `${name} bundle`, args: ['--input-type=module', '-e', BUNDLE_RUNNER, ...args] },
  )
}

const times = new Map<string, number[]>(variants.map((v) => [v.label, []]))
for (let round = 0; round < RUNS; round++) {
  for (const v of variants) {
    const started = performance.now()
    const r = spawnSync(process.execPath, v.args, {
      cwd: dir,
      env: { ...process.env, HOME: dir, FORCE_COLOR: '0', ...v.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    const ms = performance.now() - started
    if (r.status !== 0) throw new Error(`${v.label}: exit ${r.status}\n${r.stderr}`)
    times.get(v.label)!.push(ms)
  }
  process.stderr.write(`round ${round + 1}/${RUNS}\r`)
}
rmSync(dir, { recursive: true, force: true })

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const base = median(times.get("node -e ''")!)
console.log(`\nmedian of ${RUNS} runs each (ms), ratio to node -e ''`)
console.log("| command | median ms | × node -e '' |")
console.log('|---|---:|---:|')
for (const v of variants) {
  const m = median(times.get(v.label)!)
  console.log(`| ${v.label} | ${m.toFixed(0)} | ${(m / base).toFixed(1)} |`)
}
