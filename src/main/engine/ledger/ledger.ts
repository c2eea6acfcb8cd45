import type Database from 'better-sqlite3'
import type { CostPoint, LedgerFilter, TypeRollupView } from '../../../shared/contract'
import { csvStream } from '../core/csv'
import {
  CSV_PAGE_ROWS,
  ExportIncomplete,
  eventsCsvPageSql,
  streamEventsCsv,
  SUMMARY_COLUMNS,
} from './csv'
import { integrityProblems } from '../db'
import { ReadWorker } from '../db/read-worker'
import { eventsPageSql, PAGE_ROWS } from './queries'
import { fpKey } from '../db/codes'
import { directWrites, type WriteScope } from '../db/step-writes'
import {
  checkRecordInput,
  ORIGINAL_COST_SQL,
  OWN_EXECUTION_SQL,
  prepareRowInsert,
  type LedgerRowParams,
  type RowInsert,
} from './record'
import {
  byCost,
  checkFilter,
  checkSeries,
  pendingRows,
  rollupPlan,
  sumByBucket,
  sumByType,
  timeSeriesPlan,
  totalOf,
  whereOf,
  type ReadPlan,
} from './rollup-plans'
import { LedgerRollups } from './rollups'
import type { Prices } from '../pricing/prices'
import { batchPriceVersion } from '../pricing/batch-rates'
import { priceCall } from './batch-discount'
import { systemClock, type Clock, type LedgerEventInput, type LedgerOutcome } from '../core/types'

export { byCost, totalOf } from './rollup-plans'

/** One stored ledger row. */
export interface LedgerRow {
  id: number
  ts: number
  taskId: number | null
  batchId: string | null
  fp: string
  worker: string
  taskType: string
  provider: string
  model: string
  step: number
  inputTokens: number
  cachedInputTokens: number
  cacheWriteTokens: number
  outputTokens: number
  /** Null = unpriced model (tokens billed at an unknown price), never 0 for "unknown". */
  costMicros: number | null
  savedMicros: number | null
  /** Priced rows: what cache reads saved, and what cache writes cost above the input price. */
  cacheSavedMicros: number | null
  cacheWriteExtraMicros: number | null
  outcome: LedgerOutcome
  latencyMs: number | null
  status: number | null
  epoch: number | null
  priceVersion: string | null
  /** 1: the tokens (and the cost) are Pacer's estimate; the provider reported no usage. */
  estimated: number
  /** Why the row is what it is, when the outcome alone does not say (a duplicate's 'answer lost'). */
  reason: string | null
  /** Via batch: its usage at the list price minus its cost; null live or unpriced (batch-discount.ts). */
  batchSavedMicros?: number | null
}

/** Spend of a set of ledger rows: the contract's rollup view, without the task type. */
export type LedgerTotals = Omit<TypeRollupView, 'taskType'>

/** Spend of one task type. */
export type TypeRollup = TypeRollupView

/** One bucket of costOverTime. */
export type CostBucket = CostPoint

export interface LedgerOptions {
  db: Database.Database
  prices: Prices
  /** Stamps events recorded without a `ts`. @default systemClock */
  clock?: Clock
  /** Groups the runner's writes per task step (the engine's). @default one per statement */
  writes?: WriteScope
  /**
   * The better-sqlite3 binding the read worker loads (Electron's ABI), as openDatabase took it.
   * The worker runs the reads no maintained rollup answers, off the caller's thread.
   */
  nativeBinding?: string
  /** Rows appended between two folds into the rollup tables (ledger-rollups.ts). @default 1000 */
  foldEvery?: number
}

/** A ledger event as `record` takes it; `ts` defaults to the clock. */
export type LedgerRecordInput = Omit<LedgerEventInput, 'ts'> & { ts?: number }

