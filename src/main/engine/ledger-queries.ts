// The ledger's read side: the SQL of its rollups, time series and event pages, and how raw sums
// become the totals the contract shows.
import type { LedgerTotals } from './ledger'

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
export function executionsSql(where: string, byType: boolean): string {
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

export const ROW_COLUMNS = `id, ts, task_id AS taskId, batch_id AS batchId, fp, worker,
  task_type AS taskType, provider, model, step, input_tokens AS inputTokens,
  cached_input_tokens AS cachedInputTokens, cache_write_tokens AS cacheWriteTokens,
  output_tokens AS outputTokens, cost_micros AS costMicros, saved_micros AS savedMicros, outcome,
  latency_ms AS latencyMs, status, epoch, price_version AS priceVersion`

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
  }
}

/** One page of rows, by id below the snapshot's max id (see Ledger.events). */
export function eventsPageSql(where: string): string {
  return `SELECT ${ROW_COLUMNS} FROM ledger ${where ? `${where} AND` : 'WHERE'}
          id > @after AND id <= @maxId ORDER BY id LIMIT ${PAGE_ROWS}`
}

/** Cost, calls and tokens per epoch-aligned bucket of @bucketMs. */
export function costBucketsSql(where: string): string {
  // better-sqlite3 binds JS numbers as REAL: cast, or ts / bucket is not integer division.
  return `
        SELECT (ts / CAST(@bucketMs AS INTEGER)) * CAST(@bucketMs AS INTEGER) AS bucket,
          COALESCE(SUM(cost_micros), 0) AS costMicros,
          COALESCE(SUM(outcome <> 'reused'), 0) AS calls,
          COALESCE(SUM(input_tokens + output_tokens), 0) AS tokens
        FROM ledger ${where}
        GROUP BY 1 ORDER BY 1`
}
