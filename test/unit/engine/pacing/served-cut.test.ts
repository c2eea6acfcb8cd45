import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { SERVED_QUIET_RTTS, ServedLevel } from '../../../../src/main/engine/pacing/served-cut'
import { fakeClock } from '../../../helpers/clock'
import { overshootInto20 } from './controller-helpers'
import type { Outcome } from '../../../../src/main/engine/core/types'

const RTT = 1_000

const refuse = (c: AdaptiveController, clock: ReturnType<typeof fakeClock>, inflight: number) => {
  clock.advance(1)
  c.onOutcome('throttled', { now: clock.now(), sentAt: clock.now() - 10, inflight })
}

describe('an overshoot is cut to what was served', () => {
  it('counts the first answer of an instant, one call under, after a quiet stretch only', () => {
    const s = new ServedLevel()
    s.served(1_000, 12)
    // Answers of the same instant count calls sent into it that may yet be refused.
    s.served(1_000, 30)
    s.served(1_001, 11)
    const quiet = 1_001 + SERVED_QUIET_RTTS * RTT
    expect(s.cut(quiet, 0, RTT)).toBe(11)
    // Counted afresh after each cut, and nothing within the quiet stretch after one.
    s.served(quiet + 1, 20)
    expect(s.cut(quiet + 2, quiet, RTT)).toBe(0)
    expect(s.cut(quiet + SERVED_QUIET_RTTS * RTT, quiet, RTT)).toBe(0)
    // No round trip yet: no floor.
    s.served(1, 5)
    expect(s.cut(2, Number.NEGATIVE_INFINITY, null)).toBe(0)
  })

  it('a cap of 20 refused at 21 after growing keeps 19 slots, not half (#100015)', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 8, max: 64 })
    overshootInto20(c, clock)
    const before = c.limit
    refuse(c, clock, 21)
    expect(before * 0.5).toBeLessThan(15)
    expect(c.limit).toBe(19)
    expect(c.memory.ceiling).toBe(21)
  })

  it('a refusal soon after a cut still halves: a rate refuses again at once', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 8, max: 64 })
    overshootInto20(c, clock)
    refuse(c, clock, 21)
    // Served at 19 again, then refused above it again within the quiet stretch.
    const sentAt = clock.now()
    clock.advance(RTT)
    for (let i = 0; i < 19; i++) {
      clock.advance(1)
      c.onOutcome('ok', { now: clock.now(), sentAt, inflight: 19 })
    }
    const limit = c.limit
    refuse(c, clock, 20)
    expect(c.limit).toBeLessThanOrEqual(Math.max(c.memory.held, limit * 0.5))
  })

  it('survives the shared state: what was served travels with the memory', () => {
    const clock = fakeClock()
    const a = new AdaptiveController('p', { initial: 8, max: 64 })
    overshootInto20(a, clock)
    const b = new AdaptiveController('p', { initial: 8, max: 64 })
    b.importState(a.exportState())
    refuse(b, clock, 21)
    expect(b.limit).toBe(19)
  })
})

describe('the served floor under the ceiling', () => {
  it('more calls served than the ceiling allows (another process) cut no higher than max', () => {
    // The property test's counterexample (adaptive.test.ts, seed 1504310330), step by step.
    const clock = fakeClock()
    const c = new AdaptiveController('p', { min: 2, max: 9, initial: 3 })
    const steps: [Outcome, number, number][] = [
      ['overloaded', 0, 0],
      ['ok', 1672, 1],
      ['ok', 6328, 1],
      ['ok', 1, 11],
      ['throttled', 0, 3],
    ]
    for (const [outcome, ms, inflight] of steps) {
      clock.advance(ms)
      c.onOutcome(outcome, { now: clock.now(), sentAt: clock.now(), inflight })
      expect(c.limit).toBeLessThanOrEqual(9)
    }
  })
})
