import type Database from 'better-sqlite3'
import type {
  Admission,
  PacingRecord,
  PacingStore,
  PacingView,
  SessionInit,
  PollPolicy,
  RecordChange,
  ReleaseRequest,
  Released,
  WorkerLease,
} from './store'
import { Doorbell, applyChange, checkStoreMs, fairShare, newRecord } from './store'
import type { BudgetCost, BudgetTicket, SharedBudget } from './shared-budget'
import { FIRST_TICKET, announced, budgetWaitMs } from './shared-budget'
import { SqliteBudgets } from './store-sqlite-budget'
import { LeanLeases, leanView, type LeanBlock } from './store-sqlite-lean'
import {
  PACING_SQL,
  inTransaction,
  recordOf,
  rowArgs,
  viewOf,
  type CheckRow,
  type PartitionRow,
  type ViewRow,
} from './store-sqlite-sql'

export interface SqlitePacingStoreOptions {
  /** An open Pacer database (db/index.ts openDatabase): WAL, busy_timeout, schema v3+. */
  db: Database.Database
  /** @default 30_000 */
  leaseMs?: number
  /** First poll of a blocked admission, doubled up to pollMaxMs. @default 2 */
  pollMinMs?: number
  /** @default 50 */
  pollMaxMs?: number
  /**
   * A worker alone on a partition leases it in blocks: one write for many calls instead of one
   * each (store-sqlite-lean.ts). Off, every admission and release is a write every process sees.
   * @default false
   */
  lean?: boolean
}

type Args = Record<string, string | number | null>

/**
 * The pacing store in the SQLite file: every process on the database shares each partition's
 * budget. Admission is one conditional upsert (the live slots of all workers, summed in the same
 * statement, below the record's concurrency); release, join and parameter changes are IMMEDIATE
 * transactions, so a decision is always made on the record it is written to. The statements and
 * rows: store-sqlite-sql.ts.
 */
export class SqlitePacingStore implements PacingStore {
  readonly leaseMs: number
  readonly poll: PollPolicy
  readonly #bell = new Doorbell()
  // Parsed records by partition, reused while the version holds: parsing JSON on every
  // admission would cost more than the admission itself.
  readonly #cache = new Map<string, PacingRecord>()
  readonly #texts = new WeakMap<object, string>()
  readonly #check: Database.Statement<[Args], CheckRow>
  readonly #row: Database.Statement<[string], PartitionRow>
  readonly #take: Database.Statement<[Args]>
  readonly #free: Database.Statement<[Args]>
  readonly #write: Database.Statement<[Args]>
  readonly #change: Database.Statement<[Args]>
  readonly #live: Database.Statement<[Args], { n: number }>
  readonly #drop: Database.Statement<[string]>
  readonly #lease: Database.Statement<[Args]>
  readonly #views: Database.Statement<[Args], ViewRow>
  readonly #budgets: SqliteBudgets
  readonly #charge: (args: TakeArgs, cost: BudgetCost) => BudgetTicket | 'budget' | 'slots'
  readonly #join: (partition: string, worker: string, init: SessionInit, now: number) => Joined
  readonly #release: (partition: string, worker: string, r: ReleaseRequest) => Released
  readonly #update: (partition: string, decide: UpdateDecide) => Updated | undefined
  readonly #heartbeat: (worker: string, leases: readonly WorkerLease[], now: number) => void
  readonly #lean: LeanLeases | null
  readonly #enter: (partition: string, worker: string, version: number, now: number) => boolean

