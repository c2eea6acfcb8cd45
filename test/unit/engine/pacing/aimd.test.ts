import { describe, expect, it } from 'vitest'
import { SeedAimd, mergeAimdParams } from '../../../../src/main/engine/pacing/aimd'
import type { Outcome } from '../../../../src/main/engine/core/types'
import { SEED_AIMD } from '../../../../src/main/engine/core/types'

const ctx = (now: number) => ({ now, sentAt: now, inflight: 1 })

function feed(c: SeedAimd, outcome: Outcome, times: number, now: number): void {
  for (let i = 0; i < times; i++) c.onOutcome(outcome, ctx(now))
}

describe('SeedAimd: parity with seed memo 004', () => {
  it('starts from the seed defaults', () => {
    const c = new SeedAimd('sim:sim-small')
    expect(c.params).toEqual(SEED_AIMD)
    expect(c.limit).toBe(2)
    expect(c.concurrency).toBe(2)
  })

  it('grows +0.5 per success and caps at max: 20 successes from 2.0 reach 12', () => {
    const c = new SeedAimd('p')
    const seen: number[] = []
    for (let i = 0; i < 20; i++) {
      c.onOutcome('ok', ctx(1000))
      seen.push(c.limit)
    }
    expect(seen.slice(0, 4)).toEqual([2.5, 3, 3.5, 4])
    expect(seen[19]).toBe(12)
    expect(Math.max(...seen)).toBe(12)
  })

  it('halves on a throttle, then holds for the 8 s cooldown, then grows again', () => {
    const c = new SeedAimd('p')
    feed(c, 'ok', 20, 0)
    const cut = c.onOutcome('throttled', ctx(10_000))
    expect(cut).toEqual({
      partition: 'p',
      ts: 10_000,
      from: 12,
      to: 6,
      reason: 'throttled x0.5',
      cause: 'throttle',
    })
    expect(c.onOutcome('ok', ctx(10_001))).toBeNull()
    expect(c.onOutcome('ok', ctx(17_999))).toBeNull()
    expect(c.limit).toBe(6)
    // Seed: `monotonic() - last < cooldown` holds, so exactly 8 s later growth resumes.
    expect(c.onOutcome('ok', ctx(18_000))).toEqual({
      partition: 'p',
      ts: 18_000,
      from: 6,
      to: 6.5,
      reason: 'success +0.5',
      cause: 'growth',
    })
  })

  it('does not start in a cooldown (the seed starts _last_decrease long ago)', () => {
    const c = new SeedAimd('p')
    expect(c.onOutcome('ok', ctx(0))?.to).toBe(2.5)
  })

  it('floors at min after repeated throttles', () => {
    const c = new SeedAimd('p')
    const limits: number[] = []
    for (let i = 0; i < 5; i++) {
      c.onOutcome('throttled', ctx(i))
      limits.push(c.limit)
    }
    expect(limits).toEqual([1, 1, 1, 1, 1])
    expect(c.concurrency).toBe(1)
  })

  it('a throttle at the floor changes nothing but still restarts the cooldown', () => {
    const c = new SeedAimd('p', { initial: 1 })
    expect(c.onOutcome('throttled', ctx(0))).toBeNull()
    expect(c.onOutcome('ok', ctx(7999))).toBeNull()
    expect(c.limit).toBe(1)
  })

  it('concurrency is floor(limit), never below min', () => {
    const c = new SeedAimd('p', { initial: 2 })
    c.onOutcome('ok', ctx(0))
    expect(c.limit).toBe(2.5)
    expect(c.concurrency).toBe(2)
    c.onOutcome('ok', ctx(0))
    expect(c.concurrency).toBe(3)
    const high = new SeedAimd('p', { min: 3, initial: 3.5 })
    high.onOutcome('throttled', ctx(0))
    expect(high.limit).toBe(3)
    expect(high.concurrency).toBe(3)
  })

  it('near_limit holds the limit, in and out of the cooldown', () => {
    const c = new SeedAimd('p', { initial: 5 })
    expect(c.onOutcome('near_limit', ctx(0))).toBeNull()
    expect(c.limit).toBe(5)
    c.onOutcome('throttled', ctx(1))
    expect(c.onOutcome('near_limit', ctx(100_000))).toBeNull()
    expect(c.limit).toBe(2.5)
  })

  it('overloaded and timeout take the throttle path; error changes nothing (departure)', () => {
    const o = new SeedAimd('p', { initial: 8 })
    expect(o.onOutcome('overloaded', ctx(0))?.reason).toBe('overloaded x0.5')
    expect(o.limit).toBe(4)
    expect(o.onOutcome('timeout', ctx(0))?.reason).toBe('timeout x0.5')
    expect(o.limit).toBe(2)
    const e = new SeedAimd('p', { initial: 8 })
    // The seed's classify would have called a 500 a success and grown the limit.
    expect(e.onOutcome('error', ctx(0))).toBeNull()
    expect(e.limit).toBe(8)
    expect(e.onOutcome('ok', ctx(1))?.to).toBe(8.5)
  })

  it('reproduces the seed weakness: 8 parallel 429s take 12 to 1', () => {
    // Why the improved controller exists: all 8 calls were sent before the first cut, so they are
    // one congestion episode and TCP NewReno would cut once (12 -> 6). The seed cuts 8 times.
    const c = new SeedAimd('p', { initial: 12 })
    const sentAt = 0
    for (let i = 0; i < 8; i++) c.onOutcome('throttled', { now: 100 + i, sentAt, inflight: 8 - i })
    expect(c.limit).toBe(1)
    expect(c.concurrency).toBe(1)
  })

  it('rejects an unknown outcome', () => {
    const c = new SeedAimd('p')
    expect(() => c.onOutcome('great' as Outcome, ctx(0))).toThrow(/great/)
  })
})

