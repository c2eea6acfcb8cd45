// After a refusal, the window's refills go spread until a call sent after it is served. A refusal
// of a rate nobody announces (a bucket whose burst the ramp emptied: a slow start into ten seconds
// of tokens, a regrowth into a minute's bucket) is cut to what was served as a cap's edge
// (served-cut.ts), and then the window in flight is answered in one instant (a steady latency) and
// its slots refilled in that instant: into a drained bucket, the first refill is refused within
// tens of ms and its siblings of the same millisecond with it, each a refusal that says nothing new
// (#100026: 10 of its 11 refusals in the warm-up's ramp, 3 of them such siblings; #100051: a probe's
// regrowth refused every 4 s, 3 siblings behind each first refusal). Spread at the growth's pace
// (growth-spread.ts: a window over half a round trip), the first refused refill cuts before the
// next goes. A cap that the cut reads right serves the first refill sent after it, and the refills
// go at once again from that answer on: about a round trip of spacing per cut.

import type { Outcome } from '../core/types'
import { CLOCK_RTT_MS, type RoundTrips } from './window-spread'

/** The refills go over 1/this of a round trip. */
const GAIN = 2

/** Spaces the calls sent after a refusal until one of them is served. Pure: takes `now`. */
export class RefillSpread {
  readonly #trips: RoundTrips
  // When the last refusal of a call sent after the one before came, and the calls out then.
  #refusedAt = Number.NEGATIVE_INFINITY
  #level = 1
  #active = false
  #nextAt = Number.NEGATIVE_INFINITY

  constructor(trips: RoundTrips) {
    this.#trips = trips
  }

  /** Ms until the next call may go (0: now). */
  delayMs(now: number): number {
    if (!this.#spreads()) return 0
    const wait = this.#nextAt - now
    return wait < 1 ? 0 : Math.ceil(wait)
  }

  /** True while the refills are being spread. */
  spreading(now: number): boolean {
    return this.#spreads() && this.#nextAt - now >= 1
  }

  #spreads(): boolean {
    const srtt = this.#trips.srtt
    return this.#active && srtt !== null && srtt >= CLOCK_RTT_MS
  }

  /** A call was admitted. */
  admitted(now: number): void {
    if (!this.#spreads()) return
    const gap = (this.#trips.srtt as number) / (GAIN * this.#level)
    this.#nextAt = Math.max(this.#nextAt, now) + gap
  }

  /** A call sent at `sentAt` was answered at `now` (before the calls in flight uncount it). */
  settled(now: number, sentAt: number, outcome: Outcome, waitNamed = false): void {
    if (outcome === 'throttled' || outcome === 'overloaded') {
      if (waitNamed) return
      // The siblings of a refused burst say nothing new: the level is the first refusal's.
      if (this.#active && sentAt < this.#refusedAt) return
      this.#active = true
      this.#refusedAt = now
      this.#level = Math.max(1, this.#trips.inflight - 1)
      this.#nextAt = now
    } else if ((outcome === 'ok' || outcome === 'near_limit') && sentAt >= this.#refusedAt) {
      this.#active = false
    }
  }
}