  constructor({
    db,
    leaseMs = 30_000,
    pollMinMs = 2,
    pollMaxMs = 50,
    lean = false,
  }: SqlitePacingStoreOptions) {
    this.leaseMs = checkStoreMs('leaseMs', leaseMs, 1)
    checkStoreMs('pollMinMs', pollMinMs, 1)
    this.poll = { minMs: pollMinMs, maxMs: checkStoreMs('pollMaxMs', pollMaxMs, pollMinMs) }

    this.#check = db.prepare(PACING_SQL.check)
    this.#row = db.prepare(PACING_SQL.row)
    this.#take = db.prepare(PACING_SQL.take)
    this.#free = db.prepare(PACING_SQL.free)
    this.#change = db.prepare(PACING_SQL.change)
    this.#write = db.prepare(PACING_SQL.write)
    this.#live = db.prepare(PACING_SQL.live)
    this.#drop = db.prepare(PACING_SQL.drop)
    this.#budgets = new SqliteBudgets(db)
    this.#lease = db.prepare(PACING_SQL.lease)
    this.#views = db.prepare(PACING_SQL.views)

    this.#join = inTransaction(db, (partition, worker, init, now) => {
      const row = this.#row.get(partition)
      const live = row ? (this.#live.get({ partition, now })?.n ?? 0) : 0
      let record: PacingRecord
      const created = !row || live === 0
      if (created) {
        // Nobody drives it: a new session, and the dead workers' rows (and counts) go with the old.
        this.#drop.run(partition)
        record = newRecord(partition, init, (row?.version ?? 0) + 1)
        this.#put(record, now, true)
      } else {
        record = this.#parse(row)
      }
      this.#lease.run({ partition, worker, slots: null, waiting: null, leaseUntil: now + leaseMs })
      return { record, created }
    })
    // The costed take (store-sqlite-budget.ts) under the write lock.
    this.#charge = inTransaction(db, (args: TakeArgs, cost: BudgetCost) =>
      this.#budgets.take(args.partition, args.now, cost, () => this.#take.run(args).changes === 1),
    )
    this.#release = inTransaction(db, (partition, worker, request) => {
      const { now, waiting, outcome, decide, handoff } = request
      const checked = this.#checked(partition, worker, now)
      const change = decide ? decide(checked.record, checked.inflight) : null
      const record = change ? applyChange(checked.record, change) : checked.record
      // The handoff is admit's check on the counts after the free: the write lock is held, so
      // nobody can move them in between, and freeing and taking again is one row update.
      const slotsAllow =
        handoff === true &&
        checked.inflight - 1 < record.concurrency &&
        record.pausedUntil <= now &&
        checked.mine - 1 < fairShare(record.concurrency, checked.waitingWorkers)
      const budget = this.#budgets.release(partition, checked.budget, request, slotsAllow)
      const { handedOff, ticket } = budget
      if (change) this.#put(record, now, false, budget.next)
      else if (budget.next !== null) this.#budgets.set(partition, budget.next)
      this.#free.run({
        partition,
        worker,
        freed: handedOff ? 0 : 1,
        waiting: Math.max(0, waiting - (handedOff ? 1 : 0)),
        leaseUntil: now + leaseMs,
        throttles: outcome === 'throttle' ? 1 : 0,
        successes: outcome === 'success' ? 1 : 0,
        errors: outcome === 'error' ? 1 : 0,
      })
      const inflight = Math.max(0, checked.inflight - (handedOff ? 0 : 1))
      const oks = checked.oks + (outcome === 'success' ? 1 : 0)
      const released = { record, inflight, changed: change !== null, handedOff, oks }
      return ticket ? { ...released, ticket } : released
    })
    this.#update = inTransaction(db, (partition, decide) => {
      const row = this.#row.get(partition)
      if (!row) return undefined
      const current = this.#parse(row)
      const change = decide.fn(current)
      const record = change ? this.#put(applyChange(current, change), decide.now) : current
      return { record, changed: change !== null }
    })
    this.#heartbeat = inTransaction(db, (worker, leases, now) => {
      for (const { partition, slots, waiting } of leases) {
        this.#lease.run({ partition, worker, slots, waiting, leaseUntil: now + leaseMs })
      }
    })
    // A lessee's record is written on the row it was read from, or not at all (an operator's won).
    const put = (record: PacingRecord, version: number) =>
      this.#row.get(record.partition)?.version === version && this.#put(record, 0) === record
    this.#lean = lean ? new LeanLeases(db, this.#budgets, leaseMs, put) : null
    // The block's take, under the write lock: still alone, on the record the caller checked.
    this.#enter = inTransaction(db, (partition, worker, version, now) => {
      const c = this.#check.get({ partition, worker, now })
      if (!c || c.othersActive > 0 || c.version !== version) return false
      const record = this.#cache.get(partition)
      if (record?.version !== version) return false
      this.#lean?.take(partition, worker, record, c.mine, now)
      return true
    })
  }

  join(partition: string, worker: string, init: SessionInit, now: number): Joined {
    const joined = this.#join(partition, worker, init, now)
    this.#remember(joined.record)
    return joined
  }

  admit(
    partition: string,
    worker: string,
    now: number,
    waiting: number,
    cost?: BudgetCost,
  ): Admission {
    const lean = this.#held(partition, worker, now)
    if (lean) return this.#leanAdmit(partition, lean, now, waiting, cost)
    const checked = this.#checked(partition, worker, now)
    const { record, inflight, othersWaiting, oks } = checked
    const workers = 1 + checked.othersActive
    // A read first: a refusal takes no write lock, so blocked workers polling cost the others
    // nothing. The fair share is checked here only: it spreads slots, the bound is the take's.
    if (
      inflight >= record.concurrency ||
      record.pausedUntil > now ||
      checked.mine >= fairShare(record.concurrency, checked.waitingWorkers)
    ) {
      return { admitted: false, record, inflight, othersWaiting, workers, oks }
    }
    if (checked.othersActive === 0 && this.#takeBlock(partition, worker, record.version, now)) {
      return this.#leanAdmit(partition, this.#lean?.get(partition) as LeanBlock, now, waiting, cost)
    }
    const args = { partition, worker, now, waiting, leaseUntil: now + this.leaseMs }
    // With a cost, the shared announced budget decides too (store-sqlite-budget.ts).
    const budget = cost && this.#budgets.of(partition, checked.budget)
    // Nothing announced yet: the plain take, and the call may bring the first reading.
    const plain = !budget || !announced(budget)
    const taken = plain
      ? (this.#take.run(args).changes === 1 && (budget ? FIRST_TICKET : true)) || 'slots'
      : budgetWaitMs(budget, now, cost as BudgetCost) > 0
        ? 'budget'
        : this.#charge(args, cost as BudgetCost)
    if (taken === 'slots') return this.#refused(partition, worker, now)
    if (taken === 'budget') {
      const wait = Math.max(1, budgetWaitMs(this.#budgets.read(partition), now, cost as BudgetCost))
      return { admitted: false, record, inflight, othersWaiting, workers, oks, budgetWaitMs: wait }
    }
    const admitted = { admitted: true, record, inflight: inflight + 1, othersWaiting, workers, oks }
    return taken === true ? admitted : { ...admitted, ticket: taken }
  }

  /** Another process took the last slot (or cut the limit) between the read and the write. */
  #refused(partition: string, worker: string, now: number): Admission {
    const again = this.#checked(partition, worker, now)
    return {
      admitted: false,
      record: again.record,
      inflight: again.inflight,
      othersWaiting: again.othersWaiting,
      oks: again.oks,
    }
  }

  release(partition: string, worker: string, request: ReleaseRequest): Released {
    const lean = this.#held(partition, worker, request.now)
    const released =
      (lean && this.#leanRelease(partition, lean, request)) ||
      this.#release(partition, worker, request)
    if (released.changed) this.#remember(released.record)
    this.#bell.ring(partition, worker)
    return released
  }

  update(
    partition: string,
    now: number,
    decide: (record: PacingRecord) => RecordChange | null,
  ): { record: PacingRecord; changed: boolean } | undefined {
    // An operator's change may raise the concurrency past the block: it goes back first.
    this.#lean?.handBack(partition, now)
    const updated = this.#update(partition, { now, fn: decide })
    if (updated?.changed) {
      this.#remember(updated.record)
      this.#bell.ring(partition, '')
    }
    return updated
  }

  record(partition: string): PacingRecord | undefined {
    const row = this.#row.get(partition)
    return row ? this.#parse(row) : undefined
  }

  budget(partition: string): SharedBudget {
    return this.#lean?.get(partition)?.budget ?? this.#budgets.read(partition)
  }

  heartbeat(worker: string, leases: readonly WorkerLease[], now: number): void {
    // A lessee's row is its block: renewed as such, or handed back if another worker wants in.
    const rest = this.#lean ? leases.filter((l) => !this.#leanBeat(l, worker, now)) : leases
    if (rest.length > 0) this.#heartbeat(worker, rest, now)
  }

  leave(partition: string, worker: string): void {
    if (this.#lean?.get(partition)?.worker === worker) this.#lean.handBack(partition, null)
  }

  partitions(now: number, recentMs: number): PacingView[] {
    const blocks = new Map(this.#lean?.blocks())
    return this.#views
      .all({ now, since: now - recentMs })
      .map((row) => leanView(viewOf(row, this.#parse(row)), blocks.get(row.partition)))
  }

  subscribe(worker: string, listener: (partition: string) => void): () => void {
    return this.#bell.subscribe(worker, listener)
  }

  /** The block the worker holds on the partition, still its own (store-sqlite-lean.ts). */
  #held(partition: string, worker: string, now: number): LeanBlock | undefined {
    return this.#lean?.held(partition, worker, now, () => this.#checked(partition, worker, now))
  }

  /** Takes the partition's block for a worker found alone on it; false when it cannot. */
  #takeBlock(partition: string, worker: string, version: number, now: number): boolean {
    if (!this.#lean) return false
    try {
      if (!this.#enter(partition, worker, version, now)) return false
    } catch (err) {
      this.#lean.drop(partition)
      throw err
    }
    this.#lean.taken(partition)
    return true
  }

  #leanRecord(partition: string, b: LeanBlock): PacingRecord {
    if (b.pending) return b.pending
    const cached = this.#cache.get(partition)
    return cached?.version === b.version
      ? cached
      : this.#parse(this.#row.get(partition) as PartitionRow)
  }

  #leanAdmit(
    partition: string,
    b: LeanBlock,
    now: number,
    waiting: number,
    cost: BudgetCost | undefined,
  ): Admission {
    return (this.#lean as LeanLeases).admit(b, this.#leanRecord(partition, b), now, waiting, cost)
  }

  /** A lessee's release (store-sqlite-lean.ts); undefined when it is to be made the shared way. */
  #leanRelease(partition: string, b: LeanBlock, request: ReleaseRequest): Released | undefined {
    return (this.#lean as LeanLeases).release(partition, b, this.#leanRecord(partition, b), request)
  }

  /** A heartbeat's lease on a partition this worker holds a block on: true when it was written. */
  #leanBeat(lease: WorkerLease, worker: string, now: number): boolean {
    if (this.#lean?.get(lease.partition)?.worker !== worker) return false
    const b = this.#held(lease.partition, worker, now)
    if (b) this.#lean.renew(lease.partition, b, now, lease.waiting)
    return true
  }

  #checked(partition: string, worker: string, now: number): { record: PacingRecord } & CheckRow {
    const c = this.#check.get({ partition, worker, now })
    if (!c) throw new Error(`pacing partition ${partition} has no record: join it first`)
    const cached = this.#cache.get(partition)
    const record =
      cached?.version === c.version ? cached : this.#parse(this.#row.get(partition) as PartitionRow)
    return { ...c, record }
  }

  #parse(row: PartitionRow): PacingRecord {
    const cached = this.#cache.get(row.partition)
    if (cached?.version === row.version) return cached
    const record = recordOf(row)
    this.#cache.set(row.partition, record)
    return record
  }

  /** Records share unchanged parts: their JSON is made once. */
  #json(value: object): string {
    let text = this.#texts.get(value)
    if (text === undefined) {
      text = JSON.stringify(value)
      this.#texts.set(value, text)
    }
    return text
  }

  /** Only after the commit: a record from a rolled-back write must never be mistaken for the row. */
  #remember(record: PacingRecord): void {
    this.#cache.set(record.partition, record)
  }

  /** `budget`: the budget's new text, in the record's statement (a release changes both). */
  #put(record: PacingRecord, now: number, newSession = false, budget: string | null = null) {
    const args = rowArgs(record, (value) => this.#json(value))
    // A new session may create the row; every other write changes the row its transaction read.
    if (newSession) this.#write.run({ ...args, now })
    else this.#change.run(Object.assign(args, { budget }))
    return record
  }
}

type Joined = { record: PacingRecord; created: boolean }
type TakeArgs = { partition: string; worker: string; now: number; waiting: number } & Args
type UpdateDecide = { now: number; fn: (record: PacingRecord) => RecordChange | null }
type Updated = { record: PacingRecord; changed: boolean }
