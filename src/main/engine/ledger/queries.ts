// The ledger's read side: the SQL of its rollups, time series and event pages, and how raw sums
// become the totals the contract shows.
import type { LedgerTotals } from './ledger'
import { LOST_WASTED, RUN_ROW, VIA_BATCH } from './rollups'

/** Row-level sums: one pass, no grouping by execution. */
export function rowTotalsSql(where: string, byType: boolean): string {
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
      COALESCE(SUM(CASE WHEN outcome IN ('reused', 'replayed') THEN saved_micros END), 0)
        AS savedMicros,
      COALESCE(SUM(outcome = 'reused' AND saved_micros IS NULL), 0) AS unpricedReuses,
      COALESCE(SUM(outcome = 'throttled'), 0) AS throttled,
      COALESCE(SUM(outcome IN ('error', 'timeout')), 0) AS errors,
      COALESCE(SUM(outcome = 'abandoned'), 0) AS abandoned,
      COALESCE(SUM(estimated), 0) AS estimatedCalls,
      COALESCE(SUM(cache_saved_micros), 0) AS cacheSavedMicros,
      COALESCE(SUM(cache_write_extra_micros), 0) AS cacheWriteExtraMicros,
      COALESCE(SUM(outcome = 'replayed'), 0) AS replayed,
      COALESCE(SUM(${VIA_BATCH} AND input_tokens + output_tokens > 0), 0) AS batchCalls,
      COALESCE(SUM(CASE WHEN ${VIA_BATCH} THEN cost_micros END), 0) AS batchCostMicros,
      COALESCE(SUM(batch_saved_micros), 0) AS batchSavedMicros
    FROM ledger ${where} ${byType ? 'GROUP BY task_type' : ''}`
}

/**
 * Execution-level sums of the rows a filter selects. One execution = one task at one fencing epoch
 * (fp, task id, epoch, task type; `IS` makes rows recorded without a task id or epoch group too).
 * An execution with any 'duplicate' row counts as a duplicate and not also as executed: a stale
 * owner whose first steps were 'executed' before it learned it had lost its claim ran once, and
 * every call of it was wasted. A task's other executions (resumed after a Ctrl-C or a kill, at a
 * later epoch) count once together as executed, at the latest of their rows: a task of a file is
 * one run however many times its batch was resumed.
 *
 * Over a time window an execution counts in the window of its latest row, with its status as it
 * stands (it is the same execution before and after the window), and a duplicate's rows are wasted
 * in the windows they fall in. So windows add up: the last hour plus the hour before is the last two
 * hours, and a maintained rollup per time bucket gives the same numbers (ledger-rollups.ts). With a
 * batch, the execution is its rows in that batch.
 *
 * `lastIn` is the window's condition on `lastTs` (`1` without one); `batch` adds @batchId.
 */
export function executionsSql(where: string, lastIn: string, batch: boolean): string {
  // An answer lost is waste, not an execution (ledger-rollups.ts RUN_ROW).
  const kinds = RUN_ROW
  const sameRun = (a: string, b: string) =>
    `${a}.fp_id = ${b}.fp_id AND ${a}.task_id IS ${b}.task_id AND ${a}.epoch IS ${b}.epoch
       AND ${a}.task_type = ${b}.task_type`
  return `
    -- k: the tasks with a row in the filter (every epoch of each; without a task id, the epoch).
    WITH k AS (
      SELECT DISTINCT fp_id, task_id, CASE WHEN task_id IS NULL THEN epoch END AS e, task_type
      FROM ledger ${where ? `${where} AND ${kinds}` : `WHERE ${kinds}`}
    ),
    runs AS (
      SELECT k.fp_id, k.task_id, l.epoch, k.task_type,
        MAX(l.ts) AS lastTs, MAX(l.outcome = 'duplicate') AS isDup
      FROM k JOIN ledger l ON l.fp_id = k.fp_id AND l.task_id IS k.task_id
        AND (k.task_id IS NOT NULL OR l.epoch IS k.e) AND l.task_type = k.task_type AND l.${kinds}
        ${batch ? 'AND l.batch_id = @batchId' : ''}
      GROUP BY k.fp_id, k.task_id, l.epoch, k.task_type
    ),
    tasks AS (
      SELECT task_type, MAX(lastTs) AS lastTs FROM runs WHERE NOT isDup
      GROUP BY fp_id, task_id, CASE WHEN task_id IS NULL THEN epoch END, task_type
    ),
    counted AS (
      SELECT task_type, SUM(executed) AS executed, SUM(duplicates) AS duplicates FROM (
        SELECT task_type, (${lastIn}) AS executed, 0 AS duplicates FROM tasks
        UNION ALL
        SELECT task_type, 0, (${lastIn}) FROM runs WHERE isDup
      ) GROUP BY task_type
    ),
    spent AS (
      SELECT r.task_type, SUM(r.input_tokens) AS inputTokens,
        SUM(CASE WHEN runs.isDup THEN r.cost_micros END) AS wastedMicros
      FROM ledger r JOIN runs ON ${sameRun('r', 'runs')}
      ${where ? `${where} AND r.${kinds}` : `WHERE r.${kinds}`}
      GROUP BY r.task_type
    ),
    lost AS (
      SELECT task_type, ${LOST_WASTED} AS micros FROM ledger
      ${where ? `${where} AND reason IS NOT NULL` : 'WHERE reason IS NOT NULL'} GROUP BY task_type
    )
    SELECT c.task_type AS taskType, c.executed, c.duplicates,
      COALESCE(s.inputTokens, 0) AS executionInputTokens,
      COALESCE(s.wastedMicros, 0) + COALESCE(lost.micros, 0) AS wastedMicros
    FROM counted c LEFT JOIN spent s ON s.task_type = c.task_type
      LEFT JOIN lost ON lost.task_type = c.task_type`
}

const ROW_COLUMNS = `id, ts, task_id AS taskId, batch_id AS batchId, fp, worker,
  task_type AS taskType, provider, model, step, input_tokens AS inputTokens,
  cached_input_tokens AS cachedInputTokens, cache_write_tokens AS cacheWriteTokens,
  output_tokens AS outputTokens, cost_micros AS costMicros, saved_micros AS savedMicros, outcome,
  latency_ms AS latencyMs, status, epoch, price_version AS priceVersion, estimated,
  cache_saved_micros AS cacheSavedMicros, cache_write_extra_micros AS cacheWriteExtraMicros, reason,
  batch_saved_micros AS batchSavedMicros`

// Big enough to amortize the query, small enough (~0.5 MB) to keep an export's memory flat.
export const PAGE_ROWS = 2000

export interface RawRows {
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
  estimatedCalls: number
  cacheSavedMicros: number
  cacheWriteExtraMicros: number
  replayed: number
  batchCalls: number
  batchCostMicros: number
  batchSavedMicros: number
}

export interface RawExecutions {
  taskType?: string
  executed: number
  duplicates: number
  executionInputTokens: number
  wastedMicros: number
}

export const NO_EXECUTIONS: RawExecutions = {
  executed: 0,
  duplicates: 0,
  executionInputTokens: 0,
  wastedMicros: 0,
}

export function toTotals(r: RawRows, e: RawExecutions): LedgerTotals {
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
    estimatedCalls: r.estimatedCalls,
    cacheSavedMicros: r.cacheSavedMicros,
    cacheWriteExtraMicros: r.cacheWriteExtraMicros,
    replayed: r.replayed,
    batchCalls: r.batchCalls,
    batchCostMicros: r.batchCostMicros,
    batchSavedMicros: r.batchSavedMicros,
  }
}

/** One page of rows, by id below the snapshot's max id (see Ledger.events). */
export function eventsPageSql(where: string, rows = PAGE_ROWS): string {
  return `SELECT ${ROW_COLUMNS} FROM ledger ${where ? `${where} AND` : 'WHERE'}
          id > @after AND id <= @maxId ORDER BY id LIMIT ${rows}`
}

/** Cost, calls and tokens per epoch-aligned bucket of @bucketMs. */
export function costBucketsSql(where: string): string {
  // better-sqlite3 binds JS numbers as REAL: cast, or ts % bucket is not integer arithmetic.
  // Floored (not truncated) so buckets below 0 are as wide as the others, as in ledger-rollups.ts.
  return `
        SELECT ts - ((ts % CAST(@bucketMs AS INTEGER)) + CAST(@bucketMs AS INTEGER))
            % CAST(@bucketMs AS INTEGER) AS bucket,
          COALESCE(SUM(cost_micros), 0) AS costMicros,
          COALESCE(SUM(outcome NOT IN ('reused', 'replayed')), 0) AS calls,
          COALESCE(SUM(input_tokens + output_tokens), 0) AS tokens
        FROM ledger ${where}
        GROUP BY 1 ORDER BY 1`
}
