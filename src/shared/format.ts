/**
 * Numbers as text for people: one format per kind of number, used by the console, the CLI and
 * the desktop dialogs alike, so the same amount reads the same everywhere.
 *
 * - money: '$' + thousands separators + always 4 decimals ('$0.3754', '$1.0800', '$1,234.5000'):
 *   most LLM calls cost fractions of a cent, and one fixed width keeps columns, totals and chart
 *   axes comparable digit by digit. A non-zero amount under $0.0001 reads '<$0.0001' (never
 *   '$0.0000', which would say "free"); an unpriced one reads 'unpriced'. Files (CSV, --json)
 *   keep the exact amount instead (money.ts microsToUsdString: 6 decimals, every micro-dollar).
 * - tokens and other counts: whole numbers with thousands separators ('213,812'), never '213.8K'
 *   beside a '42,981'.
 * - times of day: 24-hour clock ('14:05:09'), in tables, logs, chart axes and chart legends.
 * - durations: '340 ms', '1.2 s', '3 min', '1.5 h'.
 * - percentages: whole percent, rounded down ('19%'), so a batch reads 100% only when it is done.
 * - prices (USD per 1M tokens, a rate, not an amount): as the price table writes them, 2 to 6
 *   decimals ('$3.00', '$0.075', '$0.0375').
 *
 * CSV headers follow the same kinds by suffix: `_usd` (decimal dollars), `_tokens` (integers),
 * `_ms` (durations), `ts` (epoch milliseconds) and `time_utc` (ISO 8601).
 */

/** What an amount that cannot be priced reads as: never '$0.0000', which would say "free". */
export const UNPRICED = 'unpriced'

/** Decimals every dollar amount is shown with. */
export const USD_DECIMALS = 4

const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
const dollars = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: USD_DECIMALS,
  maximumFractionDigits: USD_DECIMALS,
})
/** Below this many micro-dollars an amount rounds to $0.0000 at 4 decimals. */
const SMALLEST_SHOWN = 50

/** Micro-dollars as text; null (or undefined) is 'unpriced'. */
export function formatUsd(micros: number | null | undefined): string {
  if (micros === null || micros === undefined) return UNPRICED
  if (micros !== 0 && Math.abs(micros) < SMALLEST_SHOWN) {
    return micros < 0 ? '-<$0.0001' : '<$0.0001'
  }
  // Integer micro-dollars to 4 decimals: round half away from zero on the integer, then divide
  // (no float ever rounds a ...5 the wrong way).
  const hundredths = Math.round(Math.abs(micros) / 100) * Math.sign(micros)
  return dollars.format(hundredths / 10_000).replace('-$0.0000', '$0.0000')
}

/** A dollar amount given in dollars (a price per 1M tokens, a chart's axis value). */
export function formatUsdValue(usd: number): string {
  return formatUsd(Math.round(usd * 1_000_000))
}

/** A price in USD per 1M tokens, with the decimals the price table gives it: '$0.075'. */
export function formatUsdPerM(usd: number): string {
  return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`
}

/** A count (tasks, calls, rows) or a number of tokens: '213,812'. */
export function formatInt(n: number): string {
  return count.format(n)
}

/** Tokens: the same as any count, so a total reads like the rows it sums. */
export function formatTokens(n: number): string {
  return count.format(n)
}

/** A number that may have a fraction (a concurrency limit): at most `digits` decimals. */
export function formatNumber(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits })
}

/** `part` of `whole` in whole percent, rounded down: '19%' (0% for an empty whole). */
export function formatPercent(part: number, whole: number): string {
  if (whole <= 0) return '0%'
  return `${Math.floor((part / whole) * 100)}%`
}

// 24-hour clock: fixed width in tables and logs, no AM/PM to misread. The user's locale orders
// the parts; the hour cycle is fixed, so an axis and its legend never disagree.
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

/** Time of day on the 24-hour clock: '14:05:09'. */
export function formatClock(ts: number): string {
  return timeFmt.format(ts)
}

/** Day and time of day on the 24-hour clock: 'Dec 2, 14:05'. */
export function formatDateTime(ts: number): string {
  return dateTimeFmt.format(ts)
}

/** "340 ms", "1.2 s", "3 min", "1.5 h" — for durations an operator compares at a glance. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${formatNumber(ms / 1000, 1)} s`
  if (ms < 3_600_000) return `${formatNumber(ms / 60_000, 1)} min`
  return `${formatNumber(ms / 3_600_000, 1)} h`
}
