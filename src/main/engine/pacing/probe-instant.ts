/**
 * "A probe's instant refuses one call." A probe raises the limit one slot above the level that
 * held, and the calls sent in its instant (the probe and the refills of the answers that came with
 * it) or before it went with at most that level and one more out: a cap still at the level that
 * held refuses one of them, however the provider orders them. A second refusal among them says the
 * capacity fell under what held, though each one comes back with the calls out counting down from
 * that level, as the refusals of a probe's window do when a provider is slow to refuse
 * (probe-window.ts: those are calls sent after the probe, into its window). Read as the probe's
 * window, a fall to one slot met by a probe kept the level that held, and the recovery climbed
 * back to it and was refused again (#100007, a cap of 2 falling to 1 at its probe of 3: refused
 * again at 2 nine seconds later; #100056, 5 -> 1 at a probe of 6 with five refills in its instant).
 */
export class ProbeInstant {
  #probeAt = Number.NEGATIVE_INFINITY
  #cutAt = Number.NaN
  #refused = 0

  /** The limit probes at `now` (true: it is probing). */
  probe(now: number): true {
    this.#probeAt = now
    this.#cutAt = Number.NaN
    return true
  }

  /** The probe was refused by a call sent at `sentAt`, cutting at `now`: one refused probe. */
  refused(sentAt: number, now: number): 1 {
    this.#cutAt = now
    this.#refused = sentAt <= this.#probeAt ? 1 : 0
    return 1
  }

  /**
   * A refusal of a call sent at `sentAt` answering the cut at `lastCutAt`: true when it is the
   * second of the probe's instant, a capacity that fell under what held.
   */
  fell(sentAt: number, lastCutAt: number): boolean {
    if (lastCutAt !== this.#cutAt || sentAt > this.#probeAt) return false
    return ++this.#refused >= 2
  }
}
