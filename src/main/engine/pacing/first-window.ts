/** How long after the first answer of the window sent after a cut its recovery is held back. */
const FIRST_WINDOW_RTTS = 0.5
/** The most the limit grows by on one instant's answers within that window. */
const MAX_PER_INSTANT = 1

/**
 * "The window after a cut opens its own slots, and one more." After a cut the limit recovers by
 * `increase` per success towards the refused level, and each answer's slot is refilled at once.
 * When the first window of calls sent after the cut is answered in one instant (a server with a
 * steady latency answers a window sent together together), that growth sends half a window more
 * in the same instant, before any refusal can say the capacity went on falling: on #100040 (a
 * cap of 27 falling to 2 while the window was out) 16 answers took the limit from 16.8 to 24.8,
 * and 22 of 24 calls were refused. So within half a round trip of that window's first answer,
 * the answers of one instant (the clock's resolution) grow the limit by one slot at most: the
 * calls that just succeeded, plus one. Later windows recover as before. Held back longer (every
 * window of the recovery, or bursts of a tenth of a round trip), a capacity that rose during the
 * recovery was found later: regain 10.5 -> 12.9 round trips on family seed 3, and #100045's
 * utilization 0.86 -> 0.64 (bench/scheduler/diag.ts).
 */
export class FirstWindowGrowth {
  #cutAt = Number.NEGATIVE_INFINITY
  #firstAt = Number.POSITIVE_INFINITY
  #instant = Number.NEGATIVE_INFINITY
  #grown = 0

  /** The part of `step` a success at `now` may grow the limit by, `lastCutAt` the last cut. */
  allow(now: number, lastCutAt: number, srtt: number | null, step: number): number {
    if (lastCutAt !== this.#cutAt) {
      this.#cutAt = lastCutAt
      this.#firstAt = now
    }
    if (now - this.#firstAt > FIRST_WINDOW_RTTS * (srtt ?? 0)) return step
    if (now !== this.#instant) {
      this.#instant = now
      this.#grown = 0
    }
    const allowed = Math.max(0, Math.min(step, MAX_PER_INSTANT - this.#grown))
    this.#grown += allowed
    return allowed
  }
}
