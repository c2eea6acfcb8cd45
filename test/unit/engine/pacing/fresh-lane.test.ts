// A lane born one call at a time counts the call that announced it (fresh-lane.ts), on explicit
// clocks.
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'
import { freshSingleLane } from '../../../../src/main/engine/pacing/fresh-lane'

const ONE_CALL = costOf({}, 1)
const NARROWED = { burstMs: 0, scale: 1, scaleAt: null, cutAt: 500 }

describe('freshSingleLane', () => {
  it('has taken the call that announced it, refilled since it was sent', () => {
    expect(freshSingleLane(0.001, 0, 1, 1, 100)).toEqual({ meanCost: 1, level: 0.1 })
    // On tokens, a lane holding 0.7 of a call is 0.3 of a call in debt once it is taken.
    expect(freshSingleLane(1, 0, 1000, 0.7, 0).level).toBeCloseTo(-300, 5)
    // Never above what it holds.
    expect(freshSingleLane(1, 0, 1000, 0.7, 10_000).level).toBeCloseTo(700, 5)
  })
})

describe('SendPace: a worker joining a pace other workers narrowed', () => {
  it('waits a spacing after the call that announced the lane, instead of sending at once', () => {
    const pace = new SendPace()
    // Three workers; the others narrowed the pace to one call at a time before this one read a
    // budget. Its first call (sent at 1000, unpaced: nothing was announced) announces 30 a minute.
    pace.adopt(NARROWED, 1000, 3)
    pace.announce('requests', 30 / 60_000, 1030, { at: 1000, cost: 1 })
    // Its share: 30 / 3 a minute at 0.98, one call per 6.1 s, counted from the call it sent.
    const wait = pace.delayMs(1030, ONE_CALL)
    expect(wait).toBeGreaterThan(6000)
    expect(wait).toBeLessThan(6200)
    // Sent then, the next one waits one spacing more, not two.
    pace.take(1030 + wait, ONE_CALL)
    const next = pace.delayMs(1030 + wait, ONE_CALL)
    expect(next).toBeGreaterThan(6000)
    expect(next).toBeLessThan(6200)
  })

  it('a lane born before any narrowing still starts with its burst full', () => {
    const pace = new SendPace()
    pace.announce('requests', 30 / 60_000, 1030, { at: 1000, cost: 1 })
    expect(pace.delayMs(1030, ONE_CALL)).toBe(0)
  })
})
