// "A refused probe does not end the quiet stretch": the served cut's stretch counts from the last
// cut that was not a refused probe, so a regrowth's overshoot soon after one is cut to what was
// served. A fake clock; round trips of about 1 s.
import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { QuietStretch } from '../../../../src/main/engine/pacing/quiet-stretch'
import { SERVED_QUIET_RTTS } from '../../../../src/main/engine/pacing/served-cut'
import { fakeClock, type FakeClock } from '../../../helpers/clock'
import { roundsAt } from './controller-helpers'

const refuse = (c: AdaptiveController, clock: FakeClock, inflight: number) => {
  clock.advance(1)
  c.onOutcome('throttled', { now: clock.now(), sentAt: clock.now() - 10, inflight })
}

/** Rounds of a cap of `cap`, every answer with the limit in use (as a fixed latency answers). */
function grow(c: AdaptiveController, clock: FakeClock, cap: number): void {
  for (let r = 0; r < 20 && c.concurrency <= cap; r++) {
    const sentAt = clock.now()
    clock.advance(1_000)
    const out = Math.min(cap, c.concurrency)
    for (let i = 0; i < out; i++) {
      clock.advance(1)
      c.onOutcome('ok', { now: clock.now(), sentAt, inflight: Math.min(cap, c.concurrency) })
    }
  }
}

/** One round trip of `out` calls of a cap of `cap`, answered a ms apart, the rest refused. */
function roundInto(c: AdaptiveController, clock: FakeClock, out: number, cap: number): void {
  const sentAt = clock.now()
  clock.advance(1_000)
  for (let i = 0; i < cap; i++) {
    clock.advance(1)
    c.onOutcome('ok', { now: clock.now(), sentAt, inflight: cap })
  }
  clock.advance(1)
  if (out > cap) c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: cap + 1 })
}

describe('a refused probe does not end the quiet stretch', () => {
  it('counts from the last cut that was not a refused probe, or from a fall', () => {
    const q = new QuietStretch()
    expect(q.since).toBe(Number.NEGATIVE_INFINITY)
    q.cut(1_000, false)
    q.cut(5_000, true)
    expect(q.since).toBe(1_000)
    // The refused probe's episode turned out a fall: the stretch ended at its cut.
    q.fell(5_000)
    expect(q.since).toBe(5_000)
    q.fell(4_000)
    expect(q.since).toBe(5_000)
  })

  it('a cap of 30 that rose to 40 just after a refused probe keeps 39 slots, not half', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 8, max: 64 })
    roundsAt(c, clock, 30)
    refuse(c, clock, 31)
    roundsAt(c, clock, 30, 20)
    expect(c.memory).toMatchObject({ held: 30, ceiling: 31, probing: true })
    // The probe of 31 refused: back to 30, the stretch since the first cut still quiet.
    refuse(c, clock, 31)
    const refusedAt = clock.now()
    expect(c.memory).toMatchObject({ probing: false, refusedProbes: 1 })
    // The cap rises to 40: the next probe carries, the regrowth doubles past it, and the round
    // of 40 served and the rest refused comes within the quiet stretch of the refused probe.
    grow(c, clock, 40)
    expect(c.concurrency).toBeGreaterThan(40)
    roundInto(c, clock, c.concurrency, 40)
    const srtt = c.memory.srtt ?? 0
    expect(clock.now() - refusedAt).toBeLessThan(SERVED_QUIET_RTTS * srtt)
    expect(c.limit).toBe(39)
  })

  it('a fall ends it: an overshoot soon after still halves', () => {
    const clock = fakeClock()
    const c = new AdaptiveController('p', { initial: 8, max: 64 })
    roundsAt(c, clock, 30)
    refuse(c, clock, 31)
    roundsAt(c, clock, 30, 20)
    // Refused at 20 in the probe's episode (a call sent before the cut): a fall, not the probe.
    refuse(c, clock, 31)
    const cutAt = clock.now()
    clock.advance(1)
    c.onOutcome('throttled', { now: clock.now(), sentAt: cutAt - 1, inflight: 20 })
    expect(c.memory.held).toBe(0)
    grow(c, clock, 40)
    const limit = c.limit
    roundInto(c, clock, c.concurrency, 40)
    expect(c.limit).toBeLessThan(39)
    expect(c.limit).toBeLessThanOrEqual(Math.max(30, limit * 0.5))
  })

  it('survives the shared state', () => {
    const clock = fakeClock()
    const a = new AdaptiveController('p', { initial: 8, max: 64 })
    roundsAt(a, clock, 30)
    refuse(a, clock, 31)
    roundsAt(a, clock, 30, 20)
    refuse(a, clock, 31)
    grow(a, clock, 40)
    const b = new AdaptiveController('p', { initial: 8, max: 64 })
    b.importState(a.exportState())
    roundInto(b, clock, b.concurrency, 40)
    expect(b.limit).toBe(39)
  })
})
