// Lean admission (issue 24): a worker alone on a partition of the SQLite file leases the partition
// in one write — its row holds every slot of the concurrency, so no other worker can take one —
// and then admits, releases and charges the announced budget in memory, with no write per call.
// Holding every slot, it is the only one who can charge the shared budget, so keeping the budget
// in memory spends it once all the same. It hands back the unused slots and the budget as it kept
// it when another worker shows demand (a live row with slots or waiting calls: seen by a look at
// the file each time `PRAGMA data_version` says another connection committed), when it has
// nothing in flight or waiting, when its scheduler closes, and before an operator's change. A
// killed lessee's block comes back as any dead worker's slots do: when its lease runs out.
import type Database from 'better-sqlite3'
import type {
  Admission,
  OutcomeCount,
  PacingRecord,
  PacingView,
  RecordChange,
  ReleaseRequest,
  Released,
} from './store'
import type { BudgetCost, SharedBudget } from './shared-budget'
import { budgetWaitMs, mergeBudget, releaseBudget, takeBudget } from './shared-budget'
import type { SqliteBudgets } from './store-sqlite-budget'
import { inTransaction } from './store-sqlite-sql'
import { scopedDataVersion } from '../db/step-writes'
import { applyChange } from './store'
import { isCut } from './learned-pace'

/** A block this store's worker holds on a partition. */
export interface LeanBlock {
  worker: string
  /** Slots handed out: this worker's calls in flight. */
  used: number
  /** The slots its row holds for it: max(concurrency, used). */
  slots: number
  /** The record version the block was verified against: the row's, as this worker last wrote it. */
  version: number
  /**
   * What the controller learned since that only it reads (its memory, the fraction of its limit):
   * kept here at the row's version and written with the row's next write, not once per call.
   */
  pending: PacingRecord | null
  /** `PRAGMA data_version` when it was last verified: unchanged, no other connection committed. */
  dataVersion: number
  /** The shared budget as this worker keeps it while it holds the block. */
  budget: SharedBudget
  /** The row's budget as last read or written: another writer shows as a different one. */
  base: SharedBudget
  waiting: number
  /** Outcomes not written to the row yet. */
  counts: Record<OutcomeCount, number>
  /** When the row's lease is renewed next (a third of the lease). */
  renewAt: number
}

/** What the store tells the leases about the partition (its check, read under the lock). */
export interface LeanCheck {
  version: number
  othersActive: number
}

/** The lessee's row as it is written: slots, waiting, lease and the outcomes since the last write. */
export const LEAN_SQL = {
  dataVersion: 'PRAGMA data_version',
  flush: `INSERT INTO pacing_workers(partition, worker, slots, waiting, lease_until, throttles,
       successes, errors)
     VALUES (@partition, @worker, @slots, @waiting, @leaseUntil, @throttles, @successes, @errors)
     ON CONFLICT(partition, worker) DO UPDATE SET slots = excluded.slots,
       waiting = excluded.waiting, lease_until = MAX(lease_until, excluded.lease_until),
       throttles = throttles + excluded.throttles, successes = successes + excluded.successes,
       errors = errors + excluded.errors`,
} as const

/** The blocks one SqlitePacingStore's workers hold, by partition (one worker each). */
export class LeanLeases {
  readonly #blocks = new Map<string, LeanBlock>()
  readonly #db: Database.Database
  readonly #dataVersion: Database.Statement<[], number>
  readonly #flush: Database.Statement<[Record<string, string | number>]>
  readonly #budgets: SqliteBudgets
  readonly #leaseMs: number
  readonly #write: (partition: string, b: LeanBlock, slots: number, leaseUntil: number) => void
  readonly #put: (record: PacingRecord, version: number) => boolean
  readonly #commit: (partition: string, b: LeanBlock, record: PacingRecord, now: number) => boolean

