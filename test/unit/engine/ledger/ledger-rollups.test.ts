// The maintained rollups against the definition of the numbers: a plain model over the rows, for a
// random mix of rows (every outcome, executions over several buckets and batches, unpriced models,
// rows without task id or epoch) folded at random points by two connections, and every filter shape.
import fc from 'fast-check'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import type { LedgerFilter } from '../../../../src/shared/contract'
import {
  Ledger,
  type LedgerRow,
  type LedgerTotals,
} from '../../../../src/main/engine/ledger/ledger'
import {
  toTotals,
  type RawExecutions,
  type RawRows,
} from '../../../../src/main/engine/ledger/queries'
import { sumAll } from '../../../../src/main/engine/ledger/rollup-plans'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import type { LedgerOutcome } from '../../../../src/main/engine/core/types'
import { openLedgerDb } from '../../../helpers/ledger-db'

const HOUR = 3_600_000
const T0 = 1_700_002_800_000 // a multiple of an hour

const OUTCOMES: LedgerOutcome[] = [
  'executed',
  'executed',
  'executed',
  'duplicate',
  'reused',
  'throttled',
  'error',
  'abandoned',
]

// Times cluster around bucket edges (15 s, 1 h) as well as spreading over five hours.
const tsArb = fc.oneof(
  fc.integer({ min: -2 * HOUR, max: 3 * HOUR }),
  fc
    .tuple(fc.integer({ min: -2, max: 3 }), fc.integer({ min: -20, max: 20 }))
    .map(([h, d]) => h * HOUR + d * 997),
  fc
    .tuple(fc.integer({ min: -200, max: 200 }), fc.integer({ min: -3, max: 3 }))
    .map(([b, d]) => b * 15_000 + d),
)

const eventArb = fc.record({
  ts: tsArb.map((d) => T0 + d),
  fp: fc.constantFrom('fa', 'fb', 'fc'),
  taskId: fc.constantFrom(1, 2, 3, null),
  epoch: fc.constantFrom(1, 2, null),
  taskType: fc.constantFrom('classify', 'translate'),
  batchId: fc.constantFrom('b1', 'b2', null),
  outcome: fc.constantFrom(...OUTCOMES),
  model: fc.constantFrom('sim-small', 'sim-small', 'mystery-1'),
  input: fc.constantFrom(0, 10, 1_000, 2_500),
  output: fc.constantFrom(0, 7, 100),
  saved: fc.constantFrom<number | null | undefined>(undefined, undefined, 0, 1_234, null),
  // Which connection records it, and whether a read follows.
  writer: fc.constantFrom(0, 1),
  readAfter: fc.boolean(),
})
type Event = typeof eventArb extends fc.Arbitrary<infer E> ? E : never

/** Windows whose edges often fall just before, on or after a row, or mid-bucket near one. */
function windowArb(events: readonly Event[]): fc.Arbitrary<{ since?: number; until?: number }> {
  const near = fc
    .tuple(fc.constantFrom(...events.map((e) => e.ts)), fc.constantFrom(-7_000, -1, 0, 1, 7_000))
    .map(([ts, d]) => ts + d)
  const edge = fc.oneof(
    tsArb.map((d) => T0 + d),
    near,
  )
  return fc.oneof(
    fc.constant({}),
    edge.map((since) => ({ since })),
    edge.map((until) => ({ until })),
    fc.tuple(edge, edge).map(([a, b]) => ({ since: Math.min(a, b), until: Math.max(a, b) })),
  )
}

/** Events, how often each connection folds, and a few queries made for the events. */
function withWindows<Q>(query: (events: readonly Event[]) => fc.Arbitrary<Q>) {
  const foldEvery = fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 200 }))
  return fc
    .array(eventArb, { minLength: 20, maxLength: 80 })
    .chain((events) =>
      fc.tuple(
        fc.constant(events),
        foldEvery,
        fc.array(query(events), { minLength: 3, maxLength: 6 }),
      ),
    )
}

type Sums = Omit<RawRows & RawExecutions, 'taskType'>

/**
 * The definition, on plain rows. An execution is (fp, task id, epoch, task type), within the batch
 * when filtering by one; it is a duplicate if any row of it is, counted where its latest row is,
 * and its rows in the filter are wasted. A task's executions that are not duplicates (the same
 * task resumed at a later epoch) count once, as executed, where the latest of their rows is; rows
 * without a task id keep their epochs apart.
 */
