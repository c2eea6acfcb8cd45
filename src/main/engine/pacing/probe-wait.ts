import { backoff } from '../core/backoff'

/** Round trips the limit holds below a refused level before the first probe of it, at most. */
const PROBE_RTTS = 5
/** ... and at least: a capacity of 20 or more probes after 2 round trips. */
const PROBE_MIN_RTTS = 2
/** Calls the first probe waits for at the refused level (40 / ceiling round trips, within the two). */
const PROBE_CALLS = 40
/** The most round trips between probes, however many were refused: a rise is found within it. */
const PROBE_MAX_RTTS = 40

/**
 * How long the limit holds below a refused level before it probes it again. CUBIC's lesson:
 * time since the cut, in round trips, not a fixed cooldown: a few round trips after a cut (a
 * capacity that rises right after a fall is found within seconds), doubling per refused probe
 * up to PROBE_MAX_RTTS (a stable capacity costs one refusal per that many windows). Never
 * longer than the cooldown's own doubling, for a provider with round trips of many seconds.
 * 5 and 40 won on the provider family (bench/scheduler/family.ts): 3 and 24 regained sooner
 * but refused more and used less of a stable capacity. A first wait of 40 / ceiling round trips
 * (2 to 5) then regained sooner with the same refusals, on seeds 1, 2 and 3: a large capacity
 * pays for a refused probe with a small share of its calls.
 *
 * `refusedProbes`: consecutive refused probes; `ceiling`: the refused level (null: none);
 * `srtt`: the smoothed round trip (null before the first); `maxProbeDoublings`: how many times
 * the cooldown doubles at most.
 */
export function probeWaitMs(
  cooldownMs: number,
  maxProbeDoublings: number,
  refusedProbes: number,
  ceiling: number | null,
  srtt: number | null,
): number {
  const byCooldown = backoff({
    initialMs: cooldownMs,
    maxMs: cooldownMs * 2 ** maxProbeDoublings,
  }).delay(refusedProbes)
  if (srtt === null) return byCooldown
  // A larger capacity pays for a refused probe with fewer of its calls: it probes sooner.
  const calls = PROBE_CALLS / Math.max(1, ceiling ?? 1)
  const first = Math.min(PROBE_RTTS, Math.max(PROBE_MIN_RTTS, calls))
  const byRtt = backoff({
    initialMs: first * srtt,
    maxMs: PROBE_MAX_RTTS * srtt,
  }).delay(refusedProbes)
  return Math.min(byCooldown, byRtt)
}
