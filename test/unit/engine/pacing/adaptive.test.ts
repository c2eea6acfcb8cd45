import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SeedAimd } from '../../../../src/main/engine/pacing/aimd'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import type { LimitChange, Outcome } from '../../../../src/main/engine/core/types'
import type { FakeClock } from '../../../helpers/clock'
import { fakeClock } from '../../../helpers/clock'

/** Feeds one outcome of a call sent at `sentAt` with `inflight` calls out, at the clock's now. */
function feed(
  c: AdaptiveController,
  clock: FakeClock,
  outcome: Outcome,
  sentAt: number,
  inflight: number,
): LimitChange | null {
  return c.onOutcome(outcome, { now: clock.now(), sentAt, inflight })
}

/**
 * Used successes of calls sent now, answered `ms` later, until the limit stops moving. Calls sent
 * in the very millisecond of a cut belong to the old window: advance the clock before this.
 */
function settle(c: AdaptiveController, clock: FakeClock, ms = 100): LimitChange[] {
  const changes: LimitChange[] = []
  for (let i = 0; i < 100; i++) {
    const sentAt = clock.now()
    clock.advance(ms)
    const change = feed(c, clock, 'ok', sentAt, c.concurrency)
    if (!change) return changes
    changes.push(change)
  }
  throw new Error('the limit never settled')
}

/**
 * A controller that learned a ceiling of 5 and holds 4: a 429 at 5, then recovery. Its calls take
 * `rttMs` (the round trip its probes wait in).
 */
function heldAtFour(clock: FakeClock, options = {}, rttMs = 10) {
  const c = new AdaptiveController('p', { initial: 5 }, options)
  const sentAt = clock.now()
  clock.advance(100)
  feed(c, clock, 'throttled', sentAt, 5)
  clock.advance(1)
  settle(c, clock, rttMs)
  // A full window at 4 makes 4 the level that held.
  for (let i = 0; i < 4; i++) {
    const s = clock.now()
    clock.advance(rttMs)
    feed(c, clock, 'ok', s, 4)
  }
  return c
}

describe('AdaptiveController: one cut per congestion episode', () => {
  it('a burst of throttles from one window cuts once (the seed cuts once per 429)', () => {
    const clock = fakeClock()
    const adaptive = new AdaptiveController('p', { initial: 8 })
    const seed = new SeedAimd('p', { initial: 8 })
    const sentAt = clock.now()
    clock.advance(200)
    const changes = []
    // Four of the eight are refused, four are served (a refused call frees no slot: refused-slot.test.ts).
    for (let inflight = 8; inflight >= 5; inflight--) {
      changes.push(feed(adaptive, clock, 'throttled', sentAt, inflight))
      seed.onOutcome('throttled', { now: clock.now(), sentAt, inflight })
    }
    expect(changes.filter(Boolean)).toMatchObject([{ from: 8, to: 4, reason: 'throttle x0.5' }])
    expect(adaptive.concurrency).toBe(4)
    expect(seed.concurrency).toBe(1)
  })

  it('ignores a throttle answering a call sent before the last cut, not one sent after', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 8 })
    const before = clock.now()
    clock.advance(100)
    expect(feed(c, clock, 'throttled', before, 8)).toMatchObject({ to: 4 })
    const cutAt = clock.now()
    clock.advance(500)
    expect(feed(c, clock, 'throttled', before, 6)).toBeNull()
    expect(feed(c, clock, 'throttled', cutAt, 6)).toBeNull()
    expect(c.limit).toBe(4)
    const after = cutAt + 1
    expect(feed(c, clock, 'throttled', after, 5)).toMatchObject({ from: 4, to: 2 })
  })

  it('the rest of a burst lowers the remembered ceiling to where refusals began', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 10 })
    const sentAt = clock.now()
    clock.advance(20)
    feed(c, clock, 'throttled', sentAt, 10)
    expect(c.memory.ceiling).toBe(10)
    feed(c, clock, 'throttled', sentAt, 9)
    expect(c.memory.ceiling).toBe(9)
    expect(c.limit).toBe(5)
  })

  it('successes of calls sent before the cut do not grow the limit', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 8 })
    const before = clock.now()
    clock.advance(100)
    feed(c, clock, 'throttled', before, 8)
    clock.advance(100)
    for (let i = 0; i < 5; i++) expect(feed(c, clock, 'ok', before, 7 - i)).toBeNull()
    expect(c.limit).toBe(4)
    const after = clock.now()
    clock.advance(100)
    expect(feed(c, clock, 'ok', after, 4)).toMatchObject({ from: 4, to: 4.5 })
  })
})

