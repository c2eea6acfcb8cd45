import { describe, expect, it } from 'vitest'
import type { CallEstimate } from '../../../../src/main/engine/pacing/budget-reading'
import { RateBudget } from '../../../../src/main/engine/pacing/rate-budget'
import { readBudgetHeaders } from '../../../../src/main/engine/pacing/budget-reading'
import type { FakeClock } from '../../../helpers/clock'
import { fakeClock } from '../../../helpers/clock'

const NOW = Date.UTC(2025, 4, 1, 12, 0, 0)

function openai(limit: number, remaining: number, reset = '1s'): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(remaining),
    'x-ratelimit-reset-requests': reset,
  }
}

describe('readBudgetHeaders', () => {
  it('reads the OpenAI families, resets as Go durations', () => {
    const reading = readBudgetHeaders(
      {
        ...openai(500, 499, '6m0s'),
        'x-ratelimit-limit-tokens': '150000',
        'x-ratelimit-remaining-tokens': '149984',
        'x-ratelimit-reset-tokens': '20ms',
      },
      NOW,
    )
    expect(reading).toEqual({
      requests: { limit: 500, remaining: 499, resetAt: NOW + 360_000 },
      tokens: { limit: 150_000, remaining: 149_984, resetAt: NOW + 20 },
    })
    expect(readBudgetHeaders(openai(60, 59, '1s'), NOW)?.requests?.resetAt).toBe(NOW + 1000)
  })

  it('reads the Anthropic families, resets as RFC 3339, and drops the derived tokens-*', () => {
    const family = (dim: string, limit: number, remaining: number, reset: string) => ({
      [`anthropic-ratelimit-${dim}-limit`]: String(limit),
      [`anthropic-ratelimit-${dim}-remaining`]: String(remaining),
      [`anthropic-ratelimit-${dim}-reset`]: reset,
    })
    const headers = {
      ...family('requests', 4000, 3999, '2025-05-01T12:00:01Z'),
      ...family('input-tokens', 400_000, 390_000, '2025-05-01T14:00:02.5+02:00'),
      ...family('output-tokens', 80_000, 80_000, '2025-05-01T12:00:00Z'),
      ...family('tokens', 80_000, 80_000, '2025-05-01T12:00:00Z'),
    }
    expect(readBudgetHeaders(headers, NOW)).toEqual({
      requests: { limit: 4000, remaining: 3999, resetAt: NOW + 1000 },
      'input-tokens': { limit: 400_000, remaining: 390_000, resetAt: NOW + 2500 },
      'output-tokens': { limit: 80_000, remaining: 80_000, resetAt: NOW },
    })
    // Alone, the combined family is the budget.
    expect(readBudgetHeaders(family('tokens', 100, 7, 'soon'), NOW)).toEqual({
      tokens: { limit: 100, remaining: 7 },
    })
  })

  it('needs a limit and a remaining count; reads names in any case; ignores garbage', () => {
    expect(readBudgetHeaders({}, NOW)).toBeUndefined()
    expect(readBudgetHeaders({ 'x-ratelimit-remaining-requests': '3' }, NOW)).toBeUndefined()
    expect(
      readBudgetHeaders({ ...openai(500, 1), 'x-ratelimit-limit-requests': 'many' }, NOW),
    ).toBe(undefined)
    expect(readBudgetHeaders(openai(0, 0), NOW)).toBeUndefined()
    expect(
      readBudgetHeaders(
        { 'X-RateLimit-Limit-Requests': '10', 'X-RateLimit-Remaining-Requests': '40' },
        NOW,
      ),
    ).toEqual({ requests: { limit: 10, remaining: 10 } })
  })
})

/**
 * A provider's request bucket as both vendors describe theirs: refilled continuously up to the
 * limit per minute, answering with its count as of each call's arrival.
 */
