// The window answered after a refusal refills its slots spread, not in one instant, until a call
// sent after the refusal is served. A rate nobody announces whose burst a ramp emptied (slow start
// into ten seconds of tokens, a probe's regrowth into a minute's bucket) is refused one call above
// what was served, cut to what was served as a cap's edge (served-cut.ts), and the rest of that
// window, sent with the refused call, is answered a round trip later in one instant (a steady
// latency) and refilled in it: into the drained bucket, the first refill is refused within tens of
// ms and its siblings of the same millisecond with it, each a refusal that says nothing new
// (#100051: a regrowth refused every 4 s, three siblings behind each first refused refill;
// #100026's ramp: the refusals of its warm-up 10 -> 6). Spread at the growth's pace
// (growth-spread.ts: a window over half a round trip), the first refused refill cuts before the
// next goes. Not the refusal's own instant: there the answers of the window before (a cap refusing
// the calls above it as the calls under it are served) refill what was served at once, and spread,
// the refusals of the siblings found fewer calls out and cut the limit under the cap (#500026, a
// cap of 55: the limit 61 -> 56, and the level's probes out of step, 0.822 -> 0.641 used). So the
// spread begins SPREAD_FROM_RTTS after the refusal (half a round trip: #500031's 10-s bucket
// answered by 503s lost its floor pace's end, 0.986 -> 0.823; a whole one: the window comes back
// before it, #100051 unchanged). A cap the cut reads right serves the first refill, and the
// refills go at once again from that answer on. Kept with refusal-return.ts: a window spread once
// stays spread under a steady latency, and the growth's spread then counted calls above the level
// served sent milliseconds before a success (a cap of 40 -> 60: 8 -> 11 siblings, 0.897 -> 0.871).

import type { Outcome } from '../core/types'
import { CLOCK_RTT_MS, type RoundTrips } from './window-spread'

/** The refills go over 1/this of a round trip. */
const GAIN = 2
/** The spread begins this many smoothed round trips after the refusal. */
export const SPREAD_FROM_RTTS = 0.75

/** Spaces the calls sent after a refusal until one of them is served. Pure: takes `now`. */
export class RefillSpread {
  readonly #trips: RoundTrips
  // When the last refusal of a call sent after the one before came, and the calls out then.
  #refusedAt = Number.NEGATIVE_INFINITY
  #level = 1
  #active = false
  // The spread begins here; the next call goes no earlier than #nextAt.
  #from = Number.NEGATIVE_INFINITY
  #nextAt = Number.NEGATIVE_INFINITY

  constructor(trips: RoundTrips) {
    this.#trips = trips
  }

  /** Ms until the next call may go (0: now). */
  delayMs(now: number): number {
    if (!this.#spreadsAt(now)) return 0
    const wait = this.#nextAt - now
    return wait < 1 ? 0 : Math.ceil(wait)
  }

  /** True while the refills are being spread. */
  spreading(now: number): boolean {
    return this.#spreadsAt(now) && this.#nextAt - now >= 1
  }

  #spreadsAt(now: number): boolean {
    const srtt = this.#trips.srtt
    return this.#active && now >= this.#from && srtt !== null && srtt >= CLOCK_RTT_MS
  }

  /** A call was admitted. */
  admitted(now: number): void {
    if (!this.#spreadsAt(now)) return
    const gap = (this.#trips.srtt as number) / (GAIN * this.#level)
    this.#nextAt = Math.max(this.#nextAt, now) + gap
  }

  /** A call sent at `sentAt` was answered at `now` (before the calls in flight uncount it). */
  settled(now: number, sentAt: number, outcome: Outcome): void {
    if (outcome === 'throttled' || outcome === 'overloaded') {
      // The siblings of a refused burst say nothing new: the level is the first refusal's.
      if (this.#active && sentAt < this.#refusedAt) return
      this.#active = true
      this.#refusedAt = now
      this.#level = Math.max(1, this.#trips.inflight - 1)
      this.#from = now + SPREAD_FROM_RTTS * (this.#trips.srtt ?? 0)
      this.#nextAt = this.#from
    } else if ((outcome === 'ok' || outcome === 'near_limit') && sentAt >= this.#refusedAt) {
      // A call sent in the refusal's millisecond went after it: its success ends the spread.
      this.#active = false
    }
  }
}
