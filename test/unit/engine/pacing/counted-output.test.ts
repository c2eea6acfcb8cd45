// What an input-token budget counts, learned from its `remaining` on a fake clock: a provider
// that counts the output in the bucket its `input-tokens` headers announce, and one that does not
// (a tenant spending beside us, readings current or one answer late).
import { describe, expect, it } from 'vitest'
import { CountedOutput } from '../../../../src/main/engine/pacing/counted-output'
import { RateBudget } from '../../../../src/main/engine/pacing/rate-budget'
import { readBudgetHeaders } from '../../../../src/main/engine/pacing/budget-reading'
import type { FakeClock } from '../../../helpers/clock'
import { fakeClock } from '../../../helpers/clock'

/** Deterministic draws in [0, 1). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** Calls of 200-4000 input tokens (log-uniform) and 50-600 output (MAX_TOKENS). */
function callOf(r: () => number): { input: number; output: number } {
  return { input: Math.round(200 * 20 ** r()), output: Math.round(50 + 550 * r()) }
}

/** What each call asks for at most (`max_tokens`): its output is 50 to this. */
const MAX_TOKENS = 600

/**
 * What the bucket counts of a call's output: what was used, none, its max_tokens reserved and
 * kept (OpenAI), or reserved and the unused part given back at the answer (`refunded`).
 */
type Counts = boolean | 'reserved' | 'refunded'

/**
 * An Anthropic-style provider: `anthropic-ratelimit-input-tokens-*` over a bucket refilled at the
 * limit a minute less a tenant's share, holding `burst` tokens, that counts each call's input and
 * (`countsOutput`) its output, or the output it reserves (`max_tokens`, kept). `late`: each answer
 * carries the reading of the call before. `output`: an `output-tokens` budget is announced beside.
 */
