// What settled calls cost the provider beyond their paced cost, counted with the reading that
// covers them (rate-budget.ts): a reading from call S counts the fixes of the calls up to S.
//
// Kept one entry a call until a reading came, they piled up where no reading ever comes (no budget
// announced, which is the common case: bench:scale's simulator, most servers): two objects a call,
// and at a million tasks a live heap of 60-100 MB that V8 grew to a peak RSS of 560-620 MB
// (285 MB before). A reading can only come from a call still in flight or one not sent yet, so
// the fix of a call older than every call in flight is counted by whichever reading comes next:
// counted at once, it needs no entry. Only fixes of calls answered before an older one are kept,
// and those only until the older one is answered.
import type { BudgetDimension } from './budget-reading'
import { BUDGET_DIMENSIONS } from './budget-reading'

type Fix = Readonly<Record<BudgetDimension, number>>

/** Entries kept before the first sweep of those the oldest call in flight no longer holds. */
const MIN_SWEEP = 64

export class UnreadFixes {
  readonly #counted: Record<BudgetDimension, number>
  #readSeq = -1
  // The oldest call not answered yet (seqs rise by one a call), and calls after it answered.
  #oldestOpen = 0
  readonly #answeredAhead = new Set<number>()
  readonly #pending: { seq: number; fix: Fix }[] = []
  #sweepAt = MIN_SWEEP

  /** `counted`: the sums per dimension this adds the fixes to (the caller reads them). */
  constructor(counted: Record<BudgetDimension, number>) {
    this.#counted = counted
  }

  /** What call `seq` cost beyond its paced cost, counted with the reading that covers it. */
  add(seq: number, fix: Fix): void {
    if (seq <= this.#readSeq || seq < this.#oldestOpen) this.#count(fix)
    else {
      this.#pending.push({ seq, fix })
      if (this.#pending.length >= this.#sweepAt) this.#sweep(this.#readSeq)
    }
  }

  /** A reading from call `seq` (later than any read before): the fixes up to it are counted. */
  read(seq: number): void {
    this.#readSeq = seq
    this.#sweep(seq)
  }

  /**
   * Call `seq` is settled, its reading (if any) read: no reading comes from it any more. Last, so
   * that a reading from the oldest call does not count the fixes of calls after it.
   */
  answered(seq: number): void {
    if (seq === this.#oldestOpen) {
      this.#oldestOpen++
      while (this.#answeredAhead.delete(this.#oldestOpen)) this.#oldestOpen++
    } else if (seq > this.#oldestOpen) this.#answeredAhead.add(seq)
  }

  /** Entries kept, for tests: fixes of calls answered while an older one was in flight. */
  get size(): number {
    return this.#pending.length
  }

  // Counts the fixes of calls up to `seq` or older than every call in flight; keeps the rest (in
  // place: a reading does this on every answer).
  #sweep(seq: number): void {
    const upTo = Math.max(seq, this.#oldestOpen - 1)
    const pending = this.#pending
    let kept = 0
    for (const p of pending) {
      if (p.seq > upTo) pending[kept++] = p
      else this.#count(p.fix)
    }
    pending.length = kept
    this.#sweepAt = Math.max(MIN_SWEEP, 2 * kept)
  }

  #count(fix: Fix): void {
    for (const dim of BUDGET_DIMENSIONS) this.#counted[dim] += fix[dim]
  }
}
