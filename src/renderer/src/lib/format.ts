/**
 * Formatting at the edge: the engine speaks integer micro-dollars, integer tokens and epoch
 * milliseconds; only these functions (and shared/money for dollars) turn them into text for people.
 */
import { formatUsd, UNPRICED } from '../../../shared/money'

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 })

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
  let text = formatUsd(costMicros, 'glance')
  if (unpricedCalls > 0) text += ` + ${integer.format(unpricedCalls)} unpriced`
  // Calls the provider reported no usage for: their tokens and cost are Pacer's estimate.
  if (estimatedCalls > 0) text += ` (${integer.format(estimatedCalls)} estimated)`
  return text
}

export function formatInt(n: number): string {
  return integer.format(n)
}

export function formatTokens(n: number): string {
  return n >= 100_000 ? compact.format(n) : integer.format(n)
}

export function formatNumber(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits })
}

export function formatPercent(part: number, whole: number): string {
  if (whole <= 0) return '0%'
  return `${Math.floor((part / whole) * 100)}%`
}

// 24-hour clock: fixed width in tables and logs, no AM/PM to misread.
const timeFmt = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
})
const dateTimeFmt = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
})

export function formatClock(ts: number): string {
  return timeFmt.format(ts)
}

export function formatDateTime(ts: number): string {
  return dateTimeFmt.format(ts)
}

/** "1.2 s", "340 ms", "3 min" — for durations an operator compares at a glance. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${formatNumber(ms / 1000, 1)} s`
  if (ms < 3_600_000) return `${formatNumber(ms / 60_000, 1)} min`
  return `${formatNumber(ms / 3_600_000, 1)} h`
}