class Provider {
  minute: number
  window: number
  #at: number
  #previous: Record<string, string> | null = null
  constructor(
    readonly limit: number,
    readonly burst: number,
    readonly o: {
      countsOutput: Counts
      tenant: number
      late: boolean
      output?: boolean
      openai?: boolean
    },
    private clock: FakeClock,
  ) {
    this.minute = limit
    this.window = burst
    this.#at = clock.now()
  }
  take(call: { input: number; output: number }): {
    accepted: boolean
    headers: Record<string, string>
  } {
    const now = this.clock.now()
    const refill = ((this.limit * (1 - this.o.tenant)) / 60_000) * (now - this.#at)
    this.#at = now
    this.minute = Math.min(this.limit, this.minute + refill)
    this.window = Math.min(this.burst, this.window + refill)
    const counts = this.o.countsOutput
    const reserves = counts === 'reserved' || counts === 'refunded'
    const cost = call.input + (reserves ? MAX_TOKENS : counts ? call.output : 0)
    const accepted = this.window >= Math.min(cost, this.burst)
    if (accepted) {
      this.minute -= cost
      this.window -= cost
    }
    const remaining = String(Math.max(0, Math.floor(this.minute)))
    const headers: Record<string, string> = this.o.openai
      ? {
          'x-ratelimit-limit-tokens': String(this.limit),
          'x-ratelimit-remaining-tokens': remaining,
          'x-ratelimit-reset-tokens': '1s',
        }
      : {
          'anthropic-ratelimit-input-tokens-limit': String(this.limit),
          'anthropic-ratelimit-input-tokens-remaining': remaining,
          'anthropic-ratelimit-input-tokens-reset': new Date(now + 1000).toISOString(),
        }
    if (this.o.output) {
      headers['anthropic-ratelimit-output-tokens-limit'] = String(this.limit)
      headers['anthropic-ratelimit-output-tokens-remaining'] = String(this.limit)
      headers['anthropic-ratelimit-output-tokens-reset'] = new Date(now + 1000).toISOString()
    }
    if (!this.o.late) return { accepted, headers }
    const late = this.#previous ?? headers
    this.#previous = headers
    return { accepted, headers: late }
  }
  /** The unused part of a reservation back, at the answer (what a full bucket cannot hold is lost). */
  giveBack(tokens: number): void {
    this.minute = Math.min(this.limit, this.minute + tokens)
    this.window = Math.min(this.burst, this.window + tokens)
  }
}

/**
 * Feeds a learner readings of calls sent every `spacingMs` (`jitter`: between half and one and a
 * half of it), each answered before the next.
 */
function learn(
  o: { countsOutput: Counts; tenant: number; late: boolean },
  spacingMs: number,
  seed = 7,
  jitter = false,
) {
  const clock = fakeClock()
  const provider = new Provider(60_000, 60_000, o, clock)
  const counted = new CountedOutput()
  const r = lcg(seed)
  const shares: number[] = []
  const kept: boolean[] = []
  let refunded = 0
  for (let seq = 0; seq < 60; seq++) {
    clock.advance(jitter ? spacingMs * (0.5 + r()) : spacingMs)
    const call = callOf(r)
    const answer = provider.take(call)
    const before = refunded
    // Answered before the next call is sent: what it did not use back now, where it is given back.
    if (answer.accepted && o.countsOutput === 'refunded')
      provider.giveBack(MAX_TOKENS - call.output)
    if (answer.accepted) refunded += MAX_TOKENS - call.output
    const reading = readBudgetHeaders(answer.headers, clock.now())?.['input-tokens']
    if (!reading) throw new Error('no reading')
    counted.read({
      seq,
      sentAt: clock.now(),
      remaining: reading.remaining,
      limit: reading.limit,
      ratePerMs: reading.limit / 60_000,
      input: answer.accepted ? call.input : 0,
      output: answer.accepted ? call.output : 0,
      reserved: answer.accepted ? MAX_TOKENS : 0,
      refunded: before,
    })
    shares.push(counted.outputShare)
    kept.push(counted.kept)
  }
  return Object.assign(shares, { kept })
}

describe('CountedOutput: what an input-token budget counts', () => {
  it('learns that the output is counted, from readings current or one answer late', () => {
    // About 1,600 tokens a call every 1.5 s: about the limit of 60,000 a minute.
    for (const late of [false, true]) {
      const shares = learn({ countsOutput: true, tenant: 0, late }, 1500)
      expect(shares.slice(0, 5)).toEqual([0, 0, 0, 0, 0])
      expect(shares.slice(15)).toEqual(new Array(45).fill(1))
    }
  })

  it('learns that a bucket counts the max_tokens it reserves, not the output used', () => {
    // The deficit beyond the input is 600 a call whatever was used: fitted on the output used
    // alone, it explained about half of what the time leaves, and the charge came and went.
    for (const late of [false, true]) {
      for (const tenant of [0, 0.3]) {
        for (const seed of [1, 2, 3, 4]) {
          const shares = learn({ countsOutput: 'reserved', tenant, late }, 1500, seed, true)
          expect(shares.slice(20)).toEqual(new Array(40).fill(1))
          // Kept, not given back: read so where the tenant leaves the fit near exact.
          if (tenant === 0) expect(shares.kept.slice(20)).toEqual(new Array(40).fill(true))
        }
      }
    }
  })

  it('learns that a bucket counts what it reserved less what the answers gave back', () => {
    // A call a second (about 96,000 tokens a minute reserved, so the bucket is not full and
    // keeps what is given back): each deficit beyond the input is the call before's output (its
    // answer gave the rest of its 600 back). Fitted on the output used or reserved alone it was
    // noise, and the output was not charged.
    for (const late of [false, true]) {
      for (const seed of [1, 2, 3, 4]) {
        const shares = learn({ countsOutput: 'refunded', tenant: 0, late }, 1000, seed, true)
        expect(shares.slice(20)).toEqual(new Array(40).fill(1))
        expect(shares.kept.every((k) => !k)).toBe(true)
      }
    }
    // Nor read as keeping it where the answers' output is counted as used.
    expect(learn({ countsOutput: true, tenant: 0, late: false }, 1500, 1, true).kept).not.toContain(
      true,
    )
  })

  it('learns it later with a tenant spending beside us (its spend is noise of the size of an output)', () => {
    for (const late of [false, true]) {
      for (const tenant of [0.3, 0.45]) {
        for (const seed of [1, 2, 3, 4]) {
          const shares = learn({ countsOutput: true, tenant, late }, 1500, seed)
          expect(shares.slice(35)).toEqual(new Array(25).fill(1))
        }
      }
    }
  })

  it('does not charge the output where only the input is counted, a tenant spending beside us', () => {
    for (const late of [false, true]) {
      for (const tenant of [0, 0.3, 0.45]) {
        for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
          const shares = learn({ countsOutput: false, tenant, late }, 1500, seed)
          expect(shares.every((s) => s === 0)).toBe(true)
        }
      }
    }
  })
})

/**
 * A RateBudget paces calls (four at most in flight, answered in 400 ms) into a provider of 60,000
 * tokens a minute enforced per call (a bucket of 1,300 tokens) for `ms`; over the last `lastMs`,
 * the calls sent and refused, and what the bucket counted of those it served.
 */