/**
 * The append-only cost ledger: one immutable row per provider call attempt and per reuse, priced
 * when recorded with the price table of that moment (its version is on the row), and the rollups,
 * time series and CSV exports built from those rows. Their SQL and checks live beside it:
 * ledger-record.ts (the write side), ledger-rollups.ts (the rollup tables kept with every row),
 * ledger-rollup-plans.ts (how a read combines them, and its filter's checks), ledger-queries.ts
 * (SQL over the rows), ledger-csv.ts (columns, and the events export's pages).
 */
export class Ledger {
  readonly #db: Database.Database
  readonly #prices: Prices
  readonly #clock: Clock
  readonly #writes: WriteScope
  readonly #insert: RowInsert
  readonly #original: Database.Statement<
    [{ fp: Buffer | string }],
    { n: number; cost: number; unpriced: number }
  >
  readonly #maxId: Database.Statement<[], { maxId: number }>
  readonly #own: Database.Statement<[{ fp: number; task: number; epoch: number }]>
  readonly #rollups: LedgerRollups
  // Statements by SQL text: each filter shape has its own, so that its indexes are used.
  readonly #statements = new Map<string, Database.Statement>()
  readonly #reader: ReadWorker | null

  /** What this process recorded per batch: a live cost for `pacer run`'s progress line. */
  readonly #recorded = new Map<string, { micros: number; priced: number; unpriced: number }>()

