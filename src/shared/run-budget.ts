// The run's spend cap as an operator types it (the console's import dialog): the same meaning as
// `pacer run --budget USD`, a positive dollar amount.

/** Most a cap may be, as `pacer budgets set` allows. */
const MAX_USD = 1e9

/**
 * `text` as the run's cap in dollars: undefined when empty (no cap), or why it is not one. A
 * leading `$` is accepted; the amount must come to at least one micro-dollar.
 */
export function parseRunBudget(text: string): { usd: number | undefined } | { error: string } {
  const t = text.trim().replace(/^\$\s*/, '')
  if (t === '') return { usd: undefined }
  const n = /^\d*\.?\d+$|^\d+\.$/.test(t) ? Number(t) : NaN
  if (!Number.isFinite(n) || n < 0.000001 || n > MAX_USD) {
    return {
      error: `Budget (USD): give a positive dollar amount such as 5 or 0.25, got "${text.trim()}"`,
    }
  }
  return { usd: n }
}
