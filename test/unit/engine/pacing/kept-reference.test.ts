import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { KeptReference } from '../../../../src/main/engine/pacing/kept-reference'
import { LatencyDrop } from '../../../../src/main/engine/pacing/latency-drop'
import { fakeClock } from '../../../helpers/clock'

/** Answers at the limit, each taking `rttMs`, until one of them starts a probe (its index, or -1). */
function untilProbe(c: AdaptiveController, clock: ReturnType<typeof fakeClock>, rttMs: number) {
  for (let i = 0; i < 200; i++) {
    const sentAt = clock.now()
    clock.advance(rttMs)
    const change = c.onOutcome('ok', { now: clock.now(), sentAt, inflight: c.concurrency })
    if (change?.cause === 'probe') return i
  }
  return -1
}

/** A round trip of 2.5 s learned, then 9 refused: the limit recovers to 8 under it. */
function heldUnderNine(clock: ReturnType<typeof fakeClock>): AdaptiveController {
  const c = new AdaptiveController('p', { initial: 9, cooldownMs: 60_000 })
  let sentAt = clock.now()
  clock.advance(2500)
  c.onOutcome('ok', { now: clock.now(), sentAt, inflight: 9 })
  sentAt = clock.now()
  clock.advance(20)
  c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 9 })
  return c
}

describe("the latency drop's reference kept across a refused probe", () => {
  it('a server whose load fell right after a refused probe is probed again at once', () => {
    const clock = fakeClock()
    const c = heldUnderNine(clock)
    // Held at 8 under a refused 9, answers of 2.5 s (a server that slows as it fills), then the
    // probe of 9 refused.
    expect(untilProbe(c, clock, 2500)).toBeGreaterThan(0)
    const sentAt = clock.now()
    clock.advance(20)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 9 })
    expect(c.memory).toMatchObject({ held: 8, ceiling: 9, refusedProbes: 1 })
    const nextProbeAt = c.memory.nextProbeAt
    // The capacity rose just after the refusal: the same 8 calls answer in 1.2 s. The first
    // window of them is compared with what 8 took before the probe, not learned as the level's.
    const probedAt = untilProbe(c, clock, 1200)
    expect(probedAt).toBeGreaterThanOrEqual(7)
    expect(probedAt).toBeLessThanOrEqual(8)
    expect(clock.now()).toBeLessThan(nextProbeAt)
  })

  it('answers as slow as before the refused probe leave the next probe to its time', () => {
    const clock = fakeClock()
    const c = heldUnderNine(clock)
    untilProbe(c, clock, 2500)
    const sentAt = clock.now()
    clock.advance(20)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 9 })
    const nextProbeAt = c.memory.nextProbeAt
    expect(untilProbe(c, clock, 2500)).toBeGreaterThan(7)
    expect(clock.now()).toBeGreaterThanOrEqual(nextProbeAt)
  })

  it('keeps a level reference only under the same refused level, and forgets it after a drop', () => {
    const kept = new KeptReference<number>()
    kept.keep(8, 9, 42)
    expect(kept.reference(8, 9)).toBe(42)
    // Another level, another refused level (a fall, or a probe that carried): learned afresh.
    expect(kept.reference(7, 9)).toBeNull()
    expect(kept.reference(8, 12)).toBeNull()
    expect(kept.reference(8, null)).toBeNull()
    kept.forget()
    expect(kept.reference(8, 9)).toBeNull()
    // Nothing is kept without a refused level.
    kept.keep(8, null, 1)
    expect(kept.reference(8, null)).toBeNull()
  })

  it("compares with the level's window from before the probe as well as its own first one", () => {
    const drop = new LatencyDrop()
    const feed = (ms: number, n: number) => Array.from({ length: n }, () => drop.observe(ms))
    drop.reset(8, 9)
    expect(feed(2500, 8)).not.toContain(true)
    // A probe of 9, refused: back to 8 under the same 9.
    drop.reset(9, 9)
    drop.reset(8, 9)
    expect(feed(1200, 8).at(-1)).toBe(true)
  })
})