  constructor({
    db,
    prices,
    clock = systemClock,
    writes = directWrites,
    nativeBinding,
    foldEvery,
  }: LedgerOptions) {
    this.#db = db
    this.#prices = prices
    this.#clock = clock
    this.#writes = writes
    this.#insert = prepareRowInsert(db)
    writes.onRollback?.(() => this.#insert.forget())
    this.#original = db.prepare(ORIGINAL_COST_SQL)
    this.#own = db.prepare(OWN_EXECUTION_SQL)
    // The table, not the `ledger` view: MAX over the view's joins would read every row.
    this.#maxId = db.prepare('SELECT COALESCE(MAX(id), 0) AS maxId FROM ledger_rows')
    this.#rollups = new LedgerRollups(db, foldEvery)
    this.#reader = db.memory ? null : new ReadWorker({ file: db.name, nativeBinding })
  }

  /**
   * Whether the fingerprint's result at this claim epoch is this task's own: it executed under
   * that epoch, or that epoch replayed the calls it paid under an earlier one.
   */
  executedBy(fpId: number, taskId: number, epoch: number): boolean {
    return this.#own.get({ fp: fpId, task: taskId, epoch }) !== undefined
  }

  /** What a call with this usage costs at the current prices (null: unpriced or not valid). */
  costOf(provider: string, model: string, usage: LedgerRecordInput['usage']): number | null {
    try {
      return this.#prices.costMicros(usage, this.#prices.priceFor(provider, model))
    } catch {
      return null
    }
  }

  /**
   * Prices a call with the current table and appends one immutable row. A 'reused' row carries no
   * tokens; its savedMicros defaults to originalCostMicros(fp).
   */
  record(e: LedgerRecordInput): { id: number; costMicros: number | null } {
    const ts = e.ts ?? this.#clock.now()
    checkRecordInput(e, ts)
    const { usage } = e
    const tokens = usage.inputTokens + usage.outputTokens
    // Validates the usage (integers, cached ⊆ input) before anything is written.
    const priced = priceCall(this.#prices, e)
    let costMicros = priced.costMicros
    // No tokens billed is a known cost of zero even for an unknown model: unpriced means "tokens we
    // cannot put a price on", so a 429 or a reuse never counts as unpriced.
    if (costMicros === null && tokens === 0) costMicros = 0
    const savedMicros =
      e.outcome === 'reused'
        ? e.savedMicros === undefined
          ? this.originalCostMicros(e.fp)
          : e.savedMicros
        : e.outcome === 'replayed'
          ? (e.savedMicros ?? null)
          : null
    const row: LedgerRowParams = {
      ts,
      taskId: e.taskId,
      batchId: e.batchId,
      fp: e.fp,
      fpId: e.fpId,
      worker: e.worker,
      taskType: e.taskType,
      provider: e.provider,
      model: e.model,
      step: e.step,
      inputTokens: usage.inputTokens,
      cachedInputTokens: usage.cachedInputTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      outputTokens: usage.outputTokens,
      costMicros,
      savedMicros,
      outcome: e.outcome,
      latencyMs: e.latencyMs,
      status: e.status,
      epoch: e.epoch,
      // A call answered through a provider batch is priced with the batch rates: its row says so
      // where every row says which table priced it (the rollups count it as any executed call).
      priceVersion:
        e.tier === 'batch' ? batchPriceVersion(this.#prices.version) : this.#prices.version,
      estimated: e.estimated ? 1 : 0,
      cacheSavedMicros: priced.cache?.savedMicros ?? null,
      cacheWriteExtraMicros: priced.cache?.writeExtraMicros ?? null,
      reason: e.reason ?? null,
      batchSavedMicros: priced.batchSavedMicros,
    }
    const id = this.#writes.run(() => this.#insert.row(row))
    // The rollups fold rows in pages, every FOLD_EVERY rows and before every read (rollups.ts).
    this.#rollups.appended()
    if (e.batchId !== null) this.#count(e.batchId, costMicros, tokens > 0)
    return { id, costMicros }
  }

  /**
   * The cost of the rows this process recorded for a batch, kept as they are written (a rollup of
   * a million rows every second would cost more than the run). Null: only unpriced calls.
   */
  recordedCost(batchId: string): number | null {
    const r = this.#recorded.get(batchId)
    if (!r) return 0
    return r.unpriced > 0 && r.priced === 0 ? null : r.micros
  }

  #count(batchId: string, costMicros: number | null, billed: boolean): void {
    let r = this.#recorded.get(batchId)
    if (!r) this.#recorded.set(batchId, (r = { micros: 0, priced: 0, unpriced: 0 }))
    if (costMicros === null) r.unpriced++
    else {
      r.micros += costMicros
      if (billed) r.priced++
    }
  }

  /**
   * Spend per task type, most expensive first (unpriced-only types last). Over a time window an
   * execution counts in the window of its latest row (see executionsSql).
   */
  rollupByType(filter: LedgerFilter = {}): TypeRollup[] {
    return byCost(sumByType(this.#runHere(rollupPlan(checkFilter(filter)))))
  }

  /** Spend of all rows matching the filter. */
  totals(filter: LedgerFilter = {}): LedgerTotals {
    return totalOf(sumByType(this.#runHere(rollupPlan(checkFilter(filter)))))
  }

  /**
   * rollupByType and totals from one read; a filter no maintained rollup answers (a batch within
   * a time window) is computed on the read worker, so the caller's thread stays free meanwhile.
   */
  async rollup(filter: LedgerFilter = {}): Promise<{ byType: TypeRollup[]; totals: LedgerTotals }> {
    const sums = sumByType(await this.#run(rollupPlan(checkFilter(filter))))
    return { byType: byCost(sums), totals: totalOf(sums) }
  }

  /** Cost, calls and tokens per time bucket (epoch-aligned), oldest first; empty buckets omitted. */
  costOverTime(opts: Omit<LedgerFilter, 'batchId'> & { bucketMs: number }): CostBucket[] {
    return sumByBucket(this.#runHere(timeSeriesPlan(checkSeries(opts))))
  }

  /** costOverTime, on the read worker when no maintained rollup has buckets that fit. */
  async costOverTimeOffThread(
    opts: Omit<LedgerFilter, 'batchId'> & { bucketMs: number },
  ): Promise<CostBucket[]> {
    return sumByBucket(await this.#run(timeSeriesPlan(checkSeries(opts))))
  }

  /** Stops the read worker, if one was started. */
  close(): Promise<void> {
    return this.#reader?.close() ?? Promise.resolve()
  }

  /**
   * What the latest execution of a fingerprint cost (sum of its 'executed' rows): the amount a reuse
   * of its result saved. Null when it never executed or any of its calls was unpriced.
   */
  originalCostMicros(fp: string): number | null {
    const r = this.#original.get({ fp: fpKey(fp) })
    if (!r || r.n === 0 || r.unpriced > 0) return null
    return r.cost
  }

  /**
   * Rows matching the filter, oldest first, as a snapshot of the ledger when iteration starts.
   *
   * Read in pages by id rather than through one `stmt.iterate()`: an open iterator keeps the
   * connection busy, and better-sqlite3 then refuses every other statement on it, so an export
   * paused by a slow reader would make the runner's `record()` throw. Between pages the connection
   * is free; rows are immutable and ids only grow, so paging below the starting max id is an exact
   * snapshot.
   */
  *events(filter: LedgerFilter = {}): Generator<LedgerRow> {
    const { where, params: base } = whereOf(checkFilter(filter))
    const page = this.#statement(eventsPageSql(where))
    const maxId = this.#maxId.get()?.maxId ?? 0
    let after = 0
    for (;;) {
      const rows = page.all({ ...base, after, maxId }) as LedgerRow[]
      yield* rows
      const last = rows[rows.length - 1]
      if (rows.length < PAGE_ROWS || !last) return
      after = last.id
    }
  }

  /**
   * Streams the ledger as CSV ('events': one line per row; 'summary': one line per task type) to
   * `out`, which is ended when done. Money is in USD with 6 decimals; unpriced cost cells are empty.
   */
  exportCsv(
    kind: 'events' | 'summary',
    out: NodeJS.WritableStream,
    filter: LedgerFilter = {},
  ): Promise<{ rows: number }> {
    if (kind === 'events') return this.#eventsCsv(filter, out)
    if (kind === 'summary') {
      return this.rollup(filter).then(({ byType }) => csvStream(byType, SUMMARY_COLUMNS, out))
    }
    return Promise.reject(
      new TypeError(`CSV export kind must be 'events' or 'summary', got ${JSON.stringify(kind)}`),
    )
  }

  /** The events export (ledger-csv.ts), paged by id below the starting max id as events() is. */
  async #eventsCsv(filter: LedgerFilter, out: NodeJS.WritableStream): Promise<{ rows: number }> {
    const { where, params } = whereOf(checkFilter(filter))
    const records = this.#statement(eventsCsvPageSql(where)).pluck()
    const rows = this.#statement(eventsPageSql(where, CSV_PAGE_ROWS))
    const done = await streamEventsCsv(
      { records, rows },
      params,
      this.#maxId.get()?.maxId ?? 0,
      out,
    )
    // A damaged page can hide rows from a scan as well as fail it: an export that ran to its end
    // is whole only if SQLite finds the ledger's table and its indexes sound.
    const problems = integrityProblems(this.#db, 'quick_check', 3, 'ledger_rows')
    if (problems.length > 0) {
      throw new ExportIncomplete(
        done.rows,
        `the ledger's table is damaged (${problems.join('; ')}), so rows may be missing`,
        'SQLITE_CORRUPT',
      )
    }
    return done
  }

  #statement(sql: string): Database.Statement {
    let stmt = this.#statements.get(sql)
    if (!stmt) {
      stmt = this.#db.prepare(sql)
      this.#statements.set(sql, stmt)
    }
    return stmt
  }

  /**
   * Runs a plan on this connection, in one read transaction (one snapshot for all its parts),
   * with what the rows not folded into the rollups yet add to them.
   */
  #runHere(plan: ReadPlan): unknown[][] {
    const rollups = plan.queries.some((q) => q.rollup)
    if (rollups) this.#rollups.relieve()
    return this.#db.transaction((p: ReadPlan) => {
      const results = p.queries.map((q) => this.#statement(q.sql).all(q.params))
      const pending = rollups ? this.#rollups.pending() : null
      if (pending) results.push(pendingRows(p, pending))
      return results
    })(plan)
  }

  /** A heavy plan on the read worker (when there is one), any other here. */
  #run(plan: ReadPlan): Promise<unknown[][]> | unknown[][] {
    return plan.heavy && this.#reader ? this.#reader.run(plan.queries) : this.#runHere(plan)
  }
}
