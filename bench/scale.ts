// `npm run bench:scale [-- --quick | --sizes N,N]`: the engine at 10k, 100k and 1M tasks (--quick: up to 100k),
// through the CLI's own code path (main(), in a child process of its own per command), on a
// near-instant, unlimited, wide simulator, so what is measured is Pacer's bookkeeping. Batches are
// 50 % duplicates in shuffled order, one task in eight a three-step agent. Beside each figure, the
// same run's SQLite baseline: the same rows bulk-inserted in one transaction (and the lines as the
// v2 schema stored them, one text-keyed row each: what the issue measured); a plain GROUP BY of
// the ledger; `sqlite3 -csv` of it.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { bulkInsertMs, bulkInsertV2Ms, writeBatch } from './scale/batch'

const QUICK = process.argv.includes('--quick')
// `--sizes 50000,1000000`: only these batch sizes (a profile or an A/B at one size).
const sizesArg = process.argv.indexOf('--sizes')
const SIZES =
  sizesArg > 0
    ? (process.argv[sizesArg + 1] ?? '').split(',').map((s) => Number(s.replace(/_/g, '')))
    : QUICK
      ? [10_000, 100_000]
      : [10_000, 100_000, 1_000_000]
if (SIZES.some((n) => !Number.isInteger(n) || n < 2 || n % 2 !== 0)) {
  throw new TypeError(
    `--sizes wants even task counts separated by commas, got ${process.argv[sizesArg + 1]}`,
  )
}
const ROOT = path.resolve(__dirname, '..')
const RUN_TS = path.join(ROOT, 'bin/run-ts.cjs')
const CHILD = path.join(__dirname, 'scale/cli-child.ts')
const WIDE = [
  '--sim-latency-scale',
  '0',
  '--sim-rpm',
  '0',
  '--sim-capacity',
  '100000',
  '--initial-concurrency',
  '256',
  '--max-concurrency',
  '256',
]

interface ChildStats {
  code: number
  mainMs: number
  cpuMs: number
  maxRssMb: number
}

/** Runs `pacer ARGS` in a child through main(); its stdout, and its own time, CPU and memory. */
function pacer(dir: string, args: string[]): { stdout: string; stats: ChildStats } {
  const statsFile = path.join(dir, 'stats.json')
  const child = spawnSync(process.execPath, [RUN_TS, CHILD, ...args], {
    cwd: ROOT,
    env: { ...process.env, PACER_BENCH_STATS: statsFile, FORCE_COLOR: '0' },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  })
  if (child.status !== 0) {
    throw new Error(`pacer ${args.join(' ')} exited ${child.status}: ${child.stderr.slice(-2000)}`)
  }
  return { stdout: child.stdout, stats: JSON.parse(readFileSync(statsFile, 'utf8')) as ChildStats }
}

interface Row {
  n: number
  enqueueS: number
  bulkS: number
  bulkV2S: number
  runS: number
  tasksPerS: number
  usPerTask: number
  cpuUsPerTask: number
  rssMb: number
  bytesPerTask: number
  summaryS: number
  groupByS: number
  exportRowsPerS: number
  sqliteCsvRowsPerS: number | null
  ok: boolean
}

