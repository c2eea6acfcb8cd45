/** Round trips without a cut before an overshoot is read as a cap's edge, not a fall or a rate. */
export const SERVED_QUIET_RTTS = 8

/**
 * "An overshoot is cut to what was served." Growing past a capacity (slow start, or the regrowth
 * after a probe that carried), the limit is refused one level above the calls it had in flight
 * when its calls were served, and a cut by half then gave up half the capacity for the round
 * trips its recovery took (#100015: a cap of 39 refused at 40.5, cut to 20.3, back after 5 s; the
 * whole draw 0.65 of the capacity used). A success says the provider served it with that many
 * calls of ours out (itself counted): after a quiet stretch (no cut for SERVED_QUIET_RTTS round
 * trips) the cut of a refusal above every level that held goes no lower than one call under the
 * most served since the last cut. One call under: a success counts calls not yet refused, and a
 * cap may move right after. The first answer of an instant only: the answers of one instant
 * refill their slots in it, and a success counted after them counts calls that will be refused.
 * Not after a cut within the quiet stretch: a rate nobody announces refuses again at once, and
 * there a cut by half is what brings the sends under it.
 */
export class ServedLevel {
  #most = 0
  #lastAt = Number.NEGATIVE_INFINITY

  /** A success of a call sent after the last cut, answered at `now` with `inflight` out. */
  served(now: number, inflight: number): void {
    if (now !== this.#lastAt) this.#most = Math.max(this.#most, inflight)
    this.#lastAt = now
  }

  /**
   * At a new cut: the lowest the limit goes (0: no floor), counting from afresh. `quietSince`
   * is when the quiet stretch began (the last cut but a refused probe, quiet-stretch.ts), `srtt`
   * the smoothed round trip.
   */
  cut(now: number, quietSince: number, srtt: number | null): number {
    const most = this.#most
    this.#most = 0
    if (srtt === null || now - quietSince < SERVED_QUIET_RTTS * srtt) return 0
    return Math.max(0, most - 1)
  }

  /** The most served since the last cut, and when the last success came, for the shared state. */
  get state(): { most: number; lastAt: number } {
    return { most: this.#most, lastAt: this.#lastAt }
  }

  restore(most: number, lastAt: number): void {
    this.#most = most
    this.#lastAt = lastAt
  }
}
