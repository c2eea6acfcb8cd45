// Where a lane of the announced pace starts. A lane is born with the first answer that announces
// its budget, and at first it holds its whole burst: the announced window, before any refusal
// narrowed it. But a worker that joins a partition whose other workers already narrowed the pace
// to one call at a time (learned-pace.ts) is born one call at a time, and a lane of one call
// with no call taken yet held nothing and asked nothing: its first call went at once, into a
// provider whose bucket of one call the others kept empty, and left a debt of a whole call. On
// the live leg's #100010 (three processes, a per-call request limit) each process that joined
// sent one call at once, was refused, and waited two of its spacings (14-18 s) for the next.
// Born one call at a time, the lane counts the call whose answer announced it, as the pace would
// have had the lane been known when it was sent: that call's cost is its first mean call, taken
// when it was sent, refilled since.

/** Where a lane born one call at a time stands. */
export interface FreshLane {
  /** The mean cost of a call here, from the call that announced the lane. */
  meanCost: number
  /** The lane's level now. */
  level: number
}

/**
 * A lane born now, one call at a time, at `ratePerMs` (the rate that is ours), from the call that
 * announced it: sent at `sentAt`, costing `cost`; `held` the share of a mean call the lane holds
 * one call at a time (a whole one for requests, less for tokens).
 */
export function freshSingleLane(
  ratePerMs: number,
  sentAt: number,
  cost: number,
  held: number,
  now: number,
): FreshLane {
  const capacity = cost * held
  const level = Math.min(capacity, capacity - cost + ratePerMs * Math.max(0, now - sentAt))
  return { meanCost: cost, level }
}
