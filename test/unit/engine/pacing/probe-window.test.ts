import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { refusedLevel } from '../../../../src/main/engine/pacing/probe-window'
import { fakeClock } from '../../../helpers/clock'
import { holdThenProbe } from './controller-helpers'

describe("a refused probe's window", () => {
  it('counts down from the level that held: the n-th refusal may find n - 1 calls fewer out', () => {
    // Held 5, probe at 6 refused: the window's refusals say 6, as the probe did.
    expect(refusedLevel(5, 1, 5, 0, 1)).toBe(6)
    expect(refusedLevel(5, 1, 4, 1, 1)).toBe(6)
    expect(refusedLevel(5, 1, 3, 2, 1)).toBe(6)
    // Fewer out than that: the capacity fell under what held.
    expect(refusedLevel(5, 1, 3, 1, 1)).toBe(3)
    expect(refusedLevel(8, 1, 6, 0, 1)).toBe(6)
    // After a cut that was no refused probe, each refusal says where it was refused.
    expect(refusedLevel(5, 0, 4, 1, 1)).toBe(4)
    expect(refusedLevel(5, 0, 1, 0, 1)).toBe(2)
  })

  it('keeps what held when the rest of the window comes back with one call fewer out each time', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 6, cooldownMs: 60_000 })
    // Learn a round trip of 100 ms, a ceiling of 6, and hold 5.
    holdThenProbe(c, clock, 6)
    expect(c.memory).toMatchObject({ held: 5, ceiling: 6, probing: true })
    // The probe is refused; two more calls sent into its window are refused behind it, and the
    // limit that came down stopped each one's slot from being filled again.
    const sentAt = clock.now()
    clock.advance(20)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 6 })
    expect(c.memory.refusedProbes).toBe(1)
    const next = c.memory.nextProbeAt
    // Sent behind the probe, into its window (calls of the probe's own instant: probe-instant.ts).
    for (const inflight of [5, 4]) {
      clock.advance(3)
      c.onOutcome('throttled', { now: clock.now(), sentAt: sentAt + 5, inflight })
    }
    // Still the same episode: 5 held, 6 refused, the next probe as a refused one set it.
    expect(c.memory).toMatchObject({ held: 5, ceiling: 6, refusedProbes: 1, nextProbeAt: next })
  })
})
