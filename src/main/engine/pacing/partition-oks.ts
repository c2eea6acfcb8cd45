// Whether the partition had a success since this worker's last refusal, every worker's calls
// counted: the store's count of the partition's successes (the SQLite file's worker rows), as
// the last admission or release read it. A refusal among successes is lone (partition-pacing.ts:
// its call retries, the partition does not pause), and it is so whichever worker's calls
// succeeded. Counted by one worker alone, three processes on a cap of one slot, one of them
// sending back to back, read every probe of the others as "refused again with no success
// between" and paused the partition for its retry-after: a second idle at every probe.

/** One worker's view of its partition's successes (undefined totals: the store counts none). */
export class PartitionOks {
  /** The partition's successes, as last read. */
  #latest = 0
  /** ... as of this worker's last refusal. */
  #atRefusal = 0

  /** An admission or release read the partition's total. */
  seen(total: number | undefined): void {
    if (total !== undefined && total > this.#latest) this.#latest = total
  }

  /** This worker's refusal was released: the total then. */
  refused(total: number | undefined): void {
    this.seen(total)
    this.#atRefusal = this.#latest
  }

  /** Some worker's call succeeded since this worker's last refusal. */
  get since(): boolean {
    return this.#latest > this.#atRefusal
  }
}
