import type Database from 'better-sqlite3'
import type { CostPoint, LedgerFilter, TypeRollupView } from '../../shared/contract'
import { csvStream, type CsvColumn } from './csv'
import { microsToUsdString, type Prices } from './prices'
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
}

/** A ledger event as `record` takes it; `ts` defaults to the clock. */
export type LedgerRecordInput = Omit<LedgerEventInput, 'ts'> & { ts?: number }

const OUTCOMES: ReadonlySet<string> = new Set<LedgerOutcome>([
  'executed',
  'reused',
  'duplicate',
  'throttled',
  'error',
  'abandoned',
])

/** Row-level sums: one pass, no grouping by execution. */
function rowTotalsSql(where: string, byType: boolean): string {
  return `
    SELECT ${byType ? 'task_type AS taskType,' : ''}
      COALESCE(SUM(outcome = 'reused'), 0) AS reused,
      COALESCE(SUM(input_tokens), 0) AS inputTokens,
      COALESCE(SUM(cached_input_tokens), 0) AS cachedInputTokens,
      COALESCE(SUM(cache_write_tokens), 0) AS cacheWriteTokens,
      COALESCE(SUM(output_tokens), 0) AS outputTokens,
      COALESCE(SUM(cost_micros), 0) AS costMicros,
      COALESCE(SUM(cost_micros IS NOT NULL AND input_tokens + output_tokens > 0), 0) AS pricedCalls,
      COALESCE(SUM(cost_micros IS NULL AND input_tokens + output_tokens > 0), 0) AS unpricedCalls,
      COALESCE(SUM(CASE WHEN outcome = 'reused' THEN saved_micros END), 0) AS savedMicros,
      COALESCE(SUM(outcome = 'reused' AND saved_micros IS NULL), 0) AS unpricedReuses,
      COALESCE(SUM(outcome = 'throttled'), 0) AS throttled,
      COALESCE(SUM(outcome = 'error'), 0) AS errors,
      COALESCE(SUM(outcome = 'abandoned'), 0) AS abandoned
    FROM ledger ${where} ${byType ? 'GROUP BY task_type' : ''}`
}

/**
 * Execution-level sums. One execution = one task at one fencing epoch (GROUP BY treats NULL task
 * ids and epochs as equal, so rows recorded without them still group). An execution with any
 * 'duplicate' row counts as a duplicate and not also as executed: a stale owner whose first steps
 * were 'executed' before it learned it had lost its claim ran once, and every call of it was wasted.
 */
function executionsSql(where: string, byType: boolean): string {
  const filter = `outcome IN ('executed', 'duplicate')`
  return `
    WITH executions AS (
      SELECT task_type,
        MAX(outcome = 'duplicate') AS isDuplicate,
        SUM(input_tokens) AS inputTokens,
        SUM(cost_micros) AS costMicros
      FROM ledger ${where ? `${where} AND ${filter}` : `WHERE ${filter}`}
      GROUP BY fp, task_id, epoch, task_type
    )
    SELECT ${byType ? 'task_type AS taskType,' : ''}
      COALESCE(SUM(NOT isDuplicate), 0) AS executed,
      COALESCE(SUM(isDuplicate), 0) AS duplicates,
      COALESCE(SUM(inputTokens), 0) AS executionInputTokens,
      COALESCE(SUM(CASE WHEN isDuplicate THEN costMicros END), 0) AS wastedMicros
    FROM executions ${byType ? 'GROUP BY task_type' : ''}`
}

const ROW_COLUMNS = `id, ts, task_id AS taskId, batch_id AS batchId, fp, worker,
  task_type AS taskType, provider, model, step, input_tokens AS inputTokens,
  cached_input_tokens AS cachedInputTokens, cache_write_tokens AS cacheWriteTokens,
  output_tokens AS outputTokens, cost_micros AS costMicros, saved_micros AS savedMicros, outcome,
  latency_ms AS latencyMs, status, epoch, price_version AS priceVersion`

// Big enough to amortize the query, small enough (~0.5 MB) to keep an export's memory flat.
const PAGE_ROWS = 2000

interface RawRows {
  taskType?: string
  reused: number
  inputTokens: number
  cachedInputTokens: number
  cacheWriteTokens: number
  outputTokens: number
  costMicros: number
  pricedCalls: number
  unpricedCalls: number
  savedMicros: number
  unpricedReuses: number
  throttled: number
  errors: number
  abandoned: number
}

interface RawExecutions {
  taskType?: string
  executed: number
  duplicates: number
  executionInputTokens: number
  wastedMicros: number
}

const NO_EXECUTIONS: RawExecutions = {
  executed: 0,
  duplicates: 0,
  executionInputTokens: 0,
  wastedMicros: 0,
}

