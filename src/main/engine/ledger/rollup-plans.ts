// How each rollup read is answered: a list of statements whose rows add up per task type (or per
// time bucket). A filter the maintained rollups cover reads them, plus the raw rows of at most two
// partial 15 s buckets at the window's edges; a filter they do not (a batch within a time window,
// a chart bucket that is not a multiple of 15 s) reads the ledger itself, and is marked heavy so
// that a caller with a read worker can run it off its thread. Then the sums as the contract's
// rollups, and the checks of a read's filter.
import type { CostPoint, LedgerFilter } from '../../../shared/contract'
import type { ReadQuery } from '../db/read-worker'
import type { LedgerTotals, TypeRollup } from './ledger'
import { COARSE_MS, FINE_MS, SUM_COLUMNS, bucketOf, type RollupDeltas } from './rollups'
import {
  costBucketsSql,
  executionsSql,
  NO_EXECUTIONS,
  rowTotalsSql,
  toTotals,
  type RawExecutions,
  type RawRows,
} from './queries'

/** A statement over a rollup table, and which of its rows it reads. */
type RollupRead =
  | { table: 'time'; span: number; lo: number; hi: number; bucketMs?: number }
  | { table: 'batch'; batchId: string }

export interface ReadPlan {
  queries: (ReadQuery & { rollup?: RollupRead })[]
  /** Reads ledger rows in proportion to the filter, not a bounded number of rollup rows. */
  heavy: boolean
}

type Range = readonly [lo: number, hi: number]

const LO = Number.MIN_SAFE_INTEGER
const HI = Number.MAX_SAFE_INTEGER

const camel = (c: string) => c.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase())
const SUMS = SUM_COLUMNS.filter((c) => c !== 'row_count')
  .map((c) => `SUM(${c}) AS ${camel(c)}`)
  .join(', ')

const TIME_ROLLUP_SQL = `
  SELECT task_type AS taskType, ${SUMS} FROM ledger_rollup
  WHERE span = @span AND bucket >= @lo AND bucket < @hi GROUP BY task_type`
const BATCH_ROLLUP_SQL = `
  SELECT task_type AS taskType, ${SUMS} FROM ledger_batch_rollup
  WHERE batch_id = @batchId GROUP BY task_type`
const TIME_SERIES_SQL = `
  SELECT b - ((b % CAST(@bucketMs AS INTEGER)) + CAST(@bucketMs AS INTEGER))
      % CAST(@bucketMs AS INTEGER) AS bucket,
    SUM(cost_micros) AS costMicros, SUM(row_count - reused - replayed) AS calls,
    SUM(input_tokens + output_tokens) AS tokens
  FROM (SELECT bucket AS b, * FROM ledger_rollup
        WHERE span = @span AND bucket >= @lo AND bucket < @hi)
  GROUP BY 1`

/** The rollup per task type of the rows a filter selects. */
export function rollupPlan(filter: LedgerFilter): ReadPlan {
  const { since, until, batchId } = filter
  if (since === undefined && until === undefined) {
    if (batchId !== undefined) {
      const rollup = { table: 'batch', batchId } as const
      return { queries: [{ sql: BATCH_ROLLUP_SQL, params: { batchId }, rollup }], heavy: false }
    }
    return { queries: [timeRollup(COARSE_MS, [LO, HI])], heavy: false }
  }
  if (batchId !== undefined) return { queries: rawRollup(filter), heavy: true }
  const p = pieces(since, until, true)
  const queries = [
    ...(p.coarse ? [timeRollup(COARSE_MS, p.coarse)] : []),
    ...p.fine.map((r) => timeRollup(FINE_MS, r)),
    ...p.raw.flatMap(([lo, hi]) => rawRollup({ since: lo, until: hi })),
  ]
  return { queries, heavy: false }
}

/** Cost, calls and tokens per `bucketMs` bucket of a time window. */
export function timeSeriesPlan(opts: {
  since?: number
  until?: number
  bucketMs: number
}): ReadPlan {
  const { since, until, bucketMs } = opts
  const window: LedgerFilter = {}
  if (since !== undefined) window.since = since
  if (until !== undefined) window.until = until
  if (bucketMs % FINE_MS !== 0) {
    return { queries: [rawSeries(window, bucketMs)], heavy: true }
  }
  const p = pieces(since, until, bucketMs % COARSE_MS === 0)
  const series = (span: number, [lo, hi]: Range): ReadPlan['queries'][number] => ({
    sql: TIME_SERIES_SQL,
    params: { span, lo, hi, bucketMs },
    rollup: { table: 'time', span, lo, hi, bucketMs },
  })
  const queries = [
    ...(p.coarse ? [series(COARSE_MS, p.coarse)] : []),
    ...p.fine.map((r) => series(FINE_MS, r)),
    ...p.raw.map(([lo, hi]) => rawSeries({ since: lo, until: hi }, bucketMs)),
  ]
  return { queries, heavy: false }
}