describe('AdaptiveController: growth', () => {
  it('grows only while the limit is used: in flight within one of it', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 8 })
    const sentAt = clock.now()
    clock.advance(100)
    expect(feed(c, clock, 'ok', sentAt, 1)).toBeNull()
    expect(feed(c, clock, 'ok', sentAt, 6)).toBeNull()
    expect(c.limit).toBe(8)
    expect(feed(c, clock, 'ok', sentAt, 7)).toMatchObject({ from: 8, to: 9 })
    expect(feed(c, clock, 'ok', sentAt, 9)).toMatchObject({ from: 9, to: 10 })
  })

  it('grows by 1 per success in slow start, by `increase` after the first throttle', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 2, increase: 0.25 })
    const grown = settle(c, clock).slice(0, 3)
    expect(grown.map((x) => [x.to, x.reason])).toEqual([
      [3, 'slow start +1'],
      [4, 'slow start +1'],
      [5, 'slow start +1'],
    ])
    expect(c.memory.slowStart).toBe(true)
    const sentAt = clock.now()
    clock.advance(50)
    feed(c, clock, 'throttled', sentAt, 8)
    expect(c.memory.slowStart).toBe(false)
    clock.advance(1)
    const after = settle(c, clock)
    expect(after[0]).toMatchObject({ to: c.params.max / 2 + 0.25, reason: 'recovery +0.25' })
  })

  it('recovers to just below the ceiling and holds there until a probe is due', () => {
    const clock = fakeClock()
    const c = heldAtFour(clock)
    expect(c.memory).toMatchObject({ ceiling: 5, held: 4, probing: false })
    expect(c.concurrency).toBe(4)
    expect(settle(c, clock)).toEqual([])
  })

  it('never leaves [min, max], whatever the outcomes (property)', () => {
    const outcome = fc.constantFrom<Outcome>(
      'ok',
      'ok',
      'ok',
      'near_limit',
      'throttled',
      'overloaded',
      'timeout',
      'error',
    )
    const step = fc.record({
      outcome,
      back: fc.nat(20_000),
      inflight: fc.nat(20),
      ms: fc.nat(9000),
    })
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const clock = fakeClock()
        const c = new AdaptiveController('p', { min: 2, max: 9, initial: 3 })
        for (const s of steps) {
          clock.advance(s.ms)
          feed(c, clock, s.outcome, clock.now() - s.back, s.inflight)
          if (c.limit < 2 || c.limit > 9 || c.concurrency < 2 || c.concurrency > 9) return false
        }
        return true
      }),
    )
  })
})

describe('AdaptiveController: probes back off where throttles happened', () => {
  it('probes the ceiling after cooldownMs; a refused probe returns to the level that held', () => {
    const clock = fakeClock()
    const c = heldAtFour(clock)
    const { nextProbeAt } = c.memory
    clock.t = nextProbeAt - 1
    expect(settle(c, clock, 0)).toEqual([])
    clock.t = nextProbeAt
    expect(settle(c, clock, 0)).toMatchObject([{ from: 4, to: 5, reason: 'probe 5' }])
    expect(c.memory.probing).toBe(true)
    const sentAt = clock.now()
    clock.advance(20)
    expect(feed(c, clock, 'throttled', sentAt, 5)).toMatchObject({
      from: 5,
      to: 4,
      reason: 'probe refused, back to 4',
    })
    expect(c.memory).toMatchObject({ refusedProbes: 1, held: 4, ceiling: 5 })
  })

  /** Probes until `count` were refused; the waits between each refusal and the next probe. */
  function refusedProbes(c: AdaptiveController, clock: FakeClock, count: number): number[] {
    const waits: number[] = []
    for (let probe = 0; probe < count; probe++) {
      const refusedAt = clock.now()
      clock.t = c.memory.nextProbeAt - 1
      expect(feed(c, clock, 'ok', clock.now() - 1, c.concurrency)).toBeNull()
      clock.t = c.memory.nextProbeAt
      expect(feed(c, clock, 'ok', clock.now() - 1, c.concurrency)).toMatchObject({
        reason: 'probe 5',
      })
      waits.push(clock.now() - refusedAt)
      const sentAt = clock.now()
      clock.advance(10)
      feed(c, clock, 'throttled', sentAt, 5)
    }
    // The first wait counts from the cut that taught the ceiling, the others from each refusal.
    return waits.slice(1)
  }

  it('with round trips longer than the cooldown, each refused probe doubles the cooldown, up to the cap', () => {
    const clock = fakeClock()
    const c = heldAtFour(clock, { maxProbeDoublings: 2 })
    // Round trips of a minute (another worker of the partition measured them): the cooldown's
    // wait is the shorter.
    const state = c.exportState()
    c.importState({ ...state, memory: { ...state.memory!, srtt: 60_000 } })
    const cooldown = c.params.cooldownMs
    expect(refusedProbes(c, clock, 4)).toEqual([2 * cooldown, 4 * cooldown, 4 * cooldown])
  })

  it('with short round trips, a probe comes 5 round trips after a cut, doubling per refused probe up to 40', () => {
    const clock = fakeClock()
    const c = heldAtFour(clock, {}, 200)
    const srtt = c.memory.srtt as number
    expect(srtt).toBeGreaterThan(100)
    expect(srtt).toBeLessThan(250)
    const waits = refusedProbes(c, clock, 6)
    // The probing loop's own successes answer in 1 ms: the smoothed round trip only shrinks, so
    // each wait is at most its multiple of the round trip measured before.
    ;[10, 20, 40, 40, 40].forEach((rtts, i) => {
      expect(waits[i]).toBeLessThanOrEqual(Math.ceil(rtts * srtt))
      expect(waits[i]).toBeGreaterThan(0)
    })
    expect(waits[1]).toBeGreaterThan(waits[0]!)
    // Seconds, not the cooldown's 8 to 16: a capacity that rose is found within them.
    expect(Math.max(...waits)).toBeLessThan(c.params.cooldownMs)
  })

  it('a probe that carries a full window means the capacity rose: growth resumes', () => {
    const clock = fakeClock()
    const c = heldAtFour(clock)
    clock.t = c.memory.nextProbeAt
    expect(feed(c, clock, 'ok', clock.now(), 4)).toMatchObject({ reason: 'probe 5' })
    const sentAt = clock.now()
    clock.advance(100)
    const changes = [1, 2, 3, 4, 5].map(() => feed(c, clock, 'ok', sentAt, 5))
    expect(changes.slice(0, 4)).toEqual([null, null, null, null])
    // Slow start's step up to twice the probed level (probe-regrowth.test.ts).
    expect(changes[4]).toMatchObject({ from: 5, to: 6, reason: 'growth +1' })
    expect(c.memory).toMatchObject({ ceiling: null, held: 5, refusedProbes: 0, probing: false })
  })

  it('a throttle at a level that held is a drop: one multiplicative cut, and it is forgotten', () => {
    const clock = fakeClock()
    const c = heldAtFour(clock)
    const sentAt = clock.now()
    clock.advance(10)
    expect(feed(c, clock, 'throttled', sentAt, 4)).toMatchObject({ from: 4, to: 2 })
    expect(c.memory).toMatchObject({ held: 0, ceiling: 4, refusedProbes: 0 })
  })
})