function model(rows: readonly LedgerRow[], f: LedgerFilter): Map<string, Sums> {
  const inTime = (ts: number) =>
    (f.since === undefined || ts >= f.since) && (f.until === undefined || ts < f.until)
  const inBatch = (r: LedgerRow) => f.batchId === undefined || r.batchId === f.batchId
  const isRun = (r: LedgerRow) => r.outcome === 'executed' || r.outcome === 'duplicate'
  const runKey = (r: LedgerRow) => JSON.stringify([r.fp, r.taskId, r.epoch, r.taskType])
  const runs = new Map<string, { lastTs: number; dup: boolean; type: string }>()
  for (const r of rows.filter((r) => isRun(r) && inBatch(r))) {
    const run = runs.get(runKey(r)) ?? { lastTs: r.ts, dup: false, type: r.taskType }
    run.lastTs = Math.max(run.lastTs, r.ts)
    run.dup ||= r.outcome === 'duplicate'
    runs.set(runKey(r), run)
  }
  const out = new Map<string, Sums>()
  const of = (type: string): Sums => {
    let s = out.get(type)
    if (!s) {
      s = zero()
      out.set(type, s)
    }
    return s
  }
  for (const r of rows.filter((r) => inTime(r.ts) && inBatch(r))) {
    const s = of(r.taskType)
    const billed = r.inputTokens + r.outputTokens > 0
    s.reused += r.outcome === 'reused' ? 1 : 0
    s.inputTokens += r.inputTokens
    s.cachedInputTokens += r.cachedInputTokens
    s.cacheWriteTokens += r.cacheWriteTokens
    s.outputTokens += r.outputTokens
    s.costMicros += r.costMicros ?? 0
    s.pricedCalls += billed && r.costMicros !== null ? 1 : 0
    s.unpricedCalls += billed && r.costMicros === null ? 1 : 0
    s.savedMicros += r.outcome === 'reused' ? (r.savedMicros ?? 0) : 0
    s.unpricedReuses += r.outcome === 'reused' && r.savedMicros === null ? 1 : 0
    s.throttled += r.outcome === 'throttled' ? 1 : 0
    s.errors += r.outcome === 'error' ? 1 : 0
    s.abandoned += r.outcome === 'abandoned' ? 1 : 0
    if (isRun(r)) {
      s.executionInputTokens += r.inputTokens
      if (runs.get(runKey(r))!.dup) s.wastedMicros += r.costMicros ?? 0
    }
  }
  const tasks = new Map<string, { lastTs: number; type: string }>()
  for (const [key, run] of runs) {
    if (run.dup) {
      if (inTime(run.lastTs)) of(run.type).duplicates += 1
      continue
    }
    const [fp, taskId, epoch, type] = JSON.parse(key) as [string, number | null, number, string]
    const taskKey = JSON.stringify([fp, taskId, taskId === null ? epoch : null, type])
    const task = tasks.get(taskKey)
    if (task) task.lastTs = Math.max(task.lastTs, run.lastTs)
    else tasks.set(taskKey, { lastTs: run.lastTs, type })
  }
  for (const task of tasks.values()) if (inTime(task.lastTs)) of(task.type).executed += 1
  return out
}

function expectedRollup(rows: readonly LedgerRow[], f: LedgerFilter) {
  const sums = model(rows, f)
  const byType = [...sums].map(([taskType, s]) => ({ taskType, ...toTotals(s, s) }))
  byType.sort(
    (a, b) => (b.costMicros ?? -1) - (a.costMicros ?? -1) || (a.taskType < b.taskType ? -1 : 1),
  )
  const all = zero()
  for (const s of sums.values()) for (const k of Object.keys(all) as (keyof Sums)[]) all[k] += s[k]
  const totals: LedgerTotals = toTotals(all, all)
  return { byType, totals }
}

function zero(): Sums {
  const { taskType: _, ...sums } = sumAll([])
  return sums
}

function expectedSeries(
  rows: readonly LedgerRow[],
  w: { since?: number; until?: number },
  bucketMs: number,
) {
  const byTs = new Map<number, { ts: number; costMicros: number; calls: number; tokens: number }>()
  for (const r of rows) {
    if ((w.since !== undefined && r.ts < w.since) || (w.until !== undefined && r.ts >= w.until))
      continue
    const ts = r.ts - (((r.ts % bucketMs) + bucketMs) % bucketMs)
    const p = byTs.get(ts) ?? { ts, costMicros: 0, calls: 0, tokens: 0 }
    p.costMicros += r.costMicros ?? 0
    p.calls += r.outcome === 'reused' ? 0 : 1
    p.tokens += r.inputTokens + r.outputTokens
    byTs.set(ts, p)
  }
  return [...byTs.values()].sort((a, b) => a.ts - b.ts)
}

/**
 * Two connections to one fresh database file, each with its Ledger (as two processes have), each
 * folding its appends into the rollups every few rows: reads see some rows folded, some pending.
 */
async function withLedgers(
  foldEvery: readonly [number, number],
  run: (ledgers: Ledger[], file: string) => Promise<void>,
): Promise<void> {
  const h = openLedgerDb()
  const second = new Database(h.file, { timeout: 5000 })
  const prices = new Prices()
  const ledgers = [
    new Ledger({ db: h.db, prices, foldEvery: foldEvery[0] }),
    new Ledger({ db: second, prices, foldEvery: foldEvery[1] }),
  ]
  try {
    await run(ledgers, h.file)
  } finally {
    for (const l of ledgers) await l.close()
    second.close()
    h.close()
  }
}

