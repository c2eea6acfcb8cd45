// Calls that take the partition above the level it was served at go spread, not in one instant.
// A provider refusing one call of a burst refuses its siblings sent in the same instant: they count
// as throttled and say nothing new (the refusal of the first is back within tens of ms, long
// before the cut can stop the rest). Over the family (bench/scheduler/diag-causes.ts, seeds 0-5),
// 2,364 of 7,532 refusals were such siblings of the same millisecond, and 1,132 of the 2,077
// refusals of the draws over 3 % throttled were siblings: slow start's doubling and the regrowth
// after a cut or a probe answer a window in one instant and send its growth with it. So a call
// above the most calls out when a call was served since the last refusal (the first answer of an
// instant, as served-cut.ts counts it) goes at most one per 1/(GAIN x that level) of a round
// trip: TCP's pacing in slow start (a window per round trip at twice its rate). Refills of
// answered slots go at once, so a stable level loses nothing (spreading every call of an
// instant, refills too, cost a stable cap of 20 slots two to three points: docs/pacing.md).
// The controller counts the calls the spread holds back as in use (adaptive.ts grows only a
// limit in use). Kept with slow-start-edge.ts: alone it cost a fresh start (docs/pacing.md).

import type { Outcome } from '../core/types'
// The round trip as window-spread.ts smooths it, and the clock's resolution below which no spread.
import { CLOCK_RTT_MS, type RoundTrips } from './window-spread'
import { RefillSpread } from './refill-spread'
import { RefusalReturn, unconfirmed } from './refusal-return'

/** The calls above the served level go over 1/this of a round trip. */
const GAIN = 2

/**
 * The calls in flight and the round trip are the window spread's (`trips`, one count for both):
 * admitted after it counted the call, settled before it uncounts it.
 */
export class GrowthSpread {
  readonly #trips: RoundTrips
  // The most calls out when one was served since the last refusal; a refusal lowers it.
  #served = 0
  #lastAnswerAt = Number.NEGATIVE_INFINITY
  // Calls sent above the served level and still out, by when they went (their refills are not).
  readonly #above = new Map<number, number>()
  #aboveOut = 0
  #nextAt = Number.NEGATIVE_INFINITY

  // The refills after a refusal, spread until a call sent after it is served (refill-spread.ts).
  readonly #refill: RefillSpread
  // How long a refusal takes to come back: a call above younger than that is not yet held.
  readonly #refusals = new RefusalReturn()

  constructor(trips: RoundTrips) {
    this.#trips = trips
    this.#refill = new RefillSpread(trips)
  }

  /** Ms until the next call may go (0: now); `announced`: a budget paces the calls instead. */
  delayMs(now: number, announced: boolean): number {
    if (announced) return 0
    const refill = this.#refill.delayMs(now)
    if (!this.#spreads() || !this.#isAbove(this.#trips.inflight + 1)) return refill
    const wait = this.#nextAt - now
    return Math.max(refill, wait < 1 ? 0 : Math.ceil(wait))
  }

  /** True while calls above the served level are being spread (`announced` as for delayMs). */
  spreading(now: number, announced: boolean): boolean {
    if (announced) return false
    return this.#refill.spreading(now) || (this.#spreads() && this.#nextAt - now >= 1)
  }

  #spreads(): boolean {
    const srtt = this.#trips.srtt
    return srtt !== null && srtt >= CLOCK_RTT_MS
  }

  #isAbove(out: number): boolean {
    return out - this.#aboveOut > this.#served
  }

  /** A call was admitted. */
  admitted(now: number): void {
    this.#refill.admitted(now)
    if (!this.#spreads() || !this.#isAbove(this.#trips.inflight)) return
    this.#aboveOut++
    this.#above.set(now, (this.#above.get(now) ?? 0) + 1)
    const gap = (this.#trips.srtt as number) / (GAIN * Math.max(1, this.#served))
    this.#nextAt = Math.max(this.#nextAt, now) + gap
  }

  /** A call was answered. */
  settled(now: number, sentAt: number, outcome: Outcome): void {
    const served = outcome === 'ok' || outcome === 'near_limit'
    const refused = outcome === 'throttled' || outcome === 'overloaded'
    const out = this.#trips.inflight
    this.#refill.settled(now, sentAt, outcome)
    const above = this.#above.get(sentAt) ?? 0
    if (above > 0) {
      this.#aboveOut--
      if (above === 1) this.#above.delete(sentAt)
      else this.#above.set(sentAt, above - 1)
    }
    if (served) {
      // The answers of one instant refill their slots in it: only the first says what was out.
      // Not the calls above whose refusal may still be on its way (refusal-return.ts).
      const young = unconfirmed(this.#above, now, this.#refusals.ms(this.#trips.srtt ?? 0))
      if (now !== this.#lastAnswerAt) this.#served = Math.max(this.#served, out - young)
    }
    if (refused) {
      this.#refusals.refused(now, sentAt)
      this.#served = Math.min(this.#served, Math.max(0, out - 1))
    }
    this.#lastAnswerAt = now
  }
}
