// The read side at scale: `pacer summary`, the console's first calls and `pacer export` on a
// database of a million tasks and their ledger, each beside a same-run SQLite baseline (a plain
// GROUP BY; better-sqlite3 iterate() + join for the export), and the one-time fold of a ledger
// written without its rollups (a database from before them, or a bulk insert).
//
//   npm run bench:read                 1,000,000 tasks (about 1.1M ledger rows) in a temp file
//   npm run bench:read -- --quick      100,000 tasks
//   npm run bench:read -- --tasks N
//   npm run bench:read -- --db FILE    measure an existing database (bench:scale's, after a run)
//
// measureReads() and printReads() are what another bench calls on a database it made.
import { spawnSync } from 'node:child_process'
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { createEngine } from '../src/main/engine/app/engine'
import { openDatabase } from '../src/main/engine/db'
import { Ledger } from '../src/main/engine/ledger/ledger'
import { prepareRowInsert } from '../src/main/engine/ledger/record'
import { Prices } from '../src/main/engine/pricing/prices'
import { TaskQueue } from '../src/main/engine/queue/queue'
import type { NewTask } from '../src/main/engine/queue/tasks'
import { systemClock } from '../src/main/engine/core/types'

const PACER = path.resolve(__dirname, '../bin/pacer.cjs')
const TYPES = ['classify', 'translate', 'extract', 'summarize']
const BATCH_TASKS = 250_000
const ROUNDS = 3

/** What measureReads found; times in ms. */
export interface ReadFigures {
  tasks: number
  ledgerRows: number
  fileBytes: number
  summaryCliMs: number
  emptyCliMs: number
  summaryRollupMs: number
  plainGroupByMs: number
  startup: { call: string; ms: number }[]
  startupTotalMs: number
  exportRowsPerS: number
  baselineRowsPerS: number
  checks: string[]
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function timed<T>(f: () => T | Promise<T>): Promise<[T, number]> {
  const t0 = performance.now()
  const r = await f()
  return [r, performance.now() - t0]
}

const fpOf = (i: number) => ((i * 2654435761) >>> 0).toString(16).padStart(8, '0').repeat(8)

/**
 * A database as a finished batch leaves it: tasks through the queue's own enqueue, and per task
 * pair one execution (one in eight with three steps) and one reuse of it, written as raw ledger
 * rows in one transaction (no rollups kept: the fold is measured separately). Times: the last
 * 25 minutes, so the Spend view's last hour holds all of it.
 */
export function buildDatabase(file: string, tasks: number): { ledgerRows: number } {
  const db = openDatabase(file)
  const queue = new TaskQueue(db, systemClock)
  for (let from = 0; from < tasks; from += BATCH_TASKS) {
    const batch: NewTask[] = []
    for (let i = from; i < Math.min(tasks, from + BATCH_TASKS); i++) {
      const orig = i - (i % 2)
      batch.push({
        seq: i - from + 1,
        type: TYPES[orig % TYPES.length]!,
        payloadJson: `{"i":${orig}}`,
        fp: fpOf(orig),
        key: null,
        steps: orig % 16 === 0 ? 3 : 1,
        provider: 'sim',
        model: 'sim-small',
      })
    }
    const id = queue.createBatch(
      { name: `bench ${from}`, source: null, sourceHash: null, audit: false },
      batch,
    )
    queue.setBatchState(id, 'done')
  }
  const insert = prepareRowInsert(db)
  const start = Date.now() - 25 * 60_000
  let ledgerRows = 0
  db.transaction(() => {
    for (let i = 0; i < tasks; i++) {
      const orig = i - (i % 2)
      const steps = orig % 16 === 0 ? 3 : 1
      const base = {
        ts: start + Math.floor((i / tasks) * 24 * 60_000),
        taskId: i + 1,
        batchId: null,
        fp: fpOf(orig),
        worker: 'bench:1:abcdef',
        taskType: TYPES[orig % TYPES.length]!,
        provider: 'sim',
        model: 'sim-small',
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        latencyMs: 40,
        status: 200,
        priceVersion: 'bench',
        cacheSavedMicros: null,
        cacheWriteExtraMicros: null,
      }
      if (i % 2 === 0) {
        for (let step = 1; step <= steps; step++) {
          const input = 1_000 * step
          insert.row({
            ...base,
            ts: base.ts + step,
            step,
            inputTokens: input,
            outputTokens: 100,
            costMicros: 3 * input + 1_500,
            savedMicros: null,
            outcome: 'executed',
            epoch: 1,
          })
          ledgerRows++
        }
      } else {
        const saved = 3_000 * ((steps * (steps + 1)) / 2) + 1_500 * steps
        insert.row({
          ...base,
          step: 0,
          inputTokens: 0,
          outputTokens: 0,
          costMicros: 0,
          savedMicros: saved,
          outcome: 'reused',
          epoch: null,
          latencyMs: null,
          status: null,
        })
        ledgerRows++
      }
    }
  })()
  db.close()
  return { ledgerRows }
}

/** `pacer ARGS` as a user runs it; its wall time in ms. */
function cli(args: string[]): number {
  const t0 = performance.now()
  const r = spawnSync(process.execPath, [PACER, ...args], { encoding: 'utf8' })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`pacer ${args.join(' ')} failed: ${r.stderr}`)
  return ms
}