function timeRollup(span: number, [lo, hi]: Range): ReadPlan['queries'][number] {
  return { sql: TIME_ROLLUP_SQL, params: { span, lo, hi }, rollup: { table: 'time', span, lo, hi } }
}

const FIELDS = SUM_COLUMNS.map(camel)

/**
 * The rows a plan's rollup statements would have read had the rows not folded in yet been folded:
 * the same shapes, so that sumByType and sumByBucket add them in like any other.
 */
export function pendingRows(plan: ReadPlan, deltas: RollupDeltas): unknown[] {
  const out: unknown[] = []
  for (const { rollup: r } of plan.queries) {
    if (!r) continue
    for (const { key, sums } of deltas.entries()) {
      if (r.table === 'batch') {
        if (key.table === 'batch' && key.batchId === r.batchId) out.push(named(key.taskType, sums))
        continue
      }
      if (key.table !== 'time' || key.span !== r.span || key.bucket < r.lo || key.bucket >= r.hi) {
        continue
      }
      if (r.bucketMs === undefined) {
        out.push(named(key.taskType, sums))
        continue
      }
      const s = named(key.taskType, sums) as Record<string, number>
      out.push({
        bucket: bucketOf(key.bucket, r.bucketMs),
        costMicros: s.costMicros,
        calls: s.rowCount! - s.reused! - s.replayed!,
        tokens: s.inputTokens! + s.outputTokens!,
      })
    }
  }
  return out
}

function named(taskType: string, sums: readonly number[]): Record<string, number | string> {
  const row: Record<string, number | string> = { taskType }
  for (let i = 0; i < FIELDS.length; i++) row[FIELDS[i]!] = sums[i]!
  return row
}

/** The rollup computed from the ledger's rows (row sums, then executions). */
function rawRollup(filter: LedgerFilter): ReadQuery[] {
  const { where, params } = whereOf(filter)
  const timed = filter.since !== undefined || filter.until !== undefined
  const lastIn = timed
    ? `(${[
        ...(filter.since !== undefined ? ['lastTs >= @since'] : []),
        ...(filter.until !== undefined ? ['lastTs < @until'] : []),
      ].join(' AND ')})`
    : '1'
  return [
    { sql: rowTotalsSql(where, true), params },
    { sql: executionsSql(where, lastIn, filter.batchId !== undefined), params },
  ]
}

function rawSeries(window: LedgerFilter, bucketMs: number): ReadQuery {
  const { where, params } = whereOf(window)
  return { sql: costBucketsSql(where), params: { ...params, bucketMs } }
}

/** The WHERE clause of a filter over ledger rows, and only the parameters it uses. */
export function whereOf(filter: LedgerFilter): { where: string; params: ReadQuery['params'] } {
  const clauses: string[] = []
  const params: ReadQuery['params'] = {}
  if (filter.since !== undefined) {
    clauses.push('ts >= @since')
    params.since = filter.since
  }
  if (filter.until !== undefined) {
    clauses.push('ts < @until')
    params.until = filter.until
  }
  if (filter.batchId !== undefined) {
    clauses.push('batch_id = @batchId')
    params.batchId = filter.batchId
  }
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params }
}

/**
 * Splits [since, until) into whole hourly buckets, whole 15 s buckets on either side of them, and
 * the partial 15 s buckets at the edges (read from the ledger: at most 15 s of rows each).
 */
function pieces(
  since: number | undefined,
  until: number | undefined,
  useCoarse: boolean,
): { coarse: Range | null; fine: Range[]; raw: Range[] } {
  const s = since ?? LO
  const u = until ?? HI
  const none = { coarse: null, fine: [], raw: [] }
  if (s >= u) return none
  const up = (x: number, m: number) => (x === LO || bucketOf(x, m) === x ? x : bucketOf(x, m) + m)
  const down = (x: number, m: number) => (x === HI ? x : bucketOf(x, m))
  const sF = up(s, FINE_MS)
  const uF = down(u, FINE_MS)
  if (sF >= uF) return { ...none, raw: [[s, u]] }
  const raw: Range[] = []
  if (s < sF) raw.push([s, sF])
  if (uF < u) raw.push([uF, u])
  const sC = useCoarse ? up(sF, COARSE_MS) : HI
  const uC = useCoarse ? down(uF, COARSE_MS) : LO
  if (sC >= uC) return { coarse: null, fine: [[sF, uF]], raw }
  const fine: Range[] = []
  if (sF < sC) fine.push([sF, sC])
  if (uC < uF) fine.push([uC, uF])
  return { coarse: [sC, uC], fine, raw }
}