describe('SeedAimd.setParams', () => {
  it('clamps the current limit into a new [min, max]', () => {
    const c = new SeedAimd('p', { initial: 10 })
    expect(c.setParams({ max: 4 }, 5)).toEqual({
      partition: 'p',
      ts: 5,
      from: 10,
      to: 4,
      reason: 'operator',
      cause: 'operator',
    })
    expect(c.concurrency).toBe(4)
    expect(c.setParams({ min: 6, max: 12 }, 6)?.to).toBe(6)
    // Raising max alone only lifts the cap: the limit still has to grow into it.
    expect(c.setParams({ max: 20 }, 7)).toBeNull()
    expect(c.limit).toBe(6)
  })

  it('a changed initial restarts the limit from it; an unchanged one does not', () => {
    const c = new SeedAimd('p')
    feed(c, 'ok', 6, 0)
    expect(c.limit).toBe(5)
    expect(c.setParams({ initial: 2 }, 1)).toBeNull()
    expect(c.limit).toBe(5)
    expect(c.setParams({ initial: 9 }, 1)?.to).toBe(9)
    expect(c.params.initial).toBe(9)
  })

  it('applies new increase/decrease/cooldown at once', () => {
    const c = new SeedAimd('p', { initial: 4 })
    c.setParams({ increase: 1, decrease: 0.75, cooldownMs: 100 }, 0)
    expect(c.onOutcome('ok', ctx(0))?.reason).toBe('success +1')
    expect(c.limit).toBe(5)
    expect(c.onOutcome('throttled', ctx(10))?.to).toBe(3.75)
    expect(c.onOutcome('ok', ctx(109))).toBeNull()
    expect(c.onOutcome('ok', ctx(110))?.to).toBe(4.75)
  })

  it('clamps an inherited initial that falls outside the new range', () => {
    const c = new SeedAimd('p')
    c.setParams({ min: 4 }, 0)
    expect(c.params.initial).toBe(4)
    expect(c.limit).toBe(4)
  })

  it.each([
    [{ min: 0 }, /`min`.*got `0`/],
    [{ min: 1.5 }, /`min`.*got `1.5`/],
    [{ max: 0.5 }, /`max`.*got `0.5`/],
    [{ decrease: 1 }, /`decrease`.*got `1`/],
    [{ decrease: 0 }, /`decrease`.*got `0`/],
    [{ increase: 0 }, /`increase`.*got `0`/],
    [{ increase: -1 }, /`increase`.*got `-1`/],
    [{ cooldownMs: -1 }, /`cooldownMs`.*got `-1`/],
    [{ initial: 13 }, /`initial`.*got `13`/],
    [{ initial: 0.5 }, /`initial`.*got `0.5`/],
    [{ nearLimitRemaining: -1 }, /`nearLimitRemaining`.*got `-1`/],
    [{ max: Number.NaN }, /`max`.*got `NaN`/],
    [{ increase: '1' }, /`increase`.*got `"1"`/],
    [{ speed: 3 }, /`speed`/],
  ])('rejects %o with a TypeError naming the field', (patch, message) => {
    const c = new SeedAimd('p')
    const before = c.params
    expect(() => c.setParams(patch as never, 0)).toThrow(TypeError)
    expect(() => c.setParams(patch as never, 0)).toThrow(message)
    expect(c.params).toEqual(before)
    expect(() => new SeedAimd('p', patch as never)).toThrow(message)
  })

  it('mergeAimdParams ignores undefined fields', () => {
    expect(mergeAimdParams(SEED_AIMD, { max: undefined })).toEqual(SEED_AIMD)
  })
})
