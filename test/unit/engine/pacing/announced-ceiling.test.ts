// The ceiling of calls in flight rises, with an announced budget, to what its rate needs in one
// round trip (Little's law), and beyond as windows at it are carried, on explicit clocks.
import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import {
  announcedCeiling,
  liftedCeiling,
  LIFT_BOUND,
} from '../../../../src/main/engine/pacing/announced-ceiling'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'
import { fakeClock } from '../../../helpers/clock'

/** An announced rate of `perMinute` calls, in bursts (`spread` false) or one call at a time. */
const at = (perMinute: number, spread = false) => ({ callsPerMs: perMinute / 60_000, spread })

describe('announcedCeiling', () => {
  it('is the announced rate times the round trip, with headroom, above the default ceiling', () => {
    // 2,598 requests a minute answered in 1.86 s: 81 in flight, 121 with the headroom (#300011).
    expect(announcedCeiling(64, at(2_598), 1_860)).toBe(121)
    // A rate that needs fewer than the ceiling leaves it where it is.
    expect(announcedCeiling(64, at(600), 1_000)).toBe(64)
  })

  it('holds the ceiling without a rate or a round trip, and where the operator lowered it', () => {
    expect(announcedCeiling(64, null, 1_860)).toBe(64)
    expect(announcedCeiling(64, at(2_598), null)).toBe(64)
    expect(announcedCeiling(10, at(2_598), 1_860)).toBe(10)
  })
})

describe('liftedCeiling', () => {
  it('doubles the ceiling once a full window at it was carried, up to the bound', () => {
    // 121 in flight carried a window: 242, then the bound (4 x 64).
    expect(liftedCeiling(0, 121, 121, true)).toBe(242)
    expect(liftedCeiling(242, 121, 242, true)).toBe(LIFT_BOUND * 64)
    expect(liftedCeiling(256, 121, 256, true)).toBe(256)
    // Below the ceiling nothing is lifted yet.
    expect(liftedCeiling(0, 121, 120, true)).toBe(0)
    expect(liftedCeiling(242, 121, 200, true)).toBe(242)
  })

  it('lifts nothing unless free (an announced budget, no refusal remembered, the default kept)', () => {
    expect(liftedCeiling(0, 64, 64, false)).toBe(0)
    expect(liftedCeiling(128, 64, 128, false)).toBe(128)
  })
})

describe('SendPace.callsPerMs', () => {
  it('is the slowest dimension’s rate over its mean cost of a call', () => {
    const pace = new SendPace()
    expect(pace.callsPerMs(0)).toBeNull()
    pace.announce('requests', 600 / 60_000, 0)
    pace.announce('input-tokens', 60_000 / 60_000, 0)
    // 1,000 input tokens a call: the token rate admits 60 calls a minute, the request rate 600.
    pace.take(1, costOf({ inputTokens: 1_000 }, 1))
    expect(pace.callsPerMs(1)).toBeCloseTo(60 / 60_000, 9)
  })
})

