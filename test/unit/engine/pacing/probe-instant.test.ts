import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { ProbeInstant } from '../../../../src/main/engine/pacing/probe-instant'
import { fakeClock } from '../../../helpers/clock'
import { holdThenProbe } from './controller-helpers'

describe("a probe's instant refuses one call", () => {
  it('reads the second refusal of calls sent at or before the probe as a fall', () => {
    const p = new ProbeInstant()
    p.probe(1_000)
    expect(p.refused(1_000, 1_010)).toBe(1)
    // A call sent after the probe, into its window: the probe's, whatever it finds out.
    expect(p.fell(1_005, 1_010)).toBe(false)
    expect(p.fell(1_000, 1_010)).toBe(true)
    // Another episode's refusals say nothing of this probe.
    expect(p.fell(1_000, 2_000)).toBe(false)
  })

  it('counts the probe itself only when its refusal was of a call of its instant', () => {
    const p = new ProbeInstant()
    p.probe(1_000)
    p.refused(1_004, 1_010)
    expect(p.fell(1_000, 1_010)).toBe(false)
    expect(p.fell(999, 1_010)).toBe(true)
  })

  it('forgets what held when a probe meets a fall: the recovery stops under the new level', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 6, cooldownMs: 60_000 })
    // Held 5, probing 6: the probe and the five refills of its instant go together.
    holdThenProbe(c, clock, 6)
    expect(c.memory).toMatchObject({ held: 5, ceiling: 6, probing: true })
    const sentAt = clock.now()
    clock.advance(20)
    // The cap fell to one: five of the six are refused, each finding one call fewer out.
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 6 })
    expect(c.memory.refusedProbes).toBe(1)
    for (const inflight of [5, 4, 3, 2]) {
      clock.advance(1)
      c.onOutcome('throttled', { now: clock.now(), sentAt, inflight })
    }
    // A cap at 5 refuses one of the six: this is a fall to what was still served.
    expect(c.memory).toMatchObject({ held: 0, ceiling: 2, refusedProbes: 0 })
    expect(c.concurrency).toBe(1)
    // The answer that was served recovers nothing above the level just refused.
    const next = clock.now()
    clock.advance(100)
    c.onOutcome('ok', { now: clock.now(), sentAt: next, inflight: 1 })
    expect(c.concurrency).toBe(1)
  })
})
