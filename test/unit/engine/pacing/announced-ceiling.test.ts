// The ceiling of calls in flight rises, with an announced budget, to what its rate needs in one
// round trip (Little's law), on explicit clocks.
import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { announcedCeiling } from '../../../../src/main/engine/pacing/announced-ceiling'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/rate-budget'
import { fakeClock } from '../../../helpers/clock'

describe('announcedCeiling', () => {
  it('is the announced rate times the round trip, with headroom, above the default ceiling', () => {
    // 2,598 requests a minute answered in 1.86 s: 81 in flight, 121 with the headroom (#300011).
    expect(announcedCeiling(64, 2_598 / 60_000, 1_860)).toBe(121)
    // A rate that needs fewer than the ceiling leaves it where it is.
    expect(announcedCeiling(64, 600 / 60_000, 1_000)).toBe(64)
  })

  it('holds the ceiling without a rate or a round trip, and where the operator lowered it', () => {
    expect(announcedCeiling(64, null, 1_860)).toBe(64)
    expect(announcedCeiling(64, 2_598 / 60_000, null)).toBe(64)
    expect(announcedCeiling(10, 2_598 / 60_000, 1_860)).toBe(10)
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

  it('grows past the default ceiling to what the rate needs in flight, and no further', () => {
    const c = new AdaptiveController('p', { initial: 1, max: 64 })
    c.announcedRate(2_598 / 60_000)
    expect(grow(c, 1_860, 400)).toBe(121)
  })

  it('stops at the ceiling without one', () => {
    const c = new AdaptiveController('p', { initial: 1, max: 64 })
    expect(grow(c, 1_860, 400)).toBe(64)
    c.announcedRate(null)
    expect(grow(c, 1_860, 400)).toBe(64)
  })
})
