// A pace below one call in flight, for a provider that refuses even one call at a time and says
// neither how long to wait nor what its budget is (a rate limit without headers, slower than one
// call per round trip). Without it, the floor's only answer was a backoff that a success reset,
// so such a provider refused every other call. Calls go at a learned rate instead, AIMD in rate:
// a refusal cuts it (once per episode), successes grow it, slowly near the rate that was refused
// and faster the longer none is (CUBIC's shape), so a rate that rose is found within a few
// hundred calls and a steady one costs about one refusal in fifty. Pure: every method takes `now`.

/** A refusal cuts the rate to this share. */
const CUT = 0.8
/** Growth per success right after a cut. */
const GROWTH = 0.005
/** Successes (or seconds, if more) since the cut over which the growth per success doubles. */
const ACCELERATE_AFTER = 10
/** Weight of a new round trip in the smoothed one. */
const RTT_WEIGHT = 0.125
/** Once the rate allows this many calls per round trip, the floor no longer binds: the pace ends. */
const ENDS_AT_CALLS_PER_RTT = 1.5
/** The most round trips between successes that count as growth. */
const MAX_GAP_RTTS = 10

export class FloorPace {
  #ratePerMs: number | null = null
  #srtt: number | null = null
  #lastSentAt = Number.NEGATIVE_INFINITY
  #lastCutAt = Number.NEGATIVE_INFINITY
  #sinceCut = 0
  #lastOkAt = Number.POSITIVE_INFINITY

  /** Calls per minute while the pace holds, or null. */
  get perMinute(): number | null {
    return this.#ratePerMs === null ? null : this.#ratePerMs * 60_000
  }

  /** Ms until the next call may go. */
  delayMs(now: number): number {
    if (this.#ratePerMs === null) return 0
    return Math.max(0, Math.ceil(this.#lastSentAt + 1 / this.#ratePerMs - now))
  }

  admitted(now: number): void {
    this.#lastSentAt = now
  }

  succeeded(now: number, sentAt: number): void {
    const rtt = Math.max(1, now - sentAt)
    this.#srtt = this.#srtt === null ? rtt : this.#srtt + RTT_WEIGHT * (rtt - this.#srtt)
    if (this.#ratePerMs === null || sentAt <= this.#lastCutAt) return
    this.#sinceCut++
    // A success many round trips after the last one carries as much news as that many would.
    const gap = Math.min(MAX_GAP_RTTS, Math.max(1, (now - this.#lastOkAt) / this.#srtt))
    this.#lastOkAt = now
    const since = Math.max(this.#sinceCut, (now - this.#lastCutAt) / 1000)
    this.#ratePerMs *= 1 + GROWTH * (1 + since / ACCELERATE_AFTER) * gap
    if (this.#ratePerMs * this.#srtt >= ENDS_AT_CALLS_PER_RTT) this.#ratePerMs = null
  }

  /** A refusal at the floor with no budget to pace by: the pace starts, or is cut. */
  refused(now: number, sentAt: number): void {
    if (sentAt <= this.#lastCutAt) return
    this.#lastCutAt = now
    this.#sinceCut = 0
    // One call per round trip is what the floor sent: the pace starts below it.
    const rtt = this.#srtt ?? Math.max(1, now - sentAt)
    const from = this.#ratePerMs ?? 1 / rtt
    this.#ratePerMs = from * CUT
  }
}
