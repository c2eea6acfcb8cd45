import { parseDuration, parseNumber, parseRfc3339 } from '../providers/classify'
import { SendPace, type PaceView } from './send-pace'

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
  const openaiReset = (text: string) => {
    const ms = parseDuration(text)
    return ms === undefined ? undefined : now + ms
  }
  const reading: BudgetReading = {}
  BUDGET_DIMENSIONS.forEach((dim, d) => {
    const found = toReading(raw[2 * d], openaiReset) ?? toReading(raw[2 * d + 1], parseRfc3339)
    if (found) reading[dim] = found
  })
  // Anthropic's `tokens-*` repeats the most restrictive of input and output: pacing it as well
  // would charge input plus output against whichever of the two it happens to be.
  if (reading['input-tokens'] || reading['output-tokens']) delete reading.tokens
  return Object.keys(reading).length > 0 ? reading : undefined
}

function toReading(
  raw: Raw | undefined,
  parseReset: (text: string) => number | undefined,
): DimensionReading | undefined {
  if (!raw || raw.limit === undefined || raw.remaining === undefined) return undefined
  const limit = parseNumber(raw.limit)
  const remaining = parseNumber(raw.remaining)
  if (limit === undefined || remaining === undefined || !(limit > 0)) return undefined
  const resetAt = raw.reset === undefined ? undefined : parseReset(raw.reset)
  const reading: DimensionReading = { limit, remaining: Math.min(remaining, limit) }
  if (resetAt !== undefined) reading.resetAt = resetAt
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

const NOTHING: Readonly<CallUsage> = Object.freeze({ inputTokens: 0, outputTokens: 0 })

/** A call admitted against the budget; settle it once with its answer. */
export interface Reservation {
  readonly seq: number
  readonly sentAt: number
  /** The caller's input estimate, before calibration. */
  readonly estimatedInput: number
  /** The caller's output estimate (max_tokens, or a typical answer). */
  readonly estimatedOutput: number
  /** What the pace was charged: the cost with the output as answers turned out. */
  readonly paced: Readonly<Record<BudgetDimension, number>>
  readonly cost: Readonly<Record<BudgetDimension, number>>
  /** Cumulative cost admitted up to and including this call, per dimension. */
  readonly spentAfter: Readonly<Record<BudgetDimension, number>>
}

interface DimensionState {
  limit: number
  /** Refill per ms: the bucket is full again one window after it was empty. */
  ratePerMs: number
  /** What the provider would accept now, as of `at`. */
  level: number
  at: number
}

/** One dimension's state, for tests and the console. */
export interface DimensionSnapshot {
  limit: number
  level: number
  perMinute: number
}

export interface RateBudgetOptions {
  /** The window an announced limit refers to. @default 60_000 (both vendors count per minute) */
  windowMs?: number
}

/** Token counts are estimates; their error is learned from real usage (EWMA weight). */
const CALIBRATION_WEIGHT = 0.1
/**
 * Admission keeps this many mean deviations of the estimates in reserve, over every call the
 * provider has counted but no answer has reported yet (their estimates are what the model holds).
 */
const RESERVE_DEVIATIONS = 3

/**
 * One partition's header-announced rate budget: a local model of the provider's buckets (both
 * vendors refill continuously up to the limit), resynchronised from every answer's headers and
 * settled with real usage, so admissions follow the announced rate instead of finding it by
 * refusals. Pure: every method takes `now`.
 *
 * An answer's `remaining` is the provider's count when it received that call; calls admitted after
 * it are not in that count and are taken off again. Answers that arrive out of order are ignored
 * when an answer to a later call has already been read.
 */
export class RateBudget {
  readonly #windowMs: number
  readonly #dims = new Map<BudgetDimension, DimensionState>()
  readonly #spent: Record<BudgetDimension, number> = costOf(NOTHING, 0)
  #seq = 0
  #syncedSeq = -1
  // Cumulative cost admitted up to the call the model was last resynchronised from.
  #syncedSpent: Record<BudgetDimension, number> = costOf(NOTHING, 0)
  // Learned ratio real / estimated tokens, and its mean absolute deviation.
  #ratio = 1
  #deviation = 0.1
  // Learned ratio real / estimated output (max_tokens is a ceiling, answers are shorter).
  #outputRatio = 1
  // Admissions spread at the rate that is ours, in bursts the enforcement window allows.
  readonly #pace = new SendPace()

  constructor(options: RateBudgetOptions = {}) {
    const { windowMs = 60_000 } = options
    if (!Number.isFinite(windowMs) || windowMs <= 0) {
      throw new TypeError(`Expected \`windowMs\` to be a number > 0, got \`${String(windowMs)}\``)
    }
    this.#windowMs = windowMs
  }

  /** True once an answer announced a budget. */
  get known(): boolean {
    return this.#dims.size > 0
  }

  /** Ms until a call of this estimate fits every announced budget; 0 when it may go now. */
  delayMs(now: number, estimate: CallEstimate = {}): number {
    const cost = this.#costOf(estimate)
    let wait = 0
    for (const [dim, state] of this.#dims) {
      const unreported = this.#spent[dim] - this.#syncedSpent[dim]
      const reserve =
        dim === 'requests' ? 0 : (unreported + cost[dim]) * RESERVE_DEVIATIONS * this.#deviation
      // A call bigger than the whole budget goes when the bucket is full, or it would never go.
      const need = Math.min(state.limit, cost[dim] + reserve)
      const level = this.#level(state, now)
      if (level < need) wait = Math.max(wait, (need - level) / state.ratePerMs)
    }
    return Math.max(Math.ceil(wait), this.#pace.delayMs(now, this.#paceCost(estimate)))
  }

  /** The pace admissions keep: its burst and the rate that is ours, per dimension. */
  get pace(): PaceView {
    return this.#pace.view()
  }

  /**
   * A refusal that the announced budget does not explain (it showed room for the call): the
   * provider enforces a shorter window than the burst: the pace narrows (send-pace.ts). False
   * when it could narrow no further: the refusal is not about spacing.
   */
  refusedUnexplained(sentAt: number, now: number): boolean {
    return this.#pace.refusedUnexplained(sentAt, now)
  }

  /** The pace itself: what refusals taught it is shared (learned-pace.ts). */
  get sendPace(): SendPace {
    return this.#pace
  }

  /** Takes the call's estimated cost out of every budget. */
  reserve(now: number, estimate: CallEstimate = {}): Reservation {
    const cost = this.#costOf(estimate)
    for (const [dim, state] of this.#dims) {
      state.level = this.#level(state, now) - cost[dim]
      state.at = now
    }
    for (const dim of BUDGET_DIMENSIONS) this.#spent[dim] += cost[dim]
    const paced = this.#paceCost(estimate)
    this.#pace.take(now, paced)
    return {
      seq: this.#seq++,
      sentAt: now,
      estimatedInput: Math.max(0, estimate.inputTokens ?? 0),
      estimatedOutput: Math.max(0, estimate.outputTokens ?? 0),
      paced,
      cost,
      spentAfter: { ...this.#spent },
    }
  }

  /**
   * Settles a call with what its answer said: resynchronises from its headers, gives a refused
   * call's cost back, corrects an estimate with real usage, and learns the estimate's error.
   * Returns the announced limits the answer changed.
   */
  settle(
    now: number,
    reservation: Reservation,
    answer: {
      refused: boolean
      headers?: Record<string, string>
      usage?: CallUsage
      /** The headers' reading, when the caller read them already (null: none). */
      reading?: BudgetReading | null
    },
  ): BudgetChange[] {
    // A refused call cost nothing; an answer without usage keeps its estimate.
    const actual = answer.refused
      ? costOf(NOTHING, 0)
      : answer.usage
        ? costOf(answer.usage)
        : undefined
    if (answer.usage && !answer.refused) this.#learn(reservation, answer.usage)
    // A refused call keeps its place in the pace: an attempt spent that moment of the window.
    if (actual && !answer.refused) {
      for (const dim of BUDGET_DIMENSIONS) {
        this.#pace.refund(now, dim, reservation.paced[dim] - actual[dim])
      }
    }
    const reading =
      answer.reading !== undefined
        ? answer.reading
        : answer.headers
          ? readBudgetHeaders(answer.headers, now)
          : undefined
    if (reading && reservation.seq > this.#syncedSeq) {
      return this.#sync(now, reservation, reading)
    }
    // An answer already read from a later call counted this one as the provider saw it.
    if (!actual || reservation.seq <= this.#syncedSeq) return []
    for (const [dim, state] of this.#dims) {
      state.level = this.#level(state, now) - (actual[dim] - reservation.cost[dim])
      state.at = now
    }
    return []
  }

  /** Every announced budget as the model sees it now. */
  snapshot(now: number): Partial<Record<BudgetDimension, DimensionSnapshot>> {
    const out: Partial<Record<BudgetDimension, DimensionSnapshot>> = {}
    for (const [dim, state] of this.#dims) {
      out[dim] = {
        limit: state.limit,
        level: this.#level(state, now),
        perMinute: state.ratePerMs * 60_000,
      }
    }
    return out
  }

  #sync(now: number, reservation: Reservation, reading: BudgetReading): BudgetChange[] {
    this.#syncedSeq = reservation.seq
    this.#syncedSpent = { ...reservation.spentAfter }
    const changes: BudgetChange[] = []
    for (const dim of BUDGET_DIMENSIONS) {
      const r = reading[dim]
      if (!r) continue
      const before = this.#dims.get(dim)?.limit ?? null
      if (before !== r.limit) changes.push({ dimension: dim, from: before, to: r.limit })
      const ratePerMs = refillRate(r, now, this.#windowMs)
      const refilled = Math.min(r.limit, r.remaining + ratePerMs * (now - reservation.sentAt))
      const admittedSince = this.#spent[dim] - reservation.spentAfter[dim]
      this.#dims.set(dim, { limit: r.limit, ratePerMs, level: refilled - admittedSince, at: now })
      // The pace spreads at the announced window's rate; a slower refill derived from a far reset
      // (a daily quota) is the level's to count, not a spacing.
      const sent = { at: reservation.sentAt, cost: reservation.paced[dim] }
      this.#pace.announce(dim, r.limit / this.#windowMs, now, sent)
      this.#pace.observe(dim, reservation.sentAt, r.remaining, r.limit, reservation.spentAfter[dim])
    }
    return changes
  }

  /** A call's cost for the pace: the output at what answers turned out to use of the estimate. */
  #paceCost(estimate: CallEstimate): Record<BudgetDimension, number> {
    return costOf({
      inputTokens: (estimate.inputTokens ?? 0) * this.#ratio,
      outputTokens: (estimate.outputTokens ?? 0) * this.#outputRatio,
    })
  }

  #learn(reservation: Reservation, usage: CallUsage): void {
    if (reservation.estimatedOutput > 0) {
      const out = Math.min(1, usage.outputTokens / reservation.estimatedOutput)
      this.#outputRatio += CALIBRATION_WEIGHT * (out - this.#outputRatio)
    }
    const estimated = reservation.estimatedInput
    if (!(estimated > 0)) return
    const ratio = usage.inputTokens / estimated
    this.#deviation += CALIBRATION_WEIGHT * (Math.abs(ratio - this.#ratio) - this.#deviation)
    this.#ratio += CALIBRATION_WEIGHT * (ratio - this.#ratio)
  }

  /** What a call of this estimate is charged per dimension (the input estimate calibrated). */
  costOf(estimate: CallEstimate = {}): Record<BudgetDimension, number> {
    return this.#costOf(estimate)
  }

  #costOf(estimate: CallEstimate): Record<BudgetDimension, number> {
    return costOf({
      inputTokens: (estimate.inputTokens ?? 0) * this.#ratio,
      outputTokens: estimate.outputTokens ?? 0,
    })
  }

  #level(state: DimensionState, now: number): number {
    return Math.min(state.limit, state.level + state.ratePerMs * Math.max(0, now - state.at))
  }
}
