/**
 * Formatting at the edge: the engine speaks integer micro-dollars, integer tokens and epoch
 * milliseconds; shared/format.ts turns them into text, the same for the console and the CLI.
 */
import { formatInt, formatUsd, UNPRICED } from '../../../shared/format'

export {
  formatClock,
  formatDateTime,
  formatDuration,
  formatInt,
  formatNumber,
  formatPercent,
  formatTokens,
} from '../../../shared/format'

/**
 * Cost of a rollup. The ledger sums priced calls only: null means none could be priced, and a
 * partly priced total says which part is missing instead of passing for the whole.
 */
export function formatRollupCost(
  costMicros: number | null,
  unpricedCalls: number,
  estimatedCalls = 0,
): string {
  if (costMicros === null) return UNPRICED
  let text = formatUsd(costMicros)
  if (unpricedCalls > 0) text += ` + ${formatInt(unpricedCalls)} unpriced`
  // Calls the provider reported no usage for: their tokens and cost are Pacer's estimate.
  if (estimatedCalls > 0) text += ` (${formatInt(estimatedCalls)} estimated)`
  return text
}