function race(
  o: { countsOutput: Counts; late: boolean; output?: boolean; burst?: number; openai?: boolean },
  ms: number,
  lastMs: number,
) {
  const clock = fakeClock()
  const provider = new Provider(60_000, o.burst ?? 1300, { tenant: 0, ...o }, clock)
  const budget = new RateBudget()
  const r = lcg(11)
  const pending: { at: number; settle: () => void }[] = []
  let refused = 0
  let sent = 0
  let counted = 0
  let next = callOf(r)
  const estimate = () => ({ inputTokens: next.input, outputTokens: MAX_TOKENS })
  const stop = clock.now() + ms
  while (clock.now() < stop) {
    while (pending.length > 0 && (pending[0]?.at ?? Infinity) <= clock.now()) {
      pending.shift()?.settle()
    }
    const wait = pending.length >= 4 ? Infinity : budget.delayMs(clock.now(), estimate())
    if (wait === 0) {
      const call = next
      const reservation = budget.reserve(clock.now(), estimate())
      const answer = provider.take(call)
      if (clock.now() >= stop - lastMs) {
        sent++
        if (!answer.accepted) refused++
        else {
          const c = o.countsOutput
          counted += call.input + (c === 'reserved' ? MAX_TOKENS : c ? call.output : 0)
        }
      }
      next = callOf(r)
      pending.push({
        at: clock.now() + 400,
        settle: () => {
          const now = clock.now()
          if (answer.accepted && o.countsOutput === 'refunded') {
            provider.giveBack(MAX_TOKENS - call.output)
          }
          budget.settle(now, reservation, {
            refused: !answer.accepted,
            headers: answer.headers,
            ...(answer.accepted && {
              usage: { inputTokens: call.input, outputTokens: call.output },
            }),
          })
          // As partition-pacing.ts does: a refusal the headers do not explain is the pace's.
          if (!answer.accepted) {
            budget.refusedUnexplained(
              reservation.sentAt,
              now,
              readBudgetHeaders(answer.headers, now),
            )
          }
        },
      })
      continue
    }
    clock.advance(Math.max(1, Math.min(wait, (pending[0]?.at ?? Infinity) - clock.now())))
  }
  return { sent, refused, counted, budget }
}

describe('RateBudget: an input-token bucket that counts the output', () => {
  it('paces the output too once learned: a bucket of about a call is used, not cut for', () => {
    const { sent, refused, counted } = race({ countsOutput: true, late: true }, 180_000, 120_000)
    // Over the last two minutes (120,000 tokens of refill): paced on the input alone, each
    // refusal cut the share that is ours and 86,291 were served (57 calls, 4 refused).
    expect(counted).toBeGreaterThan(0.8 * 120_000)
    expect(refused / sent).toBeLessThan(0.07)
  })

  it('charges the output from the first answer where no output-token budget is announced', () => {
    const first = race({ countsOutput: true, late: false }, 1000, 1000)
    expect(first.sent).toBeGreaterThan(0)
    expect(first.budget.costOf({ inputTokens: 1000, outputTokens: 600 })['input-tokens']).toBe(1600)
    // Over the first 10 s (10,000 tokens of refill and a bucket of 1,300): input alone until six
    // readings said otherwise, 5,570 were counted of the calls served, 5 of 11 refused.
    const { counted } = race({ countsOutput: true, late: false }, 10_000, 10_000)
    expect(counted).toBeGreaterThan(0.8 * 10_000)
  })

  it('gives nothing back that the bucket keeps: a bucket of about a call reserving max_tokens', () => {
    for (const late of [false, true]) {
      const { sent, refused, counted } = race({ countsOutput: 'reserved', late }, 180_000, 120_000)
      // Over the last two minutes: with the unused output given back to the pace as well, 0.646
      // of the refill was used, 4 of 45 calls refused.
      expect(counted).toBeGreaterThan(0.85 * 120_000)
      expect(refused / sent).toBeLessThan(0.07)
    }
  })

  it('gives nothing back that a token budget in OpenAI headers keeps (input and output)', () => {
    for (const burst of [1300, 5000]) {
      const o = { countsOutput: 'reserved', late: false, burst, openai: true } as const
      const { sent, refused, counted } = race(o, 180_000, 120_000)
      // With the unused output given back to the pace: 0.646 and 0.860 of the refill used, 4 of
      // 45 and of 61 calls refused.
      expect(counted).toBeGreaterThan(0.9 * 120_000)
      expect(refused / sent).toBeLessThan(0.05)
    }
  })

  it('gives back the unused output where the bucket does (a burst of five seconds)', () => {
    for (const openai of [false, true]) {
      const o = { countsOutput: 'refunded', late: openai, burst: 5000, openai } as const
      const { counted } = race(o, 180_000, 120_000)
      // Read as kept, 0.796 of the refill was used.
      expect(counted).toBeGreaterThan(0.85 * 120_000)
    }
  })

  it('charges only the input where an output-token budget is announced beside it', () => {
    const first = race({ countsOutput: false, late: false, output: true }, 1000, 1000)
    expect(first.sent).toBeGreaterThan(0)
    expect(first.budget.costOf({ inputTokens: 1000, outputTokens: 600 })['input-tokens']).toBe(1000)
    const { budget } = race({ countsOutput: false, late: false, output: true }, 60_000, 60_000)
    expect(budget.costOf({ inputTokens: 1000, outputTokens: 600 })['input-tokens']).toBe(1000)
  })
})