/**
 * The append-only cost ledger: one immutable row per provider call attempt and per reuse, priced
 * when recorded with the price table of that moment (its version is on the row), and the rollups,
 * time series and CSV exports built from those rows.
 */
export class Ledger {
  readonly #db: Database.Database
  readonly #prices: Prices
  readonly #clock: Clock
  readonly #insert: Database.Statement
  readonly #original: Database.Statement<
    [{ fp: string }],
    { n: number; cost: number; unpriced: number }
  >
  readonly #maxId: Database.Statement<[], { maxId: number }>
  // Query statements depend on which filters are present (so indexes can be used): one per shape.
  readonly #queries = new Map<string, Database.Statement>()

  constructor({ db, prices, clock = systemClock }: LedgerOptions) {
    this.#db = db
    this.#prices = prices
    this.#clock = clock
    this.#insert = db.prepare(`
      INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
        input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_micros,
        saved_micros, outcome, latency_ms, status, epoch, price_version)
      VALUES (@ts, @taskId, @batchId, @fp, @worker, @taskType, @provider, @model, @step,
        @inputTokens, @cachedInputTokens, @cacheWriteTokens, @outputTokens, @costMicros,
        @savedMicros, @outcome, @latencyMs, @status, @epoch, @priceVersion)`)
    // The result being reused comes from the fingerprint's latest execution (a re-run after the
    // retention window or a takeover is a new execution): sum that one, not every execution ever.
    this.#original = db.prepare(`
      WITH last AS (
        SELECT task_id, epoch FROM ledger WHERE fp = @fp AND outcome = 'executed'
        ORDER BY id DESC LIMIT 1
      )
      SELECT COUNT(*) AS n, COALESCE(SUM(l.cost_micros), 0) AS cost,
        COALESCE(SUM(l.cost_micros IS NULL AND l.input_tokens + l.output_tokens > 0), 0) AS unpriced
      FROM ledger l JOIN last ON l.task_id IS last.task_id AND l.epoch IS last.epoch
      WHERE l.fp = @fp AND l.outcome = 'executed'`)
    this.#maxId = db.prepare('SELECT COALESCE(MAX(id), 0) AS maxId FROM ledger')
  }

  /**
   * Prices a call with the current table and appends one immutable row. A 'reused' row carries no
   * tokens; its savedMicros defaults to originalCostMicros(fp).
   */
  record(e: LedgerRecordInput): { id: number; costMicros: number | null } {
    const ts = e.ts ?? this.#clock.now()
    if (!Number.isSafeInteger(ts)) {
      throw new TypeError(`ledger event ts must be epoch ms, got ${ts}`)
    }
    if (!OUTCOMES.has(e.outcome)) {
      throw new TypeError(
        `ledger event outcome must be one of ${[...OUTCOMES].join(', ')}, got ${JSON.stringify(e.outcome)}`,
      )
    }
    const { usage } = e
    const tokens = usage.inputTokens + usage.outputTokens
    if (e.outcome === 'reused' && tokens > 0) {
      throw new TypeError(
        `a 'reused' ledger event makes no provider call and carries no tokens, got ${tokens}`,
      )
    }
    if (e.outcome !== 'reused' && e.savedMicros != null) {
      throw new TypeError(`savedMicros belongs on 'reused' ledger events, got it on '${e.outcome}'`)
    }
    if (e.savedMicros != null && (!Number.isSafeInteger(e.savedMicros) || e.savedMicros < 0)) {
      throw new TypeError(`savedMicros must be integer micro-dollars ≥ 0, got ${e.savedMicros}`)
    }
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
    const info = this.#insert.run({
      ts,
      taskId: e.taskId,
      batchId: e.batchId,
      fp: e.fp,
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
    })
    return { id: Number(info.lastInsertRowid), costMicros }
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
    // better-sqlite3 binds JS numbers as REAL: cast, or ts / bucket is not integer division.
    const rows = this.#query(
      'buckets',
      filter,
      (where) => `
        SELECT (ts / CAST(@bucketMs AS INTEGER)) * CAST(@bucketMs AS INTEGER) AS bucket,
          COALESCE(SUM(cost_micros), 0) AS costMicros,
          COALESCE(SUM(outcome <> 'reused'), 0) AS calls,
          COALESCE(SUM(input_tokens + output_tokens), 0) AS tokens
        FROM ledger ${where}
        GROUP BY 1 ORDER BY 1`,
    ).all({ ...params(filter), bucketMs }) as (Omit<CostBucket, 'ts'> & { bucket: number })[]
    return rows.map(({ bucket, ...rest }) => ({ ts: bucket, ...rest }))
  }

  /**
   * What the latest execution of a fingerprint cost (sum of its 'executed' rows): the amount a reuse
   * of its result saved. Null when it never executed or any of its calls was unpriced.
   */
  originalCostMicros(fp: string): number | null {
    const r = this.#original.get({ fp })
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
    const page = this.#query(
      'events',
      filter,
      (where) =>
        `SELECT ${ROW_COLUMNS} FROM ledger ${where ? `${where} AND` : 'WHERE'}
          id > @after AND id <= @maxId ORDER BY id LIMIT ${PAGE_ROWS}`,
    )
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

function toTotals(r: RawRows, e: RawExecutions): LedgerTotals {
  const executions = e.executed + e.duplicates
  return {
    runs: e.executed + r.reused + e.duplicates,
    executed: e.executed,
    reused: r.reused,
    duplicates: e.duplicates,
    avgInputTokens: executions === 0 ? 0 : Math.floor(e.executionInputTokens / executions),
    inputTokens: r.inputTokens,
    cachedInputTokens: r.cachedInputTokens,
    cacheWriteTokens: r.cacheWriteTokens,
    outputTokens: r.outputTokens,
    totalTokens: r.inputTokens + r.outputTokens,
    costMicros: r.unpricedCalls > 0 && r.pricedCalls === 0 ? null : r.costMicros,
    unpricedCalls: r.unpricedCalls,
    // Reuses of an unpriced model's result saved an unknown amount: unknown, never $0.
    savedMicros: r.reused > 0 && r.unpricedReuses === r.reused ? null : r.savedMicros,
    wastedMicros: e.wastedMicros,
    throttled: r.throttled,
    errors: r.errors,
    abandoned: r.abandoned,
  }
}

const usd = (micros: number | null): string | null =>
  micros === null ? null : microsToUsdString(micros)

const EVENT_COLUMNS: readonly CsvColumn<LedgerRow>[] = [
  { header: 'id', value: (r) => r.id },
  { header: 'ts', value: (r) => r.ts },
  // Finance reads dates, not epoch ms; UTC so the file means the same everywhere.
  { header: 'time_utc', value: (r) => new Date(r.ts).toISOString() },
  { header: 'task_id', value: (r) => r.taskId },
  { header: 'batch_id', value: (r) => r.batchId },
  { header: 'fp', value: (r) => r.fp },
  { header: 'worker', value: (r) => r.worker },
  { header: 'task_type', value: (r) => r.taskType },
  { header: 'provider', value: (r) => r.provider },
  { header: 'model', value: (r) => r.model },
  { header: 'step', value: (r) => r.step },
  { header: 'outcome', value: (r) => r.outcome },
  { header: 'input_tokens', value: (r) => r.inputTokens },
  { header: 'cached_input_tokens', value: (r) => r.cachedInputTokens },
  { header: 'cache_write_tokens', value: (r) => r.cacheWriteTokens },
  { header: 'output_tokens', value: (r) => r.outputTokens },
  { header: 'cost_usd', value: (r) => usd(r.costMicros), numeric: true },
  { header: 'saved_usd', value: (r) => usd(r.savedMicros), numeric: true },
  { header: 'latency_ms', value: (r) => r.latencyMs },
  { header: 'status', value: (r) => r.status },
  { header: 'epoch', value: (r) => r.epoch },
  { header: 'price_version', value: (r) => r.priceVersion },
]

const SUMMARY_COLUMNS: readonly CsvColumn<TypeRollup>[] = [
  { header: 'task_type', value: (r) => r.taskType },
  { header: 'runs', value: (r) => r.runs },
  { header: 'executed', value: (r) => r.executed },
  { header: 'reused', value: (r) => r.reused },
  { header: 'duplicates', value: (r) => r.duplicates },
  { header: 'avg_input_tokens', value: (r) => r.avgInputTokens },
  { header: 'input_tokens', value: (r) => r.inputTokens },
  { header: 'cached_input_tokens', value: (r) => r.cachedInputTokens },
  { header: 'cache_write_tokens', value: (r) => r.cacheWriteTokens },
  { header: 'output_tokens', value: (r) => r.outputTokens },
  { header: 'total_tokens', value: (r) => r.totalTokens },
  { header: 'cost_usd', value: (r) => usd(r.costMicros), numeric: true },
  { header: 'unpriced_calls', value: (r) => r.unpricedCalls },
  { header: 'saved_usd', value: (r) => usd(r.savedMicros), numeric: true },
  { header: 'wasted_usd', value: (r) => usd(r.wastedMicros), numeric: true },
  { header: 'throttled', value: (r) => r.throttled },
  { header: 'errors', value: (r) => r.errors },
  { header: 'abandoned', value: (r) => r.abandoned },
]
