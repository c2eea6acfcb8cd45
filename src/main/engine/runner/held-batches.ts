/**
 * The batches a stopped partition held (paused, or stopped in a `pacer run`), by partition: what
 * resuming the partition, or the batch, resumes.
 */
export class HeldBatches {
  readonly #byPartition = new Map<string, Set<string>>()

  add(partition: string, batchId: string): void {
    let batches = this.#byPartition.get(partition)
    if (!batches) this.#byPartition.set(partition, (batches = new Set()))
    batches.add(batchId)
  }

  /** The partition's batches (for '*', every partition's), forgotten as they are returned. */
  take(partition: string): string[] {
    const names = partition === '*' ? [...this.#byPartition.keys()] : [partition]
    const out = new Set<string>()
    for (const name of names) {
      for (const b of this.#byPartition.get(name) ?? []) out.add(b)
      this.#byPartition.delete(name)
    }
    return [...out]
  }

  /** The partitions that held the batch, forgotten (it is being resumed). */
  takeHolding(batchId: string): string[] {
    const out: string[] = []
    for (const [partition, batches] of this.#byPartition) {
      if (batches.delete(batchId)) out.push(partition)
      if (batches.size === 0) this.#byPartition.delete(partition)
    }
    return out
  }
}