/** Sums of one task type, as both kinds of statement of a rollup plan return them. */
export type RawSums = RawRows & RawExecutions & { taskType: string }

const ZERO: Omit<RawSums, 'taskType'> = {
  ...NO_EXECUTIONS,
  reused: 0,
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  costMicros: 0,
  pricedCalls: 0,
  unpricedCalls: 0,
  savedMicros: 0,
  unpricedReuses: 0,
  throttled: 0,
  errors: 0,
  abandoned: 0,
  estimatedCalls: 0,
  cacheSavedMicros: 0,
  cacheWriteExtraMicros: 0,
  replayed: 0,
  batchCalls: 0,
  batchCostMicros: 0,
  batchSavedMicros: 0,
}

/** Adds up a rollup plan's rows per task type. */
export function sumByType(results: readonly unknown[][]): RawSums[] {
  const byType = new Map<string, RawSums>()
  for (const rows of results) {
    for (const row of rows as Partial<RawSums>[]) {
      const taskType = row.taskType ?? ''
      let into = byType.get(taskType)
      if (!into) {
        into = { ...ZERO, taskType }
        byType.set(taskType, into)
      }
      for (const key of Object.keys(ZERO) as (keyof typeof ZERO)[]) into[key] += row[key] ?? 0
    }
  }
  return [...byType.values()]
}

/** The sums of every task type together. */
export function sumAll(sums: readonly RawSums[]): RawSums {
  const all: RawSums = { ...ZERO, taskType: '' }
  for (const s of sums) {
    for (const key of Object.keys(ZERO) as (keyof typeof ZERO)[]) all[key] += s[key]
  }
  return all
}

/** Adds up a time-series plan's rows per bucket, oldest first. */
export function sumByBucket(results: readonly unknown[][]): CostPoint[] {
  const byTs = new Map<number, CostPoint>()
  for (const rows of results) {
    for (const r of rows as {
      bucket: number
      costMicros: number
      calls: number
      tokens: number
    }[]) {
      const p = byTs.get(r.bucket)
      if (p) {
        p.costMicros += r.costMicros
        p.calls += r.calls
        p.tokens += r.tokens
      } else {
        byTs.set(r.bucket, {
          ts: r.bucket,
          costMicros: r.costMicros,
          calls: r.calls,
          tokens: r.tokens,
        })
      }
    }
  }
  return [...byTs.values()].sort((a, b) => a.ts - b.ts)
}

/** Rollups per task type from their sums, most expensive first (the team ledger's too). */
export function byCost(sums: readonly RawSums[]): TypeRollup[] {
  return sums
    .map((r) => ({ taskType: r.taskType, ...toTotals(r, r) }))
    .sort(
      (a, b) =>
        (b.costMicros ?? -1) - (a.costMicros ?? -1) ||
        (a.taskType < b.taskType ? -1 : a.taskType > b.taskType ? 1 : 0),
    )
}

/** The totals of sums per task type. */
export function totalOf(sums: readonly RawSums[]): LedgerTotals {
  const all = sumAll(sums)
  return toTotals(all, all)
}

/** Checks a time series request: a positive bucket in ms, and the filter's bounds. */
export function checkSeries<T extends { since?: number; until?: number; bucketMs: number }>(
  opts: T,
): T {
  const { bucketMs } = opts
  if (!Number.isSafeInteger(bucketMs) || bucketMs <= 0) {
    throw new TypeError(`bucketMs must be a positive integer of milliseconds, got ${bucketMs}`)
  }
  checkFilter({ since: opts.since, until: opts.until })
  return opts
}

/** Checks a ledger read filter: epoch-ms bounds and a string batch id. */
export function checkFilter(filter: LedgerFilter): LedgerFilter {
  for (const key of ['since', 'until'] as const) {
    const v = filter[key]
    if (v !== undefined && !Number.isSafeInteger(v)) {
      throw new TypeError(`ledger filter ${key} must be epoch ms, got ${String(v)}`)
    }
  }
  if (filter.batchId !== undefined && typeof filter.batchId !== 'string') {
    throw new TypeError(`ledger filter batchId must be a string, got ${String(filter.batchId)}`)
  }
  return filter
}
