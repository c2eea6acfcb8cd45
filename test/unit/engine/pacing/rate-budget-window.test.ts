// The announced budget against a provider that enforces it over a shorter window, with a tenant,
// on a fake clock: what a refusal shows of the window, the room lent from then on, and what we
// spent read as the provider counted it.
import { describe, expect, it } from 'vitest'
import { RateBudget } from '../../../../src/main/engine/pacing/rate-budget'
import { readBudgetHeaders } from '../../../../src/main/engine/pacing/budget-reading'
import type { FakeClock } from '../../../helpers/clock'
import { fakeClock } from '../../../helpers/clock'

/**
 * Both buckets a provider keeps: the minute it announces (OpenAI headers) and the shorter window
 * it enforces, refilled alike at the limit a minute less what a tenant takes, each call taken
 * from both. A call is refused when the window enforced has less than it.
 */
class Provider {
  minute: number
  window: number
  #at: number
  constructor(
    readonly dim: 'requests' | 'tokens',
    readonly limit: number,
    readonly windowMs: number,
    readonly tenant: number,
    private clock: FakeClock,
  ) {
    this.minute = limit
    this.window = (limit * windowMs) / 60_000
    this.#at = clock.now()
  }
  take(cost: number): { accepted: boolean; headers: Record<string, string> } {
    const now = this.clock.now()
    const refill = ((this.limit * (1 - this.tenant)) / 60_000) * (now - this.#at)
    this.#at = now
    this.minute = Math.min(this.limit, this.minute + refill)
    this.window = Math.min((this.limit * this.windowMs) / 60_000, this.window + refill)
    const accepted = this.window >= cost
    if (accepted) {
      this.minute -= cost
      this.window -= cost
    }
    const d = this.dim
    return {
      accepted,
      headers: {
        [`x-ratelimit-limit-${d}`]: String(this.limit),
        [`x-ratelimit-remaining-${d}`]: String(Math.max(0, Math.floor(this.minute))),
        [`x-ratelimit-reset-${d}`]: '1s',
      },
    }
  }
}

/**
 * Calls sent as soon as the budget admits them (at most 50 in flight), each answered `latencyMs`
 * later; a call estimated at `estimate` costs the provider `cost`. Counts per stretch of time.
 */
function drive(
  budget: RateBudget,
  provider: Provider,
  clock: FakeClock,
  ms: number,
  call: { estimate: { inputTokens: number; outputTokens: number }; input: number; output: number },
  latencyMs = 300,
) {
  const start = clock.now()
  const pending: { at: number; settle: () => void }[] = []
  let sent = 0
  let refused = 0
  let spent = 0
  while (clock.now() - start < ms) {
    while (pending.length > 0 && (pending[0]?.at ?? Infinity) <= clock.now()) {
      pending.shift()?.settle()
    }
    const wait = pending.length >= 50 ? Infinity : budget.delayMs(clock.now(), call.estimate)
    if (wait === 0) {
      const reservation = budget.reserve(clock.now(), call.estimate)
      const cost = provider.dim === 'requests' ? 1 : call.input + call.output
      const answer = provider.take(cost)
      sent++
      if (answer.accepted) spent += cost
      else refused++
      const usage = { inputTokens: call.input, outputTokens: call.output }
      pending.push({
        at: clock.now() + latencyMs,
        settle: () => {
          const now = clock.now()
          budget.settle(now, reservation, {
            refused: !answer.accepted,
            headers: answer.headers,
            ...(answer.accepted && { usage }),
          })
          if (answer.accepted) return
          // As partition-pacing.ts does: a refusal the budget does not explain narrows the pace.
          const reading = readBudgetHeaders(answer.headers, now)
          const r = reading?.[provider.dim]
          if (r && r.remaining >= Math.max(1, reservation.cost[provider.dim])) {
            budget.refusedUnexplained(reservation.sentAt, now, reading)
          }
        },
      })
      continue
    }
    clock.advance(Math.max(1, Math.min(wait, (pending[0]?.at ?? Infinity) - clock.now())))
  }
  return { sent, refused, spent }
}

const ONE_REQUEST = { estimate: { inputTokens: 0, outputTokens: 0 }, input: 0, output: 0 }

describe('RateBudget: a window enforced shorter than the minute announced', () => {
  it('a refusal shows the window; from then on it is used to the full, and not refused', () => {
    const clock = fakeClock()
    // 600 a minute announced, enforced over ten seconds (100 at once), a tenant taking 30 %.
    const provider = new Provider('requests', 600, 10_000, 0.3, clock)
    const budget = new RateBudget()
    // The announced minute allows a burst: the window refuses it, and its `remaining` says where.
    const first = drive(budget, provider, clock, 20_000, ONE_REQUEST)
    expect(first.refused).toBeGreaterThan(0)
    expect(budget.pace.burstMs).toBe(0)
    // Refused where the minute was short of about the window (ten seconds of the announced rate).
    const window = budget.sendPace.windowMs
    expect(window).toBeGreaterThan(9_000)
    expect(window).toBeLessThanOrEqual(10_000)
    // Two minutes more: all the window refills (420 a minute) is sent, none of it refused. At
    // the pace alone (0.98 of the rate that is ours) 820 went and the window was left holding 29.
    const after = drive(budget, provider, clock, 120_000, ONE_REQUEST)
    expect(after.refused).toBe(0)
    expect(after.spent).toBeGreaterThanOrEqual(2 * 420 - 5)
    expect(provider.window).toBeLessThan(10)
  })
})

describe('RateBudget: what we spent, as the provider counted it', () => {
  it('a tenant is read at its share though answers use half the max_tokens charged', () => {
    const clock = fakeClock()
    // 600,000 tokens a minute announced and enforced over the minute; a tenant takes 45 %.
    const provider = new Provider('tokens', 600_000, 60_000, 0.45, clock)
    provider.minute = 300_000
    provider.window = 300_000
    const budget = new RateBudget()
    const call = { estimate: { inputTokens: 1000, outputTokens: 600 }, input: 1000, output: 300 }
    drive(budget, provider, clock, 120_000, call)
    // Counted at the charge (1,600 a call where the provider counts 1,300), others read about
    // 0.3 of the rate, not 0.45.
    const ours = budget.pace.perMinute.tokens as number
    expect(ours / 600_000).toBeGreaterThan(0.5)
    expect(ours / 600_000).toBeLessThan(0.6)
  })
})

describe('RateBudget: the minute announced and enforced', () => {
  it('the room the headers show is spent when it is there, not only the rate the pace learned', () => {
    const clock = fakeClock()
    // 1,200,000 tokens a minute, enforced over the minute; a tenant takes 45 % for a minute, then
    // leaves while we are idle for 20 s: the bucket refills at the whole rate, the pace at ours.
    const provider = new Provider('tokens', 1_200_000, 60_000, 0.45, clock)
    const budget = new RateBudget()
    const call = { estimate: { inputTokens: 1000, outputTokens: 300 }, input: 1000, output: 300 }
    drive(budget, provider, clock, 60_000, call, 461)
    ;(provider as unknown as { tenant: number }).tenant = 0
    clock.advance(20_000)
    provider.take(0)
    const room = provider.minute
    expect(room).toBeGreaterThan(300_000)
    // Five seconds: what the bucket held and its refill go, none refused. At the pace's rate
    // alone (what it learned the tenant left us) 200,000 were left in the bucket.
    const after = drive(budget, provider, clock, 5_000, call, 461)
    expect(after.refused).toBe(0)
    expect(provider.minute).toBeLessThan(0.01 * 1_200_000)
    expect(after.spent).toBeGreaterThan(room)
  })
})
