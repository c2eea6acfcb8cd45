/**
 * Money at the edges. The engine and the ledger keep integer micro-dollars; only these functions
 * turn them into dollars: exact decimals for files (microsToUsdString) and numbers for JSON and
 * charts (microsToUsd). Text for people is format.ts's formatUsd, the one money format.
 */

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