describe('AdaptiveController: signals kept apart', () => {
  it('503/529 cut the whole way and teach where refusals began; a timeout cuts half as deep and teaches nothing', () => {
    const clock = fakeClock()
    const overloaded = new AdaptiveController('p', { initial: 8 })
    const timeout = new AdaptiveController('p', { initial: 8 })
    const throttled = new AdaptiveController('p', { initial: 8 })
    const sentAt = clock.now()
    clock.advance(100)
    expect(feed(overloaded, clock, 'overloaded', sentAt, 8)).toMatchObject({
      to: 4,
      reason: 'overloaded x0.5',
    })
    expect(feed(timeout, clock, 'timeout', sentAt, 8)).toMatchObject({
      to: 6,
      reason: 'timeout x0.75',
    })
    feed(throttled, clock, 'throttled', sentAt, 8)
    // An overloaded server refused at 8: recovery holds below it instead of sawing up to it.
    expect(overloaded.memory.ceiling).toBe(8)
    expect(timeout.memory.ceiling).toBeNull()
    expect(throttled.memory.ceiling).toBe(8)
  })

  it('other errors and near_limit never move the limit nor change what was learned', () => {
    const outcome = fc.constantFrom<Outcome>('ok', 'throttled', 'overloaded', 'timeout')
    const step = fc.record({ outcome, inflight: fc.nat(12), ms: fc.nat(5000), noise: fc.nat(3) })
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        const run = (withNoise: boolean) => {
          const clock = fakeClock()
          const c = new AdaptiveController('p', { initial: 4 })
          const limits: number[] = []
          for (const s of steps) {
            const sentAt = clock.now()
            clock.advance(s.ms)
            if (withNoise) {
              for (let i = 0; i < s.noise; i++) {
                expect(
                  feed(c, clock, i % 2 ? 'error' : 'near_limit', sentAt, s.inflight),
                ).toBeNull()
              }
            }
            feed(c, clock, s.outcome, sentAt, s.inflight)
            limits.push(c.limit)
          }
          return { limits, memory: c.memory }
        }
        expect(run(true)).toEqual(run(false))
      }),
      { numRuns: 100 },
    )
  })
})

describe('AdaptiveController: params', () => {
  it("a changed `initial` is the operator's restart: the limit moves and memory is cleared", () => {
    const clock = fakeClock()
    const c = heldAtFour(clock)
    expect(c.setParams({ max: 20 }, clock.now())).toBeNull()
    expect(c.memory.ceiling).toBe(5)
    expect(c.setParams({ initial: 10 }, clock.now())).toMatchObject({
      from: 4,
      to: 10,
      reason: 'operator',
    })
    expect(c.memory).toMatchObject({ slowStart: true, ceiling: null, held: 0, refusedProbes: 0 })
    expect(c.setParams({ max: 6 }, clock.now())).toMatchObject({ to: 6 })
    expect(() => c.setParams({ decrease: 1 }, clock.now())).toThrow(/`decrease`/)
    expect(() => new AdaptiveController('p', {}, { maxProbeDoublings: -1 })).toThrow(
      /`maxProbeDoublings`/,
    )
  })
})