async function measure(n: number): Promise<Row> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-bench-scale-'))
  try {
    const file = path.join(dir, 'batch.jsonl')
    const db = path.join(dir, 'pacer.db')
    await writeBatch(file, n)
    const bulkS = bulkInsertMs(path.join(dir, 'baseline.db'), n) / 1000
    const bulkV2S = bulkInsertV2Ms(path.join(dir, 'baseline-v2.db'), n) / 1000

    const run = pacer(dir, ['run', file, '--db', db, '--json', ...WIDE])
    const summary = JSON.parse(run.stdout) as {
      executed: number
      reused: number
      failed: number
      enqueueMs: number
      runMs: number
    }
    const ok = summary.executed === n / 2 && summary.reused === n / 2 && summary.failed === 0
    const bytes = statSync(db).size

    const sum = pacer(dir, ['summary', '--db', db, '--json'])
    const exported = path.join(dir, 'ledger.csv')
    const exp = pacer(dir, ['export', '--db', db, '--out', exported])
    const reader = new Database(db, { readonly: true })
    const rows = reader.prepare('SELECT COUNT(*) FROM ledger_rows').pluck().get() as number
    let started = performance.now()
    reader
      .prepare(
        `SELECT label, outcome, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cost_micros)
         FROM ledger_rows GROUP BY label, outcome`,
      )
      .all()
    const groupByS = (performance.now() - started) / 1000
    reader.close()
    started = performance.now()
    const csv = spawnSync('sqlite3', ['-csv', db, 'SELECT * FROM ledger'], {
      stdio: ['ignore', 'ignore', 'ignore'],
    })
    const sqliteCsvS = (performance.now() - started) / 1000

    return {
      n,
      enqueueS: summary.enqueueMs / 1000,
      bulkS,
      bulkV2S,
      runS: summary.runMs / 1000,
      tasksPerS: n / (summary.runMs / 1000),
      usPerTask: (summary.runMs * 1000) / n,
      cpuUsPerTask: (run.stats.cpuMs * 1000) / n,
      rssMb: run.stats.maxRssMb,
      bytesPerTask: bytes / n,
      summaryS: sum.stats.mainMs / 1000,
      groupByS,
      exportRowsPerS: rows / (exp.stats.mainMs / 1000),
      sqliteCsvRowsPerS: csv.status === 0 ? rows / sqliteCsvS : null,
      ok,
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const num = (x: number, digits = 0) =>
  x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

function print(rows: Row[]): void {
  const header = [
    'tasks',
    'enqueue s',
    'bulk insert s',
    'bulk insert, v2 rows s',
    'tasks/s',
    'µs/task',
    'CPU µs/task',
    'peak RSS MB',
    'bytes/task',
    'summary s',
    'GROUP BY s',
    'export rows/s',
    'sqlite3 -csv rows/s',
  ]
  const cells = rows.map((r) => [
    num(r.n),
    num(r.enqueueS, 1),
    num(r.bulkS, 1),
    num(r.bulkV2S, 1),
    num(r.tasksPerS),
    num(r.usPerTask),
    num(r.cpuUsPerTask),
    num(r.rssMb),
    num(r.bytesPerTask),
    num(r.summaryS, 2),
    num(r.groupByS, 2),
    num(r.exportRowsPerS),
    r.sqliteCsvRowsPerS === null ? '-' : num(r.sqliteCsvRowsPerS),
  ])
  console.log(`| ${header.join(' | ')} |`)
  console.log(`|${header.map(() => '---:').join('|')}|`)
  for (const c of cells) console.log(`| ${c.join(' | ')} |`)
}

async function main(): Promise<void> {
  const rows: Row[] = []
  for (const n of SIZES) {
    console.error(`bench:scale: ${num(n)} tasks...`)
    rows.push(await measure(n))
  }
  print(rows)
  const first = rows[0] as Row
  const last = rows[rows.length - 1] as Row
  const at = num(last.n)
  const checks: [string, boolean][] = [
    [`tasks/s at ${at} ≥ 0.8 × at ${num(first.n)}`, last.tasksPerS >= 0.8 * first.tasksPerS],
    [`engine time per task ≤ 150 µs (at ${at})`, last.usPerTask <= 150],
    [`engine CPU per task ≤ 150 µs (at ${at})`, last.cpuUsPerTask <= 150],
    [`enqueue ≤ 2 × bulk insert of the same rows (at ${at})`, last.enqueueS <= 2 * last.bulkS],
    [
      `enqueue ≤ 2 × bulk insert of the lines as v2 rows (at ${at})`,
      last.enqueueS <= 2 * last.bulkV2S,
    ],
    [`peak RSS ≤ 300 MB (at ${at})`, last.rssMb <= 300],
  ]
  for (const [what, met] of checks) console.log(`  ${met ? 'met   ' : 'MISSED'} ${what}`)
  for (const r of rows.filter((x) => !x.ok)) {
    console.log(`  WRONG: ${num(r.n)} tasks did not execute each distinct task once`)
  }
  if (rows.some((r) => !r.ok)) process.exitCode = 1
}

void main()
