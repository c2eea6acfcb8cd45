import type Database from 'better-sqlite3'
import type { CostPoint, LedgerFilter, TypeRollupView } from '../../shared/contract'
import { csvStream } from './csv'
import { EVENT_COLUMNS, SUMMARY_COLUMNS } from './ledger-csv'
import {
  costBucketsSql,
  eventsPageSql,
  executionsSql,
  NO_EXECUTIONS,
  PAGE_ROWS,
  rowTotalsSql,
  toTotals,
  type RawExecutions,
  type RawRows,
} from './ledger-queries'
import { fpKey } from './db/codes'
import { directWrites, type WriteScope } from './db/step-writes'
import {
  checkRecordInput,
  ORIGINAL_COST_SQL,
  prepareRowInsert,
  type LedgerRowParams,
  type RowInsert,
} from './ledger-record'
import type { Prices } from './prices'
import { systemClock, type Clock, type LedgerEventInput, type LedgerOutcome } from './types'

export type { LedgerFilter }

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
  outcome: LedgerOutcome
  latencyMs: number | null
  status: number | null
  epoch: number | null
  priceVersion: string | null
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
}

/** A ledger event as `record` takes it; `ts` defaults to the clock. */
export type LedgerRecordInput = Omit<LedgerEventInput, 'ts'> & { ts?: number }

/**
 * The append-only cost ledger: one immutable row per provider call attempt and per reuse, priced
 * when recorded with the price table of that moment (its version is on the row), and the rollups,
 * time series and CSV exports built from those rows. Their SQL and checks live beside it:
 * ledger-record.ts (the write side), ledger-queries.ts (rollups, pages), ledger-csv.ts (columns).
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
  // Query statements depend on which filters are present (so indexes can be used): one per shape.
  readonly #queries = new Map<string, Database.Statement>()
  /** What this process recorded per batch: a live cost for `pacer run`'s progress line. */
  readonly #recorded = new Map<string, { micros: number; priced: number; unpriced: number }>()

  constructor({ db, prices, clock = systemClock, writes = directWrites }: LedgerOptions) {
    this.#db = db
    this.#prices = prices
    this.#clock = clock
    this.#writes = writes
    this.#insert = prepareRowInsert(db)
    writes.onRollback?.(() => this.#insert.forget())
    this.#original = db.prepare(ORIGINAL_COST_SQL)
    // The table, not the `ledger` view: MAX over the view's joins would read every row.
    this.#maxId = db.prepare('SELECT COALESCE(MAX(id), 0) AS maxId FROM ledger_rows')
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
    const price = this.#prices.priceFor(e.provider, e.model)
    // costMicros also validates the usage (integers, cached ⊆ input) before anything is written.
    let costMicros = this.#prices.costMicros(usage, price)
    // No tokens billed is a known cost of zero even for an unknown model: unpriced means "tokens we
    // cannot put a price on", so a 429 or a reuse never counts as unpriced.
    if (costMicros === null && tokens === 0) costMicros = 0
    const savedMicros =
      e.outcome === 'reused'
        ? e.savedMicros === undefined
          ? this.originalCostMicros(e.fp)
          : e.savedMicros
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
      priceVersion: this.#prices.version,
    }
    const id = this.#writes.run(() => this.#insert.row(row))
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

  /** Spend per task type, most expensive first (unpriced-only types last). */
  rollupByType(filter: LedgerFilter = {}): TypeRollup[] {
    const rowsQ = this.#query('rows-by-type', filter, (w) => rowTotalsSql(w, true))
    const execQ = this.#query('executions-by-type', filter, (w) => executionsSql(w, true))
    const p = params(filter)
    // One read transaction: both queries see the same snapshot while other processes append.
    const [rows, executions] = this.#db.transaction(
      () => [rowsQ.all(p) as RawRows[], execQ.all(p) as RawExecutions[]] as const,
    )()
    const byType = new Map(executions.map((e) => [e.taskType ?? '', e]))
    return rows
      .map((r) => {
        const taskType = r.taskType ?? ''
        return { taskType, ...toTotals(r, byType.get(taskType) ?? NO_EXECUTIONS) }
      })
      .sort(
        (a, b) =>
          (b.costMicros ?? -1) - (a.costMicros ?? -1) ||
          (a.taskType < b.taskType ? -1 : a.taskType > b.taskType ? 1 : 0),
      )
  }

  /** Spend of all rows matching the filter. */
  totals(filter: LedgerFilter = {}): LedgerTotals {
    const rowsQ = this.#query('rows', filter, (w) => rowTotalsSql(w, false))
    const execQ = this.#query('executions', filter, (w) => executionsSql(w, false))
    const p = params(filter)
    const [rows, executions] = this.#db.transaction(
      () => [rowsQ.get(p) as RawRows, execQ.get(p) as RawExecutions] as const,
    )()
    return toTotals(rows, executions)
  }

  /** Cost, calls and tokens per time bucket (epoch-aligned), oldest first; empty buckets omitted. */
  costOverTime(opts: Omit<LedgerFilter, 'batchId'> & { bucketMs: number }): CostBucket[] {
    const { bucketMs } = opts
    if (!Number.isSafeInteger(bucketMs) || bucketMs <= 0) {
      throw new TypeError(`bucketMs must be a positive integer of milliseconds, got ${bucketMs}`)
    }
    const filter: LedgerFilter = { since: opts.since, until: opts.until }
    const rows = this.#query('buckets', filter, costBucketsSql).all({
      ...params(filter),
      bucketMs,
    }) as (Omit<CostBucket, 'ts'> & { bucket: number })[]
    return rows.map(({ bucket, ...rest }) => ({ ts: bucket, ...rest }))
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
    const page = this.#query('events', filter, eventsPageSql)
    const maxId = this.#maxId.get()?.maxId ?? 0
    const base = params(filter)
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
    if (kind === 'events') return csvStream(this.events(filter), EVENT_COLUMNS, out)
    if (kind === 'summary') return csvStream(this.rollupByType(filter), SUMMARY_COLUMNS, out)
    return Promise.reject(
      new TypeError(`CSV export kind must be 'events' or 'summary', got ${JSON.stringify(kind)}`),
    )
  }

  #query(name: string, filter: LedgerFilter, sql: (where: string) => string): Database.Statement {
    checkFilter(filter)
    const clauses: string[] = []
    if (filter.since !== undefined) clauses.push('ts >= @since')
    if (filter.until !== undefined) clauses.push('ts < @until')
    if (filter.batchId !== undefined) clauses.push('batch_id = @batchId')
    const key = `${name}|${clauses.join(',')}`
    let stmt = this.#queries.get(key)
    if (!stmt) {
      stmt = this.#db.prepare(sql(clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''))
      this.#queries.set(key, stmt)
    }
    return stmt
  }
}

function checkFilter(filter: LedgerFilter): void {
  for (const key of ['since', 'until'] as const) {
    const v = filter[key]
    if (v !== undefined && !Number.isSafeInteger(v)) {
      throw new TypeError(`ledger filter ${key} must be epoch ms, got ${String(v)}`)
    }
  }
  if (filter.batchId !== undefined && typeof filter.batchId !== 'string') {
    throw new TypeError(`ledger filter batchId must be a string, got ${String(filter.batchId)}`)
  }
}

function params(filter: LedgerFilter): LedgerFilter {
  // Named parameters absent from a statement are an error in better-sqlite3: pass only those used.
  const p: LedgerFilter = {}
  if (filter.since !== undefined) p.since = filter.since
  if (filter.until !== undefined) p.until = filter.until
  if (filter.batchId !== undefined) p.batchId = filter.batchId
  return p
}
