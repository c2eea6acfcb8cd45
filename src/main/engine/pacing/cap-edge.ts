/**
 * "A cap's overshoot pauses nothing." The pause is decided in the partition before the controller
 * hears a refusal, and a second refusal with no success between pauses the partition: the
 * evidence of an empty bucket. But growing past a cap is refused for each call above it, in the
 * same instant, while the calls under it are served; after a quiet stretch the controller reads
 * that as a cap's edge and cuts to what was served (served-cut.ts), and a pause on top of that cut
 * stopped every call for the refusal's wait (#100021: 55 in flight down to 21 for a second). So
 * the refusals of calls sent before such a cut are that cut's business: they pause nothing. A
 * refusal of a call sent after it is a new episode, which a quiet stretch no longer precedes: it
 * halves, and a drained bucket that goes on refusing pauses as before.
 */
export class CapEdge {
  #cutAt = Number.NEGATIVE_INFINITY

  /** A cut at `now`: `served` when it is an overshoot's cut to what was served. */
  cut(now: number, served: boolean): void {
    this.#cutAt = served ? now : Number.NEGATIVE_INFINITY
  }

  /**
   * A refusal of a call sent at `sentAt`, the last cut at `lastCutAt`: true when it is one of the
   * calls above the edge that cut answered.
   */
  explains(sentAt: number, lastCutAt: number): boolean {
    return this.#cutAt === lastCutAt && sentAt <= lastCutAt
  }
}
