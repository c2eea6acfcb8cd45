// Slow start's first refusal is a cap's edge too (slow-start-edge.ts): on the fake clock, a
// controller growing in slow start into a cap of 20, one call over, keeps what was served.
import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { aboveWhatHeld } from '../../../../src/main/engine/pacing/slow-start-edge'
import { fakeClock } from '../../../helpers/clock'

describe("slow start's first refusal", () => {
  it('is above what held in slow start, where nothing held yet, if above what was served', () => {
    expect(aboveWhatHeld(21, 0, 1, true, 19)).toBe(true)
    expect(aboveWhatHeld(21, 0, 1, false, 19)).toBe(false)
    // Refused at fewer calls out than were served: a fall, not an edge.
    expect(aboveWhatHeld(8, 0, 1, true, 63)).toBe(false)
    expect(aboveWhatHeld(21, 0, 1, true, 0)).toBe(false)
    expect(aboveWhatHeld(21, 20, 1, false, 0)).toBe(true)
    expect(aboveWhatHeld(12, 20, 1, false, 0)).toBe(false)
  })

  it('a cap of 20 overshot by one call in slow start keeps 19 slots, not half', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 4, max: 64 })
    // Slow start with answers spread over the round trip (as the growth's spread sends them):
    // each success has the limit in use and grows it by one, up to 21.
    while (c.limit < 21) {
      clock.advance(50)
      c.onOutcome('ok', { now: clock.now(), sentAt: clock.now() - 1_000, inflight: c.concurrency })
    }
    expect(c.memory.slowStart).toBe(true)
    clock.advance(10)
    c.onOutcome('throttled', { now: clock.now(), sentAt: clock.now() - 10, inflight: 21 })
    // Served with 20 out: one call under it, where halving 21 gave 10.5.
    expect(c.limit).toBe(19)
    expect(c.memory.ceiling).toBe(21)
  })
})
