// The ledger's write side: the row insert, what a recorded event must satisfy, and the cost of the
// execution a reuse saved.
import type { LedgerRecordInput } from './ledger'
import type { LedgerOutcome } from './types'

const OUTCOMES: ReadonlySet<string> = new Set<LedgerOutcome>([
  'executed',
  'reused',
  'duplicate',
  'throttled',
  'error',
  'abandoned',
])

export const INSERT_SQL = `
      INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
        input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_micros,
        saved_micros, outcome, latency_ms, status, epoch, price_version, cache_saved_micros,
        cache_write_extra_micros)
      VALUES (@ts, @taskId, @batchId, @fp, @worker, @taskType, @provider, @model, @step,
        @inputTokens, @cachedInputTokens, @cacheWriteTokens, @outputTokens, @costMicros,
        @savedMicros, @outcome, @latencyMs, @status, @epoch, @priceVersion, @cacheSavedMicros,
        @cacheWriteExtraMicros)`

// The result being reused comes from the fingerprint's latest execution (a re-run after the
// retention window or a takeover is a new execution): sum that one, not every execution ever.
export const ORIGINAL_COST_SQL = `
      WITH last AS (
        SELECT task_id, epoch FROM ledger WHERE fp = @fp AND outcome = 'executed'
        ORDER BY id DESC LIMIT 1
      )
      SELECT COUNT(*) AS n, COALESCE(SUM(l.cost_micros), 0) AS cost,
        COALESCE(SUM(l.cost_micros IS NULL AND l.input_tokens + l.output_tokens > 0), 0) AS unpriced
      FROM ledger l JOIN last ON l.task_id IS last.task_id AND l.epoch IS last.epoch
      WHERE l.fp = @fp AND l.outcome = 'executed'`

/** Refuses an event the ledger must not hold, naming the value; pricing checks the usage. */
export function checkRecordInput(e: LedgerRecordInput, ts: number): void {
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
}
