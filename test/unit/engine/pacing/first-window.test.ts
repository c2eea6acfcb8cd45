import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { FirstWindowGrowth } from '../../../../src/main/engine/pacing/first-window'
import { fakeClock } from '../../../helpers/clock'

describe('the window after a cut opens its own slots, and one more', () => {
  it('grows by one slot at most on one instant’s answers, within half a round trip', () => {
    const g = new FirstWindowGrowth()
    const cut = 1_000
    expect(g.allow(2_000, cut, 1_000, 0.5)).toBe(0.5)
    expect(g.allow(2_000, cut, 1_000, 0.5)).toBe(0.5)
    expect(g.allow(2_000, cut, 1_000, 0.5)).toBe(0)
    // Another instant within half a round trip of the first answer: one slot again.
    expect(g.allow(2_100, cut, 1_000, 0.5)).toBe(0.5)
    // Past half a round trip, and for later windows, the step is whole.
    expect(g.allow(2_600, cut, 1_000, 0.5)).toBe(0.5)
    expect(g.allow(2_600, cut, 1_000, 0.5)).toBe(0.5)
    expect(g.allow(2_600, cut, 1_000, 0.5)).toBe(0.5)
    // A new cut holds its first window back again.
    expect(g.allow(3_000, 2_900, 1_000, 0.5)).toBe(0.5)
    expect(g.allow(3_000, 2_900, 1_000, 0.5)).toBe(0.5)
    expect(g.allow(3_000, 2_900, 1_000, 0.5)).toBe(0)
  })

  it('a window answered in one instant after a cut sends its own calls and one more (#100040)', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 32, max: 64 })
    let sentAt = clock.now()
    clock.advance(1_000)
    c.onOutcome('ok', { now: clock.now(), sentAt, inflight: 32 })
    // A throttle at fewer calls out than were served (a fall) cuts to half; the first window sent
    // after the cut comes back in one instant.
    sentAt = clock.now()
    clock.advance(10)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 25 })
    const cut = c.limit
    sentAt = clock.now() + 1
    clock.advance(1_000)
    for (let i = 0; i < Math.floor(cut); i++) {
      c.onOutcome('ok', { now: clock.now(), sentAt, inflight: c.concurrency })
    }
    // Half a slot per answer would have opened 8 more slots in the instant the cap may have fallen.
    expect(c.limit).toBe(cut + 1)
    // The next window recovers at the usual pace.
    sentAt = clock.now() + 1
    clock.advance(1_000)
    for (let i = 0; i < 4; i++)
      c.onOutcome('ok', { now: clock.now(), sentAt, inflight: c.concurrency })
    expect(c.limit).toBe(cut + 3)
  })
})