/** Measures the read side on an existing database file (its rollups folded first). */
export async function measureReads(file: string, scratchDir: string): Promise<ReadFigures> {
  const checks: string[] = []
  // The fold of whatever the rollups do not cover yet is part of opening a ledger.
  const foldDb = openDatabase(file)
  new Ledger({ db: foldDb, prices: new Prices() })
  const tasks = foldDb.prepare('SELECT COUNT(*) FROM tasks').pluck().get() as number
  const ledgerRows = foldDb.prepare('SELECT COUNT(*) FROM ledger').pluck().get() as number
  const plainGroupBy = foldDb.prepare(
    `SELECT task_type, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cost_micros)
     FROM ledger GROUP BY task_type`,
  )
  const plainGroupByMs = median(
    Array.from({ length: ROUNDS }, () => {
      const t0 = performance.now()
      plainGroupBy.all()
      return performance.now() - t0
    }),
  )
  foldDb.close()

  const empty = path.join(scratchDir, 'empty.db')
  openDatabase(empty).close()
  const emptyCliMs = median(Array.from({ length: ROUNDS }, () => cli(['summary', '--db', empty])))
  const summaryCliMs = median(
    Array.from({ length: ROUNDS }, () => cli(['summary', '--db', file, '--json'])),
  )

  const engine = createEngine({ dbPath: file })
  try {
    const h = engine.handlers
    const summaryRollupMs = median(
      await Promise.all(
        Array.from({ length: ROUNDS }, async () => (await timed(() => h['ledger:rollup']({})))[1]),
      ),
    )
    const [all] = await timed(() => h['ledger:rollup']({}))
    if (all.totals.runs !== tasks && tasks > 0) {
      checks.push(`summary counts ${all.totals.runs} runs for ${tasks} tasks`)
    }
    const { startup, startupTotalMs } = await consoleStartup(engine.handlers)

    const out = path.join(scratchDir, 'events.csv')
    const [exported, exportMs] = await timed(async () => {
      const stream = createWriteStream(out)
      const r = await engine.exportCsv('events', stream)
      if (!stream.writableFinished) await once(stream, 'finish')
      return r
    })
    if (exported.rows !== ledgerRows) checks.push(`export wrote ${exported.rows} of ${ledgerRows}`)
    const baselineMs = await iterateJoinBaseline(engine.db, path.join(scratchDir, 'baseline.csv'))
    return {
      tasks,
      ledgerRows,
      fileBytes: statSync(file).size,
      summaryCliMs,
      emptyCliMs,
      summaryRollupMs,
      plainGroupByMs,
      startup,
      startupTotalMs,
      exportRowsPerS: (ledgerRows / exportMs) * 1000,
      baselineRowsPerS: (ledgerRows / baselineMs) * 1000,
      checks,
    }
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** What the console asks first (store/wire.ts): each alone, then all at once as the console does. */
async function consoleStartup(h: ReturnType<typeof createEngine>['handlers']) {
  const since = Date.now() - 3_600_000
  const calls: [string, () => unknown][] = [
    ['ledger:rollup (last hour)', () => h['ledger:rollup']({ since })],
    ['ledger:over-time (last hour)', () => h['ledger:over-time']({ since, bucketMs: 60_000 })],
    ['ledger:rollup (all time)', () => h['ledger:rollup']({})],
    ['batches:list', () => h['batches:list']({})],
    ['tasks:list (first window)', () => h['tasks:list']({ offset: 0, limit: 500 })],
    ['scheduler:get', () => h['scheduler:get']({})],
    ['settings:get', () => h['settings:get']({})],
  ]
  const alone: number[][] = calls.map(() => [])
  const together: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, [, call]] of calls.entries()) alone[i]!.push((await timed(call))[1])
    together.push((await timed(() => Promise.all(calls.map(([, call]) => call()))))[1])
  }
  return {
    startup: calls.map(([call], i) => ({ call, ms: median(alone[i]!) })),
    startupTotalMs: median(together),
  }
}