class ProviderBucket {
  level: number
  #at: number
  constructor(
    public limit: number,
    private clock: FakeClock,
  ) {
    this.level = limit
    this.#at = clock.now()
  }
  take(cost: number): { accepted: boolean; headers: Record<string, string> } {
    const now = this.clock.now()
    this.level = Math.min(this.limit, this.level + (this.limit / 60_000) * (now - this.#at))
    this.#at = now
    const accepted = this.level >= cost
    if (accepted) this.level -= cost
    return { accepted, headers: openai(this.limit, Math.floor(this.level)) }
  }
}

/**
 * Admits calls as soon as the budget says so, at most 20 in flight (the concurrency limit's part),
 * for `ms` of fake time; each answer comes back `latencyMs` later with the provider's headers.
 * Returns admissions and refusals.
 */
function drive(
  budget: RateBudget,
  provider: ProviderBucket,
  clock: FakeClock,
  ms: number,
  latencyMs = 400,
) {
  const start = clock.now()
  const pending: { at: number; settle: () => void }[] = []
  let admitted = 0
  let refused = 0
  while (clock.now() - start < ms) {
    while (pending.length > 0 && (pending[0]?.at ?? Infinity) <= clock.now())
      pending.shift()?.settle()
    const wait = pending.length >= 20 ? Infinity : budget.delayMs(clock.now())
    if (wait === 0) {
      const reservation = budget.reserve(clock.now())
      const answer = provider.take(1)
      if (answer.accepted) admitted++
      else refused++
      const now = clock.now()
      pending.push({
        at: now + latencyMs,
        settle: () =>
          budget.settle(clock.now(), reservation, {
            refused: !answer.accepted,
            headers: answer.headers,
          }),
      })
      continue
    }
    // Nothing to do until the budget refills or an answer arrives.
    clock.advance(Math.max(1, Math.min(wait, (pending[0]?.at ?? Infinity) - clock.now())))
  }
  return { admitted, refused }
}

describe('RateBudget: header pacing', () => {
  it('holds the announced rate: the whole budget is used and nothing is refused', () => {
    const clock = fakeClock()
    const provider = new ProviderBucket(600, clock)
    const budget = new RateBudget()
    // The first call learns the budget; until then nothing is known and nothing waits.
    expect(budget.known).toBe(false)
    expect(budget.delayMs(clock.now())).toBe(0)
    const { admitted, refused } = drive(budget, provider, clock, 5 * 60_000)
    expect(refused).toBe(0)
    // The full bucket at the start plus five minutes of refill, less what is still in flight.
    expect(admitted).toBeGreaterThanOrEqual(600 + 5 * 600 - 10)
    expect(admitted).toBeLessThanOrEqual(600 + 5 * 600)
  })

  it('follows a budget announced lower, then higher, with one answer latency of refusals at most', () => {
    const clock = fakeClock()
    const provider = new ProviderBucket(600, clock)
    const budget = new RateBudget()
    const counts = [0, 1, 2].map((phase) => {
      provider.limit = [600, 120, 1200][phase] as number
      return drive(budget, provider, clock, 2 * 60_000)
    })
    // Until the first answer after the drop tells, calls go at the old rate: 400 ms at 10 a second.
    expect(counts.reduce((n, c) => n + c.refused, 0)).toBeLessThanOrEqual(5)
    // Per phase, about two minutes at the announced rate (the first also drains the full bucket).
    expect(counts[1]?.admitted).toBeGreaterThanOrEqual(2 * 120 - 10)
    expect(counts[1]?.admitted).toBeLessThanOrEqual(2 * 120 + 10)
    expect(counts[2]?.admitted).toBeGreaterThanOrEqual(2 * 1200 - 20)
  })

  it('waits exactly for the refill a call needs', () => {
    const clock = fakeClock()
    const budget = new RateBudget()
    const r = budget.reserve(clock.now())
    budget.settle(clock.now(), r, { refused: false, headers: openai(60, 0) })
    // 60 a minute: one a second.
    expect(budget.delayMs(clock.now())).toBe(1000)
    clock.advance(400)
    expect(budget.delayMs(clock.now())).toBe(600)
    clock.advance(600)
    expect(budget.delayMs(clock.now())).toBe(0)
  })

  it('takes calls admitted after the answered one off what its headers say is left', () => {
    const clock = fakeClock()
    const budget = new RateBudget()
    const first = budget.reserve(clock.now())
    budget.settle(clock.now(), first, { refused: false, headers: openai(60, 10) })
    const answered = budget.reserve(clock.now())
    for (let i = 0; i < 4; i++) budget.reserve(clock.now())
    budget.settle(clock.now(), answered, { refused: false, headers: openai(60, 9) })
    expect(budget.snapshot(clock.now()).requests?.level).toBe(5)
    // An answer to an older call is older news: it changes nothing.
    budget.settle(clock.now(), first, { refused: false, headers: openai(60, 60) })
    expect(budget.snapshot(clock.now()).requests?.level).toBe(5)
  })

  it('gives a refused call back, and a longer window announced by its reset is believed', () => {
    const clock = fakeClock()
    const budget = new RateBudget()
    const a = budget.reserve(clock.now())
    budget.settle(clock.now(), a, { refused: false, headers: openai(100, 50) })
    const b = budget.reserve(clock.now())
    expect(budget.snapshot(clock.now()).requests?.level).toBe(49)
    budget.settle(clock.now(), b, { refused: true })
    expect(budget.snapshot(clock.now()).requests?.level).toBe(50)
    // 100 a day: 50 used, full again in 12 hours, not in a minute.
    const c = budget.reserve(clock.now())
    budget.settle(clock.now(), c, { refused: false, headers: openai(100, 49, '12h0m0s') })
    expect(budget.snapshot(clock.now()).requests?.perMinute).toBeCloseTo(51 / 720, 5)
  })
})

describe('RateBudget: tokens settled with real usage', () => {
  const tokens = (limit: number, remaining: number) => ({
    'anthropic-ratelimit-input-tokens-limit': String(limit),
    'anthropic-ratelimit-input-tokens-remaining': String(remaining),
  })

  it('charges the estimate at admission and corrects it with the usage', () => {
    const clock = fakeClock()
    const budget = new RateBudget()
    const estimate: CallEstimate = { inputTokens: 1000, outputTokens: 0 }
    const first = budget.reserve(clock.now(), estimate)
    budget.settle(clock.now(), first, {
      refused: false,
      headers: tokens(60_000, 50_000),
      usage: { inputTokens: 1000, outputTokens: 10 },
    })
    const level = () => budget.snapshot(clock.now())['input-tokens']?.level
    expect(level()).toBe(50_000)
    const second = budget.reserve(clock.now(), estimate)
    expect(level()).toBe(49_000)
    // No headers on this answer: the usage alone says it cost twice the estimate, and its 10
    // tokens of output (no output-token budget is announced beside it: counted-output.ts).
    budget.settle(clock.now(), second, {
      refused: false,
      usage: { inputTokens: 2000, outputTokens: 10 },
    })
    expect(level()).toBe(47_990)
  })

  it('keeps estimates honest: a caller that under-estimates is charged what it really spends', () => {
    const clock = fakeClock()
    const budget = new RateBudget()
    const r0 = budget.reserve(clock.now(), { inputTokens: 100 })
    budget.settle(clock.now(), r0, { refused: false, headers: tokens(6_000_000, 6_000_000) })
    for (let i = 0; i < 50; i++) {
      const r = budget.reserve(clock.now(), { inputTokens: 100 })
      budget.settle(clock.now(), r, {
        refused: false,
        usage: { inputTokens: 200, outputTokens: 0 },
      })
    }
    const before = budget.snapshot(clock.now())['input-tokens']?.level ?? 0
    budget.reserve(clock.now(), { inputTokens: 100 })
    const charged = before - (budget.snapshot(clock.now())['input-tokens']?.level ?? 0)
    expect(charged).toBeGreaterThan(190)
    expect(charged).toBeLessThan(201)
  })

  it('a call bigger than the whole budget waits for a full bucket instead of forever', () => {
    const clock = fakeClock()
    const budget = new RateBudget()
    const r = budget.reserve(clock.now(), { inputTokens: 10 })
    budget.settle(clock.now(), r, { refused: false, headers: tokens(6000, 0) })
    expect(budget.delayMs(clock.now(), { inputTokens: 50_000 })).toBe(60_000)
  })
})
