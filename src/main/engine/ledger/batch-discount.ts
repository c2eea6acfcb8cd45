// What answering through the provider batch APIs saved: the rows priced at the batch rate (their
// price version ends in '+batch': 'via batch') against the same tokens at the list price, per
// provider and model.
import type Database from 'better-sqlite3'
import type { Prices } from '../pricing/prices'

export interface BatchDiscount {
  /** Calls answered through a provider batch. */
  calls: number
  /** What they cost, at the batch rate. */
  costMicros: number
  /** What the same tokens would have cost live, at the list price (null: a model is unpriced). */
  listMicros: number | null
  /** listMicros - costMicros: what the discount saved (null: unpriced). */
  savedMicros: number | null
}

const SQL = `
  SELECT provider, model, COUNT(*) AS calls, SUM(input_tokens) AS input,
    SUM(cached_input_tokens) AS cached, SUM(cache_write_tokens) AS cacheWrite,
    SUM(output_tokens) AS output, SUM(COALESCE(cost_micros, 0)) AS cost
  FROM ledger WHERE price_version LIKE '%+batch' AND outcome IN ('executed', 'duplicate') AND (@batchId IS NULL OR batch_id = @batchId)
  GROUP BY provider, model`

// The ledger has no index by label: a ledger without a single batch-priced label is not scanned.
const ANY_SQL = `SELECT EXISTS (SELECT 1 FROM ledger_labels WHERE price_version LIKE '%+batch') AS any`

/**
 * The batch discount of one batch's calls (or of every call, batchId null). The live price is
 * the current price table's for the row's provider and model (rows keep their batch cost only).
 */
export function batchDiscount(
  db: Database.Database,
  prices: Prices,
  batchId: string | null,
): BatchDiscount {
  if ((db.prepare(ANY_SQL).get() as { any: number }).any === 0) {
    return { calls: 0, costMicros: 0, listMicros: 0, savedMicros: 0 }
  }
  const rows = db.prepare(SQL).all({ batchId }) as {
    provider: string
    model: string
    calls: number
    input: number
    cached: number
    cacheWrite: number
    output: number
    cost: number
  }[]
  let calls = 0
  let costMicros = 0
  let listMicros: number | null = 0
  for (const r of rows) {
    calls += r.calls
    costMicros += r.cost
    const usage = {
      inputTokens: r.input,
      cachedInputTokens: r.cached,
      cacheWriteTokens: r.cacheWrite,
      outputTokens: r.output,
    }
    const list = prices.costMicros(usage, prices.priceFor(r.provider, r.model))
    listMicros = list === null || listMicros === null ? null : listMicros + list
  }
  const savedMicros = listMicros === null ? null : Math.max(0, listMicros - costMicros)
  return { calls, costMicros, listMicros, savedMicros }
}
