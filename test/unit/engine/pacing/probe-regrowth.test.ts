import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { fakeClock } from '../../../helpers/clock'

describe('regrowth after a probe that carried a full window', () => {
  it('grows by 1 per used success up to twice the probed level, then by `increase`', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 9, max: 64 })
    const ok = () => {
      const sentAt = clock.now()
      clock.advance(100)
      return c.onOutcome('ok', { now: clock.now(), sentAt, inflight: c.concurrency })
    }
    ok()
    let sentAt = clock.now()
    clock.advance(100)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 9 })
    for (let i = 0; i < 100 && !c.memory.probing; i++) ok()
    expect(c.concurrency).toBe(9)
    // The probe at 9 carries a full window: the capacity rose.
    for (let i = 0; i < 100 && c.memory.ceiling !== null; i++) ok()
    expect(c.memory.ceiling).toBeNull()
    // Another worker of the shared partition continues the same regrowth from the record.
    const other = new AdaptiveController('p', { initial: 9, max: 64 })
    other.importState(c.exportState())
    const at = clock.now()
    const step = other.onOutcome('ok', { now: at + 100, sentAt: at, inflight: other.concurrency })
    expect(step ? step.to - step.from : 0).toBe(1)
    const steps: number[] = []
    for (let i = 0; i < 14; i++) {
      const change = ok()
      if (change) steps.push(change.to - change.from)
    }
    // The probe's own success made 10; to 18 a slot per success (x2 a round trip), then half a
    // slot (x1.5 a round trip).
    expect(steps.slice(0, 8)).toEqual([1, 1, 1, 1, 1, 1, 1, 1])
    expect(steps.slice(8)).toEqual(steps.slice(8).map(() => 0.5))
    expect(steps.length).toBeGreaterThan(10)
    expect(c.limit).toBeCloseTo(18 + 0.5 * (steps.length - 8), 5)
    // A cut ends it: regrowth after the next cut's recovery is the usual half a slot.
    sentAt = clock.now()
    clock.advance(100)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: c.concurrency })
    expect(c.memory.ceiling).not.toBeNull()
  })
})
