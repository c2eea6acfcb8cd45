// What others (tenants, workers not on our store) spend of an announced rate, learned from how
// `remaining` moves between answers beyond what we spent (send-pace.ts keeps it per lane). A share
// of the rate, so that it follows the announced limit when that changes.
import {
  OTHERS_WEIGHT,
  MIN_SPAN_MS,
  MIN_SPAN_UNITS,
  MIN_SPAN_CALLS,
  MIN_OTHERS,
  MAX_OTHERS,
} from './send-pace-settings'

/** What the estimate is kept in: a send-pace lane. */
export interface OthersLane {
  /** The announced rate per ms. */
  ratePerMs: number
  /** The share of the rate others were seen to spend (signed, MIN_OTHERS to MAX_OTHERS). */
  othersShare: number
  /** The mean cost of a call here. */
  meanCost: number
  /** A lane of tokens, whose calls vary in size (not of requests, one each). */
  tokens: boolean
  /** Estimates of what others spend since the announced limit last changed. */
  samples: number
  /** The last reading, to estimate what others spent from the next one. */
  reading: { at: number; remaining: number; spent: number; limit: number } | null
}

/**
 * A reading of the provider's `remaining` as of a call, and what we had spent up to that call as
 * the provider counts it (cumulative): from two of them, what others spent in between.
 */
export function readOthers(
  lane: OthersLane,
  at: number,
  remaining: number,
  limit: number,
  spent: number,
): void {
  const prev = lane.reading
  if (prev && prev.limit !== limit) lane.samples = 0
  const span = prev ? at - prev.at : 0
  if (
    prev &&
    prev.limit === limit &&
    span >= MIN_SPAN_MS &&
    lane.ratePerMs * span >=
      Math.max(MIN_SPAN_UNITS, lane.tokens ? MIN_SPAN_CALLS * lane.meanCost : MIN_SPAN_UNITS)
  ) {
    const expected = prev.remaining + lane.ratePerMs * span - (spent - prev.spent)
    if (expected < limit * 0.9 && remaining < limit * 0.9) {
      // Signed: `remaining` is a whole number, so a reading is up to a unit off either way, and
      // the errors cancel in the average. Each estimate held at 0 or more had kept only the
      // errors that looked like spending: 5-10 % of a rate of 124 a minute read as a tenant's
      // with no tenant at all, and the pace went that much under the rate (#200063). The
      // average is kept signed too (held at 0, it kept the half of its errors above it) and is
      // held at 0 where the rate is worked out.
      const others = (expected - remaining) / span / lane.ratePerMs
      const share =
        lane.othersShare + OTHERS_WEIGHT * (Math.min(others, MAX_OTHERS) - lane.othersShare)
      lane.othersShare = Math.max(MIN_OTHERS, share)
      lane.samples++
    } else if (remaining >= limit * 0.9) {
      // A bucket near full: whatever others spend, it is not much of the rate now. That is an
      // estimate too, and counted as one (enforced-window.ts lends room after five): behind a
      // minute bucket that a window of a second keeps near full the count stayed at 0 (#100004,
      // #100012) and the room the headers show was never lent (#100018 0.972 -> 0.993 used).
      lane.othersShare *= 1 - OTHERS_WEIGHT
      lane.samples++
    }
    lane.reading = { at, remaining, spent, limit }
  } else if (!prev || prev.limit !== limit || at < prev.at) {
    lane.reading = { at, remaining, spent, limit }
  }
}