function record(ledgers: readonly Ledger[], events: readonly Event[]): LedgerRow[] {
  for (const e of events) {
    const ledger = ledgers[e.writer]!
    const reused = e.outcome === 'reused'
    ledger.record({
      ts: e.ts,
      taskId: e.taskId,
      batchId: e.batchId,
      fp: e.fp,
      worker: `w${e.writer}`,
      taskType: e.taskType,
      provider: 'sim',
      model: e.model,
      step: 1,
      usage: {
        inputTokens: reused ? 0 : e.input,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: reused ? 0 : e.output,
      },
      outcome: e.outcome,
      latencyMs: null,
      status: null,
      epoch: e.epoch,
      ...(reused && e.saved !== undefined ? { savedMicros: e.saved } : {}),
    })
    if (e.readAfter) ledgers[1 - e.writer]!.totals()
  }
  return [...ledgers[0]!.events()]
}

const SETTINGS = { numRuns: 30, endOnFailure: true }

describe('time series', () => {
  it('equals the rows bucketed, for any bucket width and window', async () => {
    const width = fc.constantFrom(1_000, 10_000, 15_000, 60_000, 45_000, HOUR, 2 * HOUR)
    await fc.assert(
      fc.asyncProperty(
        withWindows((events) => fc.tuple(windowArb(events), width)),
        ([events, foldEvery, queries]) =>
          withLedgers(foldEvery, async (ledgers) => {
            const rows = record(ledgers, events)
            for (const [w, bucketMs] of queries) {
              const want = expectedSeries(rows, w, bucketMs)
              expect(ledgers[0]!.costOverTime({ ...w, bucketMs })).toEqual(want)
              expect(await ledgers[1]!.costOverTimeOffThread({ ...w, bucketMs })).toEqual(want)
            }
          }),
      ),
      SETTINGS,
    )
  })
})

describe('maintained rollups', () => {
  it('equal the definition for any rows and any filter, folded at any point', async () => {
    const batch = fc.constantFrom<string | undefined>(undefined, 'b1', 'b2')
    await fc.assert(
      fc.asyncProperty(
        withWindows((events) => fc.tuple(windowArb(events), batch)),
        ([events, foldEvery, filters]) =>
          withLedgers(foldEvery, async (ledgers) => {
            const rows = record(ledgers, events)
            for (const [w, batchId] of [[{}, undefined] as const, ...filters]) {
              const f: LedgerFilter = { ...w, ...(batchId ? { batchId } : {}) }
              const want = expectedRollup(rows, f)
              const reader = ledgers[rows.length % 2]!
              expect(reader.rollupByType(f)).toEqual(want.byType)
              expect(reader.totals(f)).toEqual(want.totals)
              expect(await reader.rollup(f)).toEqual(want)
            }
          }),
      ),
      SETTINGS,
    )
  })
})

describe('reads and the write lock', () => {
  it('a read never waits for the lock: rows nobody folded yet are added as it reads', async () => {
    await withLedgers([1, 1], async ([mine, theirs], file) => {
      const ev = (fp: string) => ({
        ts: T0,
        taskId: 1,
        batchId: 'b1',
        fp,
        worker: 'w',
        taskType: 'classify',
        provider: 'sim',
        model: 'sim-small',
        step: 1,
        usage: { inputTokens: 1_000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 },
        outcome: 'executed' as const,
        latencyMs: null,
        status: null,
        epoch: 1,
      })
      for (let i = 0; i < 5; i++) mine!.record(ev(`f${i}`))
      // Another process holds the write lock, as a long enqueue does, and appends rows without
      // folding them (an older Pacer would): reads must neither wait nor miss those rows.
      const other = new Database(file, { timeout: 5_000 })
      try {
        other.exec('BEGIN IMMEDIATE')
        other
          .prepare(
            `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
               input_tokens, cost_micros, outcome, epoch)
             VALUES (?, 2, 'b1', 'late', 'w', 'classify', 'sim', 'sim-small', 1, 500, 1500,
               'executed', 1)`,
          )
          .run(T0 + 20_000)
        expect(mine!.totals()).toMatchObject({ executed: 5, inputTokens: 5_000 })
        expect(theirs!.totals({ batchId: 'b1' })).toMatchObject({ executed: 5 })
        other.exec('COMMIT')
        expect(mine!.totals()).toMatchObject({ executed: 6, inputTokens: 5_500 })
        expect(theirs!.costOverTime({ bucketMs: 60_000 })).toEqual([
          { ts: T0, costMicros: 16_500, calls: 6, tokens: 5_500 },
        ])
        // Holding the lock again: an append still lands, its fold waits for a later one.
        other.exec('BEGIN IMMEDIATE')
        expect(() => new Ledger({ db: other, prices: new Prices() })).not.toThrow()
        other.exec('ROLLBACK')
        mine!.record(ev('f9'))
        expect(theirs!.totals({ since: T0 })).toMatchObject({ executed: 7, inputTokens: 6_500 })
      } finally {
        other.close()
      }
    })
  })
})
