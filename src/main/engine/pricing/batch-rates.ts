// The vendors' batch rates: the same calls at a share of the list price when the caller accepts
// results within 24 hours. Dated and sourced like the list prices (prices-table.ts); a call
// answered through a provider batch is priced at list × rate.
import type { ModelPrice } from './prices'

/** A family's batch rate, with where and when it was read. */
export interface BatchRate {
  /** The share of the list price a batch call is billed (0.5: half price). */
  rate: number
  /** The day the rate was checked (YYYY-MM-DD). */
  checked: string
  source: string
}

/**
 * OpenAI: "50% cost discount compared to synchronous APIs" (Batch API guide), on input, cached
 * input and output alike. Anthropic: "all usage is charged at 50% of the standard API prices"
 * (Message Batches), prompt-caching multipliers stacking on top of it.
 */
export const BATCH_RATES: Readonly<Record<string, BatchRate>> = Object.freeze({
  openai: {
    rate: 0.5,
    checked: '2026-12-02',
    source: 'https://platform.openai.com/docs/guides/batch',
  },
  anthropic: {
    rate: 0.5,
    checked: '2026-12-02',
    source: 'https://docs.claude.com/en/docs/build-with-claude/batch-processing#pricing',
  },
})

/** A list price at a batch rate, each component rounded to the table's micro-dollar per 1M. */
export function atRate(list: ModelPrice, rate: number): ModelPrice {
  const r = (usd: number) => Math.round(usd * rate * 1e6) / 1e6
  return {
    input: r(list.input),
    cachedInput: r(list.cachedInput),
    cacheWrite: r(list.cacheWrite),
    output: r(list.output),
  }
}

/** What marks a ledger row priced at the batch rate ('via batch'): its price version's suffix. */
export const BATCH_PRICE_SUFFIX = '+batch'

/** The price version of a row priced at the batch rate. */
export function batchPriceVersion(version: string): string {
  return `${version}${BATCH_PRICE_SUFFIX}`
}
