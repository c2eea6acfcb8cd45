/**
 * "A refused probe does not end the quiet stretch." An overshoot is cut to what was served only
 * after a quiet stretch (served-cut.ts: SERVED_QUIET_RTTS round trips without a cut), and it was
 * counted from any cut, a refused probe's too. But a refused probe is one call above a level that
 * carried, and the limit goes back to that level: nothing fell, the stretch stays quiet. Counted
 * from it, a cap that rose just after its probe was refused was found by the next probe, and the
 * regrowth's overshoot a few round trips later halved and paused the partition (#100021: a cap of
 * 30 refused a probe of 31 at 79.3 s, rose to 55 at 79.6 s; the regrowth refused at 57 3.6 s later
 * was cut to 31 and paused a second, where what was served said 55). A refusal of a probe that turns
 * out a fall (probe-window.ts) ends the stretch at that cut after all.
 */
export class QuietStretch {
  #since = Number.NEGATIVE_INFINITY

  /** When the stretch began: the last cut that was not a refused probe. */
  get since(): number {
    return this.#since
  }

  /** A cut at `now`; `refusedProbe`: it answered a probe above a level that held. */
  cut(now: number, refusedProbe: boolean): void {
    if (!refusedProbe) this.#since = now
  }

  /** The refused probe's cut at `cutAt` was a fall: the stretch ended there. */
  fell(cutAt: number): void {
    this.#since = Math.max(this.#since, cutAt)
  }

  restore(since: number): void {
    this.#since = since
  }
}