  /** `put` writes a record on the row if it is still at `version` (inside a transaction). */
  constructor(
    db: Database.Database,
    budgets: SqliteBudgets,
    leaseMs: number,
    put: (record: PacingRecord, version: number) => boolean,
  ) {
    this.#put = put
    this.#db = db
    this.#dataVersion = db.prepare<[], number>(LEAN_SQL.dataVersion).pluck()
    this.#flush = db.prepare(LEAN_SQL.flush)
    this.#budgets = budgets
    this.#leaseMs = leaseMs
    this.#write = inTransaction(db, (partition, b, slots, until) =>
      this.#writeRow(partition, b, slots, until),
    )
    // A decision every worker must see at once (a new concurrency, a pause, a limit change).
    this.#commit = inTransaction(db, (partition, b, record, now) => {
      if (!this.#put(record, b.version)) return false
      b.version = record.version
      b.pending = null
      b.slots = Math.max(record.concurrency, b.used)
      this.#writeRow(partition, b, b.slots, now + this.#leaseMs)
      return true
    })
  }

  /** The partition's block, whoever holds it. */
  get(partition: string): LeanBlock | undefined {
    return this.#blocks.get(partition)
  }

  /**
   * The block `worker` holds on the partition, verified still its own: undefined when it holds
   * none, or when another worker showed demand or the record moved (the block is handed back).
   */
  held(
    partition: string,
    worker: string,
    now: number,
    check: () => LeanCheck,
  ): LeanBlock | undefined {
    const b = this.#blocks.get(partition)
    if (!b) return undefined
    if (b.worker !== worker) {
      this.handBack(partition, now)
      return undefined
    }
    const dataVersion = scopedDataVersion(this.#db) ?? (this.#dataVersion.get() as number)
    if (dataVersion !== b.dataVersion) {
      const c = check()
      if (c.othersActive > 0 || c.version !== b.version) {
        this.handBack(partition, now)
        return undefined
      }
      b.dataVersion = dataVersion
    }
    if (now >= b.renewAt) this.renew(partition, b, now)
    return b
  }

  /**
   * Takes the block, inside the caller's IMMEDIATE transaction after its check found the worker
   * alone: every slot of the concurrency on its row (the `mine` it holds already are its first
   * used ones), and the budget as the row holds it.
   */
  take(partition: string, worker: string, record: PacingRecord, mine: number, now: number): void {
    const budget = this.#budgets.read(partition)
    const b: LeanBlock = {
      worker,
      used: mine,
      slots: Math.max(record.concurrency, mine),
      version: record.version,
      pending: null,
      dataVersion: 0,
      budget,
      base: budget,
      waiting: 0,
      counts: { success: 0, throttle: 0, error: 0 },
      renewAt: now + this.#renewEvery(),
    }
    this.#writeRow(partition, b, b.slots, now + this.#leaseMs)
    this.#blocks.set(partition, b)
  }

  /** After the take's commit: later commits of other connections are what `held` looks for. */
  taken(partition: string): void {
    const b = this.#blocks.get(partition)
    if (b) b.dataVersion = this.#dataVersion.get() as number
  }

  /** A take that was rolled back. */
  drop(partition: string): void {
    this.#blocks.delete(partition)
  }

  /** An admission from the block, in memory: a free slot of the concurrency and the budget. */
  admit(
    b: LeanBlock,
    record: PacingRecord,
    now: number,
    waiting: number,
    cost: BudgetCost | undefined,
  ): Admission {
    b.waiting = waiting
    // Alone on the partition: its sends may take the whole announced rate.
    const refused = { admitted: false, record, inflight: b.used, othersWaiting: 0, workers: 1 }
    if (b.used >= record.concurrency || record.pausedUntil > now) return refused
    if (!cost) {
      b.used++
      return { admitted: true, record, inflight: b.used, othersWaiting: 0, workers: 1 }
    }
    const taken = takeBudget(b.budget, now, cost)
    if (taken === 'budget') {
      return { ...refused, budgetWaitMs: Math.max(1, budgetWaitMs(b.budget, now, cost)) }
    }
    b.budget = taken.next
    b.used++
    const ticket = taken.ticket
    return { admitted: true, record, inflight: b.used, othersWaiting: 0, workers: 1, ticket }
  }

  /**
   * A release from the block, in memory unless the decision changes what every worker must see:
   * then it is written at once, on the row it was made on. undefined when the row had moved (an
   * operator's change): the block goes back and the release is made the shared way.
   */
  release(
    partition: string,
    b: LeanBlock,
    current: PacingRecord,
    request: ReleaseRequest,
  ): Released | undefined {
    const { now, waiting, outcome, decide, handoff } = request
    const change = decide ? decide(current, b.used) : null
    let record = current
    let changed = false
    if (change) {
      const next = applyChange(current, change)
      if (soft(change, current, next)) {
        record = { ...next, version: current.version }
        b.pending = record
      } else if (this.#commit(partition, b, next, now)) {
        record = next
        changed = true
      } else {
        this.handBack(partition, now)
        return undefined
      }
    }
    const slotsAllow =
      handoff === true && b.used - 1 < record.concurrency && record.pausedUntil <= now
    const r = releaseBudget(b.budget, now, request.budget, slotsAllow, request.handoffCost)
    if (r.next) b.budget = r.next
    if (outcome) b.counts[outcome]++
    if (!r.handedOff) b.used = Math.max(0, b.used - 1)
    b.waiting = Math.max(0, waiting - (r.handedOff ? 1 : 0))
    // Nothing in flight or waiting: the block goes back, so an idle lessee keeps nobody out.
    if (b.used === 0 && b.waiting === 0) this.handBack(partition, now)
    const released = { record, inflight: b.used, changed, handedOff: r.handedOff }
    return r.ticket ? { ...released, ticket: r.ticket } : released
  }

  /** Renews the row's lease and writes the counts and the budget as kept so far. */
  renew(partition: string, b: LeanBlock, now: number, waiting = b.waiting): void {
    b.waiting = waiting
    this.#write(partition, b, b.slots, now + this.#leaseMs)
    b.renewAt = now + this.#renewEvery()
  }

  /**
   * Hands the block back: the row keeps the slots in flight only, with the budget and counts as
   * kept. `now` null (the scheduler closed): the lease is left as it was, as a release leaves it.
   */
  handBack(partition: string, now: number | null): void {
    const b = this.#blocks.get(partition)
    if (!b) return
    this.#blocks.delete(partition)
    this.#write(partition, b, b.used, now === null ? 0 : now + this.#leaseMs)
  }

  /** Every block held, by partition. */
  *blocks(): Iterable<[string, LeanBlock]> {
    yield* this.#blocks
  }

  #renewEvery(): number {
    return Math.max(1, Math.floor(this.#leaseMs / 3))
  }

  /** The row, the record the controller moved and the budget, inside a transaction. */
  #writeRow(partition: string, b: LeanBlock, slots: number, leaseUntil: number): void {
    const pending = b.pending
    if (pending) {
      // At the next version, unless an operator's change moved the row: theirs stands.
      const record = { ...pending, version: b.version + 1 }
      if (this.#put(record, b.version)) b.version = record.version
      b.pending = null
    }
    const row = this.#budgets.read(partition)
    // Another writer charged the row's budget meanwhile (it could only while this block held too
    // few slots for a moment): its admissions count as well.
    const budget = row === b.base ? b.budget : mergeBudget(b.base, b.budget, row)
    if (budget !== row) this.#budgets.write(partition, budget)
    this.#flush.run({
      partition,
      worker: b.worker,
      slots,
      waiting: b.waiting,
      leaseUntil,
      throttles: b.counts.throttle,
      successes: b.counts.success,
      errors: b.counts.error,
    })
    b.budget = budget
    b.base = budget
    b.counts = { success: 0, throttle: 0, error: 0 }
  }
}

/** A partition's view with this store's block on it: its unused slots are nobody's calls. */
export function leanView(view: PacingView, b: LeanBlock | undefined): PacingView {
  if (!b) return view
  return {
    ...view,
    inflight: view.inflight - (b.slots - b.used),
    throttles: view.throttles + b.counts.throttle,
    successes: view.successes + b.counts.success,
    errors: view.errors + b.counts.error,
  }
}

/**
 * A change only the lessee's controller reads: its memory or the fraction of its limit, or the
 * learned paces' growth (a cut is written at once: learned-pace.ts), with the same concurrency,
 * no pause, no limit change to announce, no params.
 */
function soft(change: RecordChange, current: PacingRecord, next: PacingRecord): boolean {
  return (
    change.params === undefined &&
    change.lastChange === undefined &&
    (change.learned === undefined || !isCut(current.learned, change.learned)) &&
    next.pausedUntil === current.pausedUntil &&
    next.concurrency === current.concurrency
  )
}
