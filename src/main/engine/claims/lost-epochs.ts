// The claim epochs a rolled-back transaction took back. An epoch is a fencing token: whoever holds
// it may renew, complete or release the claim. A claim written in a transaction that SQLite rolled
// back (a full disk) takes the row's epoch back with it, so the next claim of that fingerprint in
// this process would be handed the same number, while the task that held the lost claim still
// holds it too: its release (a task whose pick was lost is requeued and gives its claim back) then
// freed the new owner's claim, a third task claimed it, and the first call was sent twice. Only
// this process saw the lost epochs (they never reached the file), so remembering them here is
// enough to never hand one out again.
import type Database from 'better-sqlite3'
import type { WriteScope } from '../db/step-writes'

/** Epochs handed out by the claims of one connection, and those a rollback took back. */
export class LostEpochs {
  readonly #writes: WriteScope
  /** Epochs handed out in the open transaction (number #openIn), by fingerprint. */
  readonly #open = new Map<string, number>()
  #openIn: number | undefined = undefined
  /** The highest epoch of each fingerprint that a rolled-back transaction took back. */
  readonly #lost = new Map<string, number>()

  constructor(writes: WriteScope) {
    this.#writes = writes
    writes.onRollback?.(() => this.#rolledBack())
  }

  /**
   * The epoch to hand out for `fp` instead of `epoch` (the row's new one), when a rollback took
   * back `epoch` or a later one: the next above it. Undefined: `epoch` was never handed out.
   */
  above(fp: string, epoch: number): number | undefined {
    const lost = this.#lost.get(fp)
    if (lost === undefined || epoch > lost) return undefined
    this.#lost.delete(fp)
    return lost + 1
  }

  /** Notes an epoch handed out in the scope's open transaction. */
  handedOut(fp: string, epoch: number): void {
    const generation = this.#writes.generation
    // Plain writes (no scope) commit each statement: nothing is rolled back behind our back.
    if (generation === undefined) return
    // Another transaction since: the previous one committed (a rollback would have said so).
    if (generation !== this.#openIn) {
      this.#open.clear()
      this.#openIn = generation
    }
    this.#open.set(fp, epoch)
  }

  #rolledBack(): void {
    // The scope still numbers the lost transaction when it says so.
    if (this.#writes.generation === this.#openIn) {
      for (const [fp, epoch] of this.#open) {
        this.#lost.set(fp, Math.max(epoch, this.#lost.get(fp) ?? 0))
      }
    }
    this.#open.clear()
  }
}

// One per connection: every claim store built on the same handle hands out the same epochs.
const byDb = new WeakMap<Database.Database, LostEpochs>()

/** The lost epochs of `db`'s claims (made on first use, with the connection's write scope). */
export function lostEpochsOf(db: Database.Database, writes: WriteScope): LostEpochs {
  let lost = byDb.get(db)
  if (!lost) byDb.set(db, (lost = new LostEpochs(writes)))
  return lost
}
