// What answering through the provider batch APIs saved: the rows priced at the batch rate (their
// price version ends in '+batch': 'via batch') against the same tokens at the list price.
import type Database from 'better-sqlite3'
import type { LedgerEventInput } from '../core/types'
import type { Prices } from '../pricing/prices'
import { BATCH_PRICE_SUFFIX } from '../pricing/batch-rates'
import type { LedgerRow } from './ledger'

/**
 * Prices one call at its tier (live at the list price, 'batch' at the batch rate): its cost, what
 * its prompt cache did, and for a call via batch what the discount saved (list − batch, each
 * rounded once as the bill is; null when unpriced or live).
 */
export function priceCall(
  prices: Prices,
  e: Pick<LedgerEventInput, 'provider' | 'model' | 'usage' | 'tier'>,
) {
  const { usage } = e
  const list = prices.priceFor(e.provider, e.model)
  const price = e.tier === 'batch' ? prices.batchPriceFor(e.provider, e.model) : list
  const costMicros = prices.costMicros(usage, price)
  const cache = prices.cacheEffectMicros(usage, price)
  const listMicros = e.tier === 'batch' ? prices.costMicros(usage, list) : null
  const batchSavedMicros =
    listMicros === null || costMicros === null ? null : Math.max(0, listMicros - costMicros)
  return { costMicros, cache, batchSavedMicros }
}

/**
 * What one row's batch discount saved: 0 live; its own figure via batch, or, for a team ledger
 * entry appended before entries carried it, its cost (at both vendors' 50 % rate the saving).
 */
export function batchSavedOf(
  r: Pick<LedgerRow, 'priceVersion' | 'costMicros' | 'batchSavedMicros'>,
): number | null {
  if (!r.priceVersion?.endsWith(BATCH_PRICE_SUFFIX)) return 0
  return r.batchSavedMicros === undefined ? r.costMicros : r.batchSavedMicros
}

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

// The discount as each row stored it when it was priced (migration 20): list − batch per call.
const SQL = `
  SELECT COUNT(*) AS calls, COALESCE(SUM(cost_micros), 0) AS cost,
    COALESCE(SUM(batch_saved_micros), 0) AS saved,
    COALESCE(SUM(batch_saved_micros IS NULL AND input_tokens + output_tokens > 0), 0) AS unpriced
  FROM ledger WHERE price_version LIKE '%+batch' AND outcome IN ('executed', 'duplicate') AND (@batchId IS NULL OR batch_id = @batchId)`

// The ledger has no index by label: a ledger without a single batch-priced label is not scanned.
const ANY_SQL = `SELECT EXISTS (SELECT 1 FROM ledger_labels WHERE price_version LIKE '%+batch') AS any`

/** The batch discount of one batch's calls (or of every call, batchId null), as recorded. */
export function batchDiscount(db: Database.Database, batchId: string | null): BatchDiscount {
  if ((db.prepare(ANY_SQL).get() as { any: number }).any === 0) {
    return { calls: 0, costMicros: 0, listMicros: 0, savedMicros: 0 }
  }
  const r = db.prepare(SQL).get({ batchId }) as {
    calls: number
    cost: number
    saved: number
    unpriced: number
  }
  const savedMicros = r.unpriced > 0 ? null : r.saved
  return {
    calls: r.calls,
    costMicros: r.cost,
    listMicros: savedMicros === null ? null : r.cost + savedMicros,
    savedMicros,
  }
}
