/**
 * Money at the edges. The engine and the ledger keep integer micro-dollars; only these functions
 * turn them into dollars: text for people (formatUsd), exact decimals for files (microsToUsdString)
 * and numbers for JSON and charts (microsToUsd).
 */

/** What an amount that cannot be priced reads as: never '$0.00', which would say "free". */
export const UNPRICED = 'unpriced'

/**
 * How formatUsd writes an amount.
 * - 'exact' (CLI, desktop dialogs): '$' + thousands separators + 2 to 6 decimals, trailing zeros
 *   past the cents dropped, so cents read as money ('$1,234.50') and small LLM costs stay visible
 *   ('$0.003', '$0.000015') without rounding a cost to '$0.00'.
 * - 'glance' (the console's tables and charts): cents from $1 up ('$1,234.57'), 4 decimals below
 *   ('$0.0035': two would print most calls as $0.00), '<$0.0001' under 100 micro-dollars.
 */
export type MoneyStyle = 'exact' | 'glance'

/** Micro-dollars as display text in the given style; null (or undefined) is 'unpriced'. */
export function formatUsd(micros: number | null | undefined, style: MoneyStyle = 'exact'): string {
  if (micros === null || micros === undefined) return UNPRICED
  return style === 'glance' ? glance(micros) : exact(micros)
}

/**
 * What a cost guesses or leaves out, to follow it: ' (4 calls estimated, 2 unpriced: not
 * included)', or '' when it is all reported usage at known prices.
 */
export function costCaveats(estimatedCalls: number, unpricedCalls: number): string {
  const parts: string[] = []
  if (estimatedCalls > 0)
    parts.push(`${estimatedCalls} call${estimatedCalls === 1 ? '' : 's'} estimated`)
  if (unpricedCalls > 0) parts.push(`${unpricedCalls} unpriced: not included`)
  return parts.length > 0 ? ` (${parts.join(', ')})` : ''
}

/** Exact decimal USD with 6 decimals ('1.234567', '-0.000001'); no float ever touches the digits. */
export function microsToUsdString(micros: number): string
export function microsToUsdString(micros: number | null): string | null
export function microsToUsdString(micros: number | null): string | null {
  if (micros === null) return null
  if (!Number.isSafeInteger(micros)) {
    throw new RangeError(`micro-dollars must be a safe integer, got ${String(micros)}`)
  }
  const abs = Math.abs(micros)
  const whole = Math.floor(abs / 1_000_000)
  const frac = String(abs % 1_000_000).padStart(6, '0')
  return `${micros < 0 ? '-' : ''}${whole}.${frac}`
}

/**
 * Micro-dollars as a USD number, for JSON, charts and arithmetic at the edges (never for storage);
 * null (unpriced) stays null.
 */
export function microsToUsd(micros: number): number
export function microsToUsd(micros: number | null): number | null
export function microsToUsd(micros: number | null): number | null {
  return micros === null ? null : Math.round(micros) / 1_000_000
}

/** A USD number back to whole micro-dollars (a chart's axis value, a summary's dollars). */
export function usdToMicros(usd: number): number {
  return Math.round(usd * 1_000_000)
}

function exact(micros: number): string {
  const digits = microsToUsdString(micros)
  const negative = digits.startsWith('-')
  const [whole = '0', frac = ''] = (negative ? digits.slice(1) : digits).split('.')
  const decimals = frac.replace(/0+$/, '').padEnd(2, '0')
  return `${negative ? '-' : ''}$${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${decimals}`
}

const cents = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
})
const fourDecimals = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 4,
  maximumFractionDigits: 4,
})

function glance(micros: number): string {
  const usd = micros / 1_000_000
  if (micros === 0) return cents.format(0)
  if (Math.abs(usd) < 1) {
    if (Math.abs(micros) < 100) return usd < 0 ? '-<$0.0001' : '<$0.0001'
    return fourDecimals.format(usd)
  }
  return cents.format(usd)
}
