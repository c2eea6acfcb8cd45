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