describe('AdaptiveController with an announced rate', () => {
  /** Slow start with every slot used and answered after `rttMs`: the limit it reaches. */
  function grow(c: AdaptiveController, rttMs: number, answers: number): number {
    const clock = fakeClock()
    for (let i = 0; i < answers; i++) {
      const sentAt = clock.now()
      clock.advance(rttMs)
      c.onOutcome('ok', { now: clock.now(), sentAt, inflight: c.concurrency })
    }
    return c.concurrency
  }

  it('grows past the default ceiling to what the rate needs, and on as windows there carry', () => {
    const c = new AdaptiveController('p', { initial: 1, max: 64 })
    c.announcedRate(at(2_598))
    // What the rate needs in flight (121) first...
    expect(grow(c, 1_860, 200)).toBe(121)
    // ... then, every window there carried, the budget paces: the ceiling doubles to its bound.
    expect(grow(c, 1_860, 1_000)).toBe(LIFT_BOUND * 64)
  })

  it('lifts nothing where the operator lowered the ceiling; a worker continuing keeps the lift', () => {
    const lowered = new AdaptiveController('p', { initial: 1, max: 32 })
    lowered.announcedRate(at(2_598))
    expect(grow(lowered, 1_860, 2_000)).toBe(32)
    // Another worker of the partition continues from the shared record: the lifted ceiling holds.
    const first = new AdaptiveController('p', { initial: 1, max: 64 })
    first.announcedRate(at(2_598))
    expect(grow(first, 1_860, 1_000)).toBe(LIFT_BOUND * 64)
    const next = new AdaptiveController('p', { initial: 1, max: 64 })
    next.announcedRate(at(2_598))
    next.importState(first.exportState())
    expect(grow(next, 1_860, 1)).toBe(LIFT_BOUND * 64)
  })

  it('the operator lowering the ceiling mid-run, or the budget no longer announced, ends the lift', () => {
    const lowered = new AdaptiveController('p', { initial: 1, max: 64 })
    lowered.announcedRate(at(2_598))
    expect(grow(lowered, 1_860, 1_000)).toBe(LIFT_BOUND * 64)
    lowered.setParams({ max: 32 }, 0)
    expect(grow(lowered, 1_860, 200)).toBe(32)
    expect(lowered.memory.lifted).toBe(0)
    const gone = new AdaptiveController('p', { initial: 1, max: 64 })
    gone.announcedRate(at(2_598))
    expect(grow(gone, 1_860, 1_000)).toBe(LIFT_BOUND * 64)
    gone.announcedRate(null)
    expect(grow(gone, 1_860, 1)).toBe(64)
    expect(grow(gone, 1_860, 300)).toBe(64)
    // Also with a refused level remembered above the default: the default holds again.
    const refused = new AdaptiveController('p', { initial: 1, max: 64 })
    refused.announcedRate(at(2_598))
    expect(grow(refused, 1_860, 1_000)).toBe(LIFT_BOUND * 64)
    refused.onOutcome('throttled', { now: 0, sentAt: -1, inflight: 250 })
    refused.announcedRate(null)
    expect(grow(refused, 1_860, 300)).toBe(64)
  })

  it('a refusal after the lift holds the limit under the level refused until a probe carries', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 1, max: 64 })
    c.announcedRate(at(2_598))
    expect(grow(c, 1_860, 1_000)).toBe(LIFT_BOUND * 64)
    c.onOutcome('throttled', { now: clock.now(), sentAt: clock.now() - 1, inflight: 200 })
    expect(c.concurrency).toBeLessThan(200)
    expect(c.memory.ceiling).not.toBeNull()
    // Recovery climbs back under the refused level and no further before a probe.
    const limits: number[] = []
    for (let i = 0; i < 60; i++) {
      const sentAt = clock.now()
      clock.advance(100)
      c.onOutcome('ok', { now: clock.now(), sentAt, inflight: c.concurrency })
      limits.push(c.concurrency)
    }
    expect(Math.max(...limits)).toBeLessThanOrEqual(200)
  })

  it('a lift read from a record is bounded: a bad value is not a ceiling', () => {
    const c = new AdaptiveController('p', { initial: 1, max: 64 })
    const state = c.exportState()
    c.importState({ ...state, memory: { ...state.memory, kind: 'adaptive', lifted: 1e6 } })
    expect(c.memory.lifted).toBe(LIFT_BOUND * 64)
    c.importState({ ...state, memory: { ...state.memory, kind: 'adaptive', lifted: -5 } })
    expect(c.memory.lifted).toBe(0)
  })

  it('stops at the ceiling without one', () => {
    const c = new AdaptiveController('p', { initial: 1, max: 64 })
    expect(grow(c, 1_860, 400)).toBe(64)
    c.announcedRate(null)
    expect(grow(c, 1_860, 400)).toBe(64)
  })
})

describe('growth to what the announced rate needs, one call at a time', () => {
  it('goes there at once on a used success while the pace spreads the calls (#200032)', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 4, max: 64 })
    // 926 requests a minute answered in 3 s: 46 in flight.
    c.announcedRate(at(926, true))
    const sentAt = clock.now()
    clock.advance(3_000)
    c.onOutcome('ok', { now: clock.now(), sentAt, inflight: 4 })
    expect(c.concurrency).toBe(46)
  })

  it('grows a slot a success while the pace allows a burst, or while the limit is not used', () => {
    const clock = fakeClock()
    const bursts = new AdaptiveController('p', { initial: 4, max: 64 })
    bursts.announcedRate(at(926))
    let sentAt = clock.now()
    clock.advance(3_000)
    bursts.onOutcome('ok', { now: clock.now(), sentAt, inflight: 4 })
    expect(bursts.concurrency).toBe(5)
    const idle = new AdaptiveController('p', { initial: 4, max: 64 })
    idle.announcedRate(at(926, true))
    sentAt = clock.now()
    clock.advance(3_000)
    idle.onOutcome('ok', { now: clock.now(), sentAt, inflight: 1 })
    expect(idle.concurrency).toBe(4)
  })
})