/** The least a CSV export can cost through the driver: every row iterated and joined. */
async function iterateJoinBaseline(db: ReturnType<typeof openDatabase>, file: string) {
  const [, ms] = await timed(async () => {
    const out = createWriteStream(file)
    const rows = db.prepare('SELECT * FROM ledger ORDER BY id').raw()
    let chunk: string[] = []
    for (const row of rows.iterate()) {
      chunk.push((row as unknown[]).join(','))
      if (chunk.length === 1_000) {
        if (!out.write(`${chunk.join('\r\n')}\r\n`)) await once(out, 'drain')
        chunk = []
      }
    }
    out.end(chunk.length ? `${chunk.join('\r\n')}\r\n` : '')
    await once(out, 'finish')
  })
  return ms
}

const fmtMs = (ms: number) =>
  ms >= 1_000 ? `${(ms / 1_000).toFixed(2)} s` : `${Math.round(ms)} ms`
const fmtRate = (r: number) => `${Math.round(r / 1_000)}k rows/s`
const mark = (ok: boolean) => (ok ? 'met' : 'MISSED')

/** The figures as a table, with the targets. */
export function printReads(f: ReadFigures, extra: { foldMs?: number } = {}): void {
  const row = (label: string, value: string, baseline = '', note = '') =>
    console.log(`  ${label.padEnd(36)}${value.padStart(14)}   ${baseline.padEnd(30)}${note}`)
  console.log(
    `\nread side: ${f.tasks.toLocaleString('en-US')} tasks, ${f.ledgerRows.toLocaleString('en-US')} ` +
      `ledger rows, ${(f.fileBytes / 1e6).toFixed(0)} MB file`,
  )
  console.log(`  ${''.padEnd(36)}${'time'.padStart(14)}   ${'same-run baseline'.padEnd(30)}target`)
  if (extra.foldMs !== undefined) {
    row(
      'fold rollups (once, rows before them)',
      fmtMs(extra.foldMs),
      `${fmtRate((f.ledgerRows / extra.foldMs) * 1000)}`,
    )
  }
  row(
    'pacer summary (CLI process)',
    fmtMs(f.summaryCliMs),
    `${fmtMs(f.emptyCliMs)} on an empty db`,
    `<= 1 s: ${mark(f.summaryCliMs <= 1_000)}`,
  )
  row(
    '  its rollup (in process)',
    fmtMs(f.summaryRollupMs),
    `${fmtMs(f.plainGroupByMs)} plain GROUP BY`,
  )
  row(
    'console startup, 7 calls at once',
    fmtMs(f.startupTotalMs),
    '',
    `<= 1 s: ${mark(f.startupTotalMs <= 1_000)}`,
  )
  for (const s of f.startup) row(`  ${s.call}`, fmtMs(s.ms), '(alone)')
  row(
    'pacer export (events)',
    fmtRate(f.exportRowsPerS),
    `${fmtRate(f.baselineRowsPerS)} iterate()+join`,
    `>= 200k rows/s: ${mark(f.exportRowsPerS >= 200_000)}`,
  )
  for (const c of f.checks) console.log(`  CHECK FAILED: ${c}`)
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const at = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
  const scratch = mkdtempSync(path.join(tmpdir(), 'pacer-bench-read-'))
  try {
    const existing = at('--db')
    let file = existing
    let foldMs: number | undefined
    if (!file) {
      const tasks = Number(at('--tasks') ?? (args.includes('--quick') ? 100_000 : 1_000_000))
      file = path.join(scratch, 'pacer.db')
      const [{ ledgerRows }, buildMs] = await timed(() => buildDatabase(file!, tasks))
      console.log(`built ${tasks} tasks and ${ledgerRows} ledger rows in ${fmtMs(buildMs)}`)
      const db = openDatabase(file)
      foldMs = (await timed(() => new Ledger({ db, prices: new Prices() })))[1]
      db.close()
    }
    const figures = await measureReads(file, scratch)
    printReads(figures, { foldMs })
    if (figures.checks.length > 0) process.exitCode = 1
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

// Run as a script (bin/run-ts.cjs requires it directly), not when another bench imports it.
if (require.main === module.parent) {
  main().catch((err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
