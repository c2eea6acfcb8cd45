import type { TypeRollupView } from '../../../../shared/contract'
import { formatUsd, UNPRICED } from '../../../../shared/format'

/**
 * Saved / wasted amounts of a rollup row. When no call of the row could be priced, the ledger's
 * 0 means "unknown", and showing $0.00 would read as "dedup saved nothing".
 */
export function formatRowMoney(row: TypeRollupView, micros: number | null): string {
  return micros === null || (row.costMicros === null && micros === 0) ? UNPRICED : formatUsd(micros)
}
