// Whether a worker's refusal is lone (partition-pacing.ts: its call retries, the partition does not
// pause) where the store counts every worker's successes (the SQLite file's worker rows), as the
// last admission or release read them:
// - a success of any worker's since this worker's last refusal makes it lone. Counted by one worker
//   alone, three processes on a cap of one slot, one of them sending back to back, read every probe
//   of the others as "refused again with no success between" and paused the partition for its
//   retry-after: a second idle at every probe (#100005: 72.0 → 98.4 % used);
// - so does a call sent before that last refusal came back: refused with it, not after it. A worker
//   holding two slots of a shared limit sent both probes at once, and the second refusal paused
//   the partition for a second.
// A store that counts nothing (memory, a lone lessee's block) leaves the rule as it was.

/** One worker's view of its partition's successes (undefined totals: the store counts none). */
export class PartitionOks {
  /** The partition's successes, as last read. */
  #latest = 0
  /** ... as of this worker's last refusal. */
  #atRefusal = 0
  /** When this worker's last refusal came back; -Infinity before one, or where nothing is counted. */
  #refusedAt = Number.NEGATIVE_INFINITY
  #counted = false

  /** An admission or release read the partition's total; `refusedAt`: it released a refusal. */
  seen(total: number | undefined, refusedAt: number | null = null): void {
    if (total !== undefined) {
      this.#counted = true
      this.#latest = Math.max(this.#latest, total)
    }
    if (refusedAt === null) return
    this.#atRefusal = this.#latest
    if (this.#counted) this.#refusedAt = refusedAt
  }

  /** A refusal of a call sent at `sentAt` is lone by the partition's evidence. */
  lone(sentAt: number): boolean {
    return this.#latest > this.#atRefusal || sentAt < this.#refusedAt
  }
}
