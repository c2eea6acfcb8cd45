// What providers announce of their rate budgets, read from an answer's headers: OpenAI's
// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` and Anthropic's
// `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`, and
// what a call costs in each (rate-budget.ts models the buckets).
import { parseDuration, parseNumber, parseRfc3339 } from '../providers/classify'

/** The budgets providers announce: requests and tokens per window (per minute for both vendors). */
export type BudgetDimension = 'requests' | 'tokens' | 'input-tokens' | 'output-tokens'

export const BUDGET_DIMENSIONS: readonly BudgetDimension[] = [
  'requests',
  'tokens',
  'input-tokens',
  'output-tokens',
]

/** One announced budget as of the call that carried it. */
export interface DimensionReading {
  limit: number
  remaining: number
  /** When the budget is full again (epoch ms), if announced. */
  resetAt?: number
}

export type BudgetReading = Partial<Record<BudgetDimension, DimensionReading>>

/** An announced limit that an answer changed (from null: the first one announced). */
export interface BudgetChange {
  dimension: BudgetDimension
  from: number | null
  to: number
}

/** What a call is expected to cost, before it is sent. */
export interface CallEstimate {
  /** Estimated input tokens. @default 0 */
  inputTokens?: number
  /** Estimated output tokens (max_tokens, or a typical answer). @default 0 */
  outputTokens?: number
}

/** What the call really cost, from the provider's usage. */
export interface CallUsage {
  inputTokens: number
  outputTokens: number
}

type Field = 'limit' | 'remaining' | 'reset'

/**
 * Every rate-limit header name, lower-case, with what it says: one lookup per header. `slot`
 * numbers the (vendor, dimension) pairs, so a reading collects into a small array.
 */
const BUDGET_HEADERS = new Map<string, { slot: number; field: Field }>()
BUDGET_DIMENSIONS.forEach((dim, d) => {
  for (const field of ['limit', 'remaining', 'reset'] as const) {
    BUDGET_HEADERS.set(`x-ratelimit-${field}-${dim}`, { slot: 2 * d, field })
    BUDGET_HEADERS.set(`anthropic-ratelimit-${dim}-${field}`, { slot: 2 * d + 1, field })
  }
})

type Raw = Partial<Record<Field, string>>

/**
 * Reads OpenAI `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (resets as Go durations
 * such as `6m0s`) and Anthropic `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-
 * {limit,remaining,reset}` (resets as RFC 3339). A dimension needs both a limit and a remaining
 * count; undefined when the answer announces none. One pass over the headers: this runs on every
 * answer, so it must stay cheap next to admission itself.
 */
export function readBudgetHeaders(
  headers: Record<string, string>,
  now: number,
): BudgetReading | undefined {
  let raw: Raw[] | undefined
  for (const name in headers) {
    const known = BUDGET_HEADERS.get(name) ?? BUDGET_HEADERS.get(name.toLowerCase())
    const value = headers[name]
    if (!known || typeof value !== 'string') continue
    raw ??= []
    const fields = (raw[known.slot] ??= {})
    fields[known.field] = value
  }
  if (!raw) return undefined
  // No closure per answer (the CLI's bundle keeps every function's name, a cost per closure).
  const reading: BudgetReading = {}
  let any = false
  for (let d = 0; d < BUDGET_DIMENSIONS.length; d++) {
    const found =
      toReading(raw[2 * d], now, openaiResetAt) ?? toReading(raw[2 * d + 1], now, parseRfc3339)
    if (found) {
      reading[BUDGET_DIMENSIONS[d] as BudgetDimension] = found
      any = true
    }
  }
  // Anthropic's `tokens-*` repeats the most restrictive of input and output: pacing it as well
  // would charge input plus output against whichever of the two it happens to be.
  if (reading['input-tokens'] || reading['output-tokens']) delete reading.tokens
  return any ? reading : undefined
}

/**
 * Some announced budget had less left than a call of this cost needed. No array per dimension:
 * this runs on every answer.
 */
export function readingShort(
  reading: BudgetReading,
  cost: Readonly<Record<BudgetDimension, number>>,
): boolean {
  for (const dim in reading) {
    const r = reading[dim as BudgetDimension] as DimensionReading
    if (r.remaining < Math.max(1, cost[dim as BudgetDimension])) return true
  }
  return false
}

/** OpenAI's resets are durations from the answer (Go's `6m0s`); Anthropic's are instants. */
function openaiResetAt(text: string, now: number): number | undefined {
  const ms = parseDuration(text)
  return ms === undefined ? undefined : now + ms
}

function toReading(
  raw: Raw | undefined,
  now: number,
  resetAt: (text: string, now: number) => number | undefined,
): DimensionReading | undefined {
  if (!raw || raw.limit === undefined || raw.remaining === undefined) return undefined
  const limit = parseNumber(raw.limit)
  const remaining = parseNumber(raw.remaining)
  if (limit === undefined || remaining === undefined || !(limit > 0)) return undefined
  const at = raw.reset === undefined ? undefined : resetAt(raw.reset, now)
  const reading: DimensionReading = { limit, remaining: Math.min(remaining, limit) }
  if (at !== undefined) reading.resetAt = at
  return reading
}

/**
 * How fast an announced budget refills, per ms: the limit per window, unless the reset is far out
 * and refills slower than the window implies: a longer window (a daily quota), believed. Short
 * resets are rounded to the second by Anthropic, so never those.
 */
export function refillRate(r: DimensionReading, now: number, windowMs: number): number {
  const ratePerMs = r.limit / windowMs
  if (r.resetAt !== undefined && r.resetAt - now >= 5000 && r.remaining < r.limit) {
    const derived = (r.limit - r.remaining) / (r.resetAt - now)
    if (derived < ratePerMs / 2) return derived
  }
  return ratePerMs
}

/** Cost per dimension of one call: a request, and its tokens where a budget counts them. */
export function costOf(
  estimate: CallEstimate | CallUsage,
  requests = 1,
): Record<BudgetDimension, number> {
  const input = Math.max(0, estimate.inputTokens ?? 0)
  const output = Math.max(0, estimate.outputTokens ?? 0)
  return { requests, tokens: input + output, 'input-tokens': input, 'output-tokens': output }
}
