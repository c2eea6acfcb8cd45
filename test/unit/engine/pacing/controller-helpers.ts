import { expect } from 'vitest'
import type { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import type { FakeClock } from '../../../helpers/clock'

/**
 * Brings a controller that starts at `ceiling` to its first probe: a round trip of 100 ms learned,
 * one throttle with `ceiling` calls out, then full windows of successes until the level below
 * the ceiling held and the limit probes the ceiling.
 */
export function holdThenProbe(c: AdaptiveController, clock: FakeClock, ceiling: number): void {
  let sentAt = clock.now()
  clock.advance(100)
  c.onOutcome('ok', { now: clock.now(), sentAt, inflight: 1 })
  sentAt = clock.now()
  clock.advance(100)
  c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: ceiling })
  for (let i = 0; i < 200 && (c.memory.held < ceiling - 1 || !c.memory.probing); i++) {
    sentAt = clock.now()
    clock.advance(100)
    c.onOutcome('ok', { now: clock.now(), sentAt, inflight: c.concurrency })
  }
}

/**
 * Rounds of a cap of `cap` slots answered in a round trip of 1 s, one answer a ms apart, until
 * the limit passes it (then returns), or `rounds` have gone.
 */
export function roundsAt(c: AdaptiveController, clock: FakeClock, cap: number, rounds = 100): void {
  for (let r = 0; r < rounds && c.concurrency <= cap; r++) {
    const sentAt = clock.now()
    clock.advance(1_000)
    const out = Math.min(cap, c.concurrency)
    for (let i = 0; i < out; i++) {
      clock.advance(1)
      c.onOutcome('ok', { now: clock.now(), sentAt, inflight: out })
    }
  }
}

/**
 * A cap of 10 found (refused at 11, held at 10), then risen to 20: the probe carries, the limit
 * regrows past it (round trips of 1 s).
 */
export function overshootInto20(c: AdaptiveController, clock: FakeClock): void {
  roundsAt(c, clock, 10)
  clock.advance(1)
  c.onOutcome('throttled', { now: clock.now(), sentAt: clock.now() - 10, inflight: 11 })
  roundsAt(c, clock, 10, 12)
  expect(c.memory).toMatchObject({ held: 10, ceiling: 11 })
  roundsAt(c, clock, 20)
  expect(c.memory.ceiling).toBeNull()
}
