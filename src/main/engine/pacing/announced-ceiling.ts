// The ceiling of calls in flight (64 by default) is a safety stop for the search of a capacity
// nobody announces. Where a budget is announced, the budget paces admissions, and the calls its
// rate needs in flight are that rate times the round trip (Little's law): a rate of 2,600
// requests a minute answered in 1.9 s needs 82 in flight, and at 64 it used 0.76 of what it was
// allowed. So with an announced rate the ceiling rises to what the rate needs in one smoothed
// round trip, with headroom for the round trip's jitter, and beyond as windows at it carry
// (`liftedCeiling`, up to LIFT_BOUND times the default); never when the operator lowered the
// ceiling below the default (their stop holds), and back to the default once no budget is
// announced. A refusal leaves a lift as it is: the level it remembers holds the limit under
// it until a probe carries a window there, as any refused level does.
import { PACER_AIMD } from '../core/types'

/** What an announced budget's pace admits, as the controller sees it. */
export interface AnnouncedRate {
  /** Calls a ms at the rate that is ours (the slowest dimension). */
  callsPerMs: number
  /** The pace sends one call at a time: a higher limit cannot burst. */
  spread: boolean
}

/** In flight above the announced rate x the round trip: room for the round trip's jitter. */
export const ANNOUNCED_HEADROOM = 1.5

/**
 * The ceiling of the limit: `max`, or above it what the announced rate (calls a ms) needs in
 * flight over `srttMs`, when both are known and `max` is not below the default.
 */
export function announcedCeiling(
  max: number,
  rate: AnnouncedRate | null,
  srttMs: number | null,
): number {
  if (rate === null || srttMs === null || max < PACER_AIMD.max) return max
  if (!(rate.callsPerMs > 0) || !(srttMs > 0)) return max
  return Math.max(max, Math.ceil(ANNOUNCED_HEADROOM * rate.callsPerMs * srttMs))
}

/**
 * Where growth goes at once: what the announced rate needs in flight over `srttMs`, while the
 * pace sends one call at a time (so the limit cannot burst into a window shorter than the
 * announced one); 0 otherwise. Growth by a slot a success doubles once a round trip, and a rate
 * that rose five times over with 3 s answers took most of its phase to reach (#200032 0.73 used).
 */
export function announcedNeed(rate: AnnouncedRate | null, srttMs: number | null): number {
  if (rate === null || !rate.spread || srttMs === null) return 0
  if (!(rate.callsPerMs > 0) || !(srttMs > 0)) return 0
  return Math.floor(rate.callsPerMs * srttMs)
}

/** The most the ceiling is lifted to by windows carried at it: this many times the default. */
export const LIFT_BOUND = 4
/** ... that is, in calls in flight. */
export const LIFTED_MOST = LIFT_BOUND * PACER_AIMD.max

/**
 * With an announced budget the budget paces admissions, so the calls in flight are not the safety
 * stop: what the rate needs in flight is not what a bucket the headers show full needs to be spent
 * in a short phase. So each time a full window at the ceiling was carried with no refusal
 * remembered, the ceiling doubles, up to LIFT_BOUND times the default (a minute's bucket of 664
 * requests, 18 s long, with answers slowing to 4.8 s under load, used 0.353 of what it was allowed
 * at 80 in flight: #2000061). Returns the lifted ceiling (0: none): `lifted` as it was, `ceiling`
 * the announced one, `held` the most calls in flight a full window carried; `free`: an announced
 * budget, no refusal remembered, and the operator's ceiling not below the default.
 */
export function liftedCeiling(
  lifted: number,
  ceiling: number,
  held: number,
  free: boolean,
): number {
  const top = Math.max(ceiling, lifted)
  if (!free || held < top) return lifted
  return Math.min(LIFTED_MOST, 2 * top)
}
