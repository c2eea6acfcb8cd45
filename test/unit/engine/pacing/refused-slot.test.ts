import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { refusedFreesNoSlot } from '../../../../src/main/engine/pacing/refused-slot'
import { fakeClock } from '../../../helpers/clock'
import { holdThenProbe } from './controller-helpers'

describe('a refused call frees no slot', () => {
  it('never sets the limit above the calls still out, the refused one not counted', () => {
    expect(refusedFreesNoSlot(10, 20, 1)).toBe(10)
    expect(refusedFreesNoSlot(10, 6, 1)).toBe(5)
    expect(refusedFreesNoSlot(10, 1, 1)).toBe(1)
  })

  it('a deep fall of a cap: the refusals of one episode bring the limit down to the calls served', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 20, max: 64 })
    const sentAt = clock.now()
    clock.advance(500)
    // The cap fell from 20 to 3 under 20 calls: 17 are refused, each answer one call fewer out.
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 20 })
    expect(c.concurrency).toBe(10)
    for (let inflight = 19; inflight >= 4; inflight--) {
      clock.advance(1)
      c.onOutcome('throttled', { now: clock.now(), sentAt, inflight })
      // A refusal's slot opens no new call: the limit is at most what is still out.
      expect(c.concurrency).toBeLessThanOrEqual(inflight - 1)
    }
    expect(c.concurrency).toBe(3)
    expect(c.memory.ceiling).toBe(4)
  })

  it('refusals under a level that held in a refused probe’s episode are a fall: probes restart', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 9, cooldownMs: 60_000 })
    // Learn a round trip of 100 ms, a ceiling of 9, and hold 8.
    holdThenProbe(c, clock, 9)
    expect(c.memory).toMatchObject({ held: 8, probing: true })
    // The probe is refused, and so, in the same episode, are calls with 5 still out: the cap fell.
    const sentAt = clock.now()
    clock.advance(100)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 9 })
    expect(c.memory.refusedProbes).toBe(1)
    const doubled = c.memory.nextProbeAt
    clock.advance(1)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 6 })
    expect(c.memory.held).toBe(0)
    expect(c.memory.refusedProbes).toBe(0)
    // The next probe waits as after a first cut, not twice as long as after a refused probe.
    expect(c.memory.nextProbeAt).toBeLessThan(doubled)
    expect(c.concurrency).toBe(5)
  })
})
