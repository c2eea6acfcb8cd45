// A rate nobody announces that allows between one and a few calls per round trip: the
// concurrency controller holds one call, probes two, which a bucket's burst carries, regrows and
// is refused, and is cut back to one: a cycle of a few seconds that refuses several calls each
// time (a rate a second of 1.3 calls per round trip refused 14 % of its calls). A cap does not
// cycle so: a level that carried stays carried until the cap moves. So the third fall to the
// floor within WITHIN_MS, each from a level above it that served calls, starts the floor's pace
// (floor-pace.ts) at what was served since the first of them, cut as a refusal cuts it: the pace
// then spaces the calls and answers the refusals. Once it ended (it grew past three calls per
// round trip, floor-pace.ts), two such falls within a minute of the start start it again.
// Pure: every method takes `now`.

/** Successes above the floor since the last fall that make the next fall part of a cycle. */
const SERVED_ABOVE = 4
/** Falls (from levels that served) within WITHIN_MS that are a cycle. */
const FALLS = 3
/** The falls of a cycle come within this long. */
const WITHIN_MS = 15_000
/** Within this long of a start, the pace having ended, this many falls start it again. */
const AGAIN_MS = 60_000
const AGAIN_FALLS = 2
/** The served rate is cut as a refusal cuts the floor's pace. */
const CUT = 0.8

export class FloorCycle {
  #level = Number.POSITIVE_INFINITY
  #above = 0
  // The recent falls: when, and the successes counted up to each.
  #falls: { at: number; served: number }[] = []
  #served = 0
  #startedAt = Number.NEGATIVE_INFINITY

  /**
   * The limit as an answer found it (`level`, the floor `min`), and whether the answer was a
   * success. Returns the rate to pace at (calls per ms) when this fall to the floor completes a
   * cycle, else null.
   */
  observe(now: number, level: number, min: number, ok: boolean): number | null {
    let start: number | null = null
    if (level <= min && this.#level > min) {
      if (this.#above >= SERVED_ABOVE) start = this.#fell(now)
      this.#above = 0
    }
    this.#level = level
    if (ok) {
      this.#served++
      if (level > min) this.#above++
    }
    return start
  }

  #fell(now: number): number | null {
    this.#falls = this.#falls.filter((f) => f.at >= now - WITHIN_MS)
    this.#falls.push({ at: now, served: this.#served })
    const first = this.#falls[0] as { at: number; served: number }
    const needed = now - this.#startedAt <= AGAIN_MS ? AGAIN_FALLS : FALLS
    if (this.#falls.length < needed || now <= first.at) return null
    this.#falls = []
    this.#startedAt = now
    return (CUT * (this.#served - first.served)) / (now - first.at)
  }
}
