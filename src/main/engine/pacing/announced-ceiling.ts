// The ceiling of calls in flight (64 by default) is a safety stop for the search of a capacity
// nobody announces. Where a budget is announced, the budget paces admissions, and the calls its
// rate needs in flight are that rate times the round trip (Little's law): a rate of 2,600
// requests a minute answered in 1.9 s needs 82 in flight, and at 64 it used 0.76 of what it was
// allowed. So with an announced rate the ceiling rises to what the rate needs in one smoothed
// round trip, with headroom for the round trip's jitter; never when the operator lowered the
// ceiling below the default (their stop holds).
import { PACER_AIMD } from '../core/types'

/** In flight above the announced rate x the round trip: room for the round trip's jitter. */
export const ANNOUNCED_HEADROOM = 1.5

/**
 * The ceiling of the limit: `max`, or above it what the announced rate (calls a ms) needs in
 * flight over `srttMs`, when both are known and `max` is not below the default.
 */
export function announcedCeiling(
  max: number,
  callsPerMs: number | null,
  srttMs: number | null,
): number {
  if (callsPerMs === null || srttMs === null || max < PACER_AIMD.max) return max
  if (!(callsPerMs > 0) || !(srttMs > 0)) return max
  return Math.max(max, Math.ceil(ANNOUNCED_HEADROOM * callsPerMs * srttMs))
}
