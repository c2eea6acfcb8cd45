import type {
  Admission,
  PacingRecord,
  PacingStore,
  PacingView,
  SessionInit,
  RecordChange,
  ReleaseRequest,
  Released,
  WorkerLease,
} from './store'
import { Doorbell, applyChange, checkStoreMs, fairShare, newRecord } from './store'
import type { BudgetCost, SharedBudget } from './shared-budget'
import { EMPTY_BUDGET, budgetWaitMs, chargeBudget, settleBudget } from './shared-budget'

export interface MemoryPacingStoreOptions {
  /** @default 30_000 */
  leaseMs?: number
}

type Joined = { record: PacingRecord; created: boolean }

interface WorkerEntry {
  slots: number
  waiting: number
  leaseUntil: number
  throttles: number
  successes: number
  errors: number
}

interface Entry {
  record: PacingRecord
  sessionAt: number
  workers: Map<string, WorkerEntry>
  /** The provider's, not the session's: a new session keeps it. */
  budget: SharedBudget
}

/**
 * The pacing store of one process: the default when no database is shared, and the reference the
 * other stores are tested against. Every worker is in this process, so waiters are woken by an
 * event, never by polling.
 */
export class MemoryPacingStore implements PacingStore {
  readonly leaseMs: number
  readonly poll = null
  readonly #entries = new Map<string, Entry>()
  readonly #bell = new Doorbell()
  #versions = 0

  constructor(options: MemoryPacingStoreOptions = {}) {
    this.leaseMs = checkStoreMs('leaseMs', options.leaseMs ?? 30_000, 1)
  }

  join(partition: string, worker: string, init: SessionInit, now: number): Joined {
    let entry = this.#entries.get(partition)
    const live = entry !== undefined && [...entry.workers.values()].some((w) => w.leaseUntil >= now)
    let created = false
    if (!entry || !live) {
      entry = {
        record: newRecord(partition, init, ++this.#versions),
        sessionAt: now,
        workers: new Map(),
        budget: entry?.budget ?? EMPTY_BUDGET,
      }
      this.#entries.set(partition, entry)
      created = true
    }
    this.#worker(entry, worker).leaseUntil = now + this.leaseMs
    return { record: entry.record, created }
  }

  admit(
    partition: string,
    worker: string,
    now: number,
    waiting: number,
    cost?: BudgetCost,
  ): Admission {
    const entry = this.#entry(partition)
    const record = entry.record
    let inflight = 0
    let othersWaiting = 0
    let waitingWorkers = 0
    let mine = 0
    // keys() and get(): destructured, a Map's entries are an array each, on every admission.
    for (const id of entry.workers.keys()) {
      const w = entry.workers.get(id) as WorkerEntry
      if (id === worker) {
        // A worker's own slots always count for itself, even if its lease ran out unnoticed.
        inflight += w.slots
        mine = w.slots
      } else if (w.leaseUntil >= now) {
        inflight += w.slots
        othersWaiting += w.waiting
        if (w.waiting > 0) waitingWorkers++
      }
    }
    if (
      inflight >= record.concurrency ||
      record.pausedUntil > now ||
      mine >= fairShare(record.concurrency, waitingWorkers)
    ) {
      return { admitted: false, record, inflight, othersWaiting }
    }
    const budgetWait = cost ? budgetWaitMs(entry.budget, now, cost) : 0
    if (budgetWait > 0) {
      return { admitted: false, record, inflight, othersWaiting, budgetWaitMs: budgetWait }
    }
    const w = this.#worker(entry, worker)
    w.slots++
    w.waiting = waiting
    w.leaseUntil = now + this.leaseMs
    if (!cost) return { admitted: true, record, inflight: inflight + 1, othersWaiting }
    const { next, ticket } = chargeBudget(entry.budget, now, cost)
    entry.budget = next
    return { admitted: true, record, inflight: inflight + 1, othersWaiting, ticket }
  }

  release(partition: string, worker: string, request: ReleaseRequest): Released {
    const { now, waiting, outcome, decide } = request
    const entry = this.#entry(partition)
    const inflight = this.#inflight(entry, worker, now)
    const change = decide ? decide(entry.record, inflight) : null
    const w = this.#worker(entry, worker)
    w.slots = Math.max(0, w.slots - 1)
    w.waiting = waiting
    w.leaseUntil = now + this.leaseMs
    if (outcome === 'success') w.successes++
    else if (outcome === 'throttle') w.throttles++
    else if (outcome === 'error') w.errors++
    if (change) entry.record = this.#apply(entry.record, change)
    if (request.budget)
      entry.budget = settleBudget(entry.budget, request.budget, now) ?? entry.budget
    this.#bell.ring(partition, worker)
    const again =
      request.handoff === true
        ? this.admit(partition, worker, now, waiting - 1, request.handoffCost)
        : undefined
    const handedOff = again?.admitted === true
    return {
      record: entry.record,
      inflight: inflight - (handedOff ? 0 : 1),
      changed: change !== null,
      handedOff,
      ...(again?.ticket ? { ticket: again.ticket } : {}),
    }
  }

  update(
    partition: string,
    _now: number,
    decide: (record: PacingRecord) => RecordChange | null,
  ): { record: PacingRecord; changed: boolean } | undefined {
    const entry = this.#entries.get(partition)
    if (!entry) return undefined
    const change = decide(entry.record)
    if (change) {
      entry.record = this.#apply(entry.record, change)
      this.#bell.ring(partition, '')
    }
    return { record: entry.record, changed: change !== null }
  }

  record(partition: string): PacingRecord | undefined {
    return this.#entries.get(partition)?.record
  }

  budget(partition: string): SharedBudget {
    return this.#entries.get(partition)?.budget ?? EMPTY_BUDGET
  }

  heartbeat(worker: string, leases: readonly WorkerLease[], now: number): void {
    for (const lease of leases) {
      const entry = this.#entries.get(lease.partition)
      if (!entry) continue
      const w = this.#worker(entry, worker)
      w.slots = lease.slots
      w.waiting = lease.waiting
      w.leaseUntil = now + this.leaseMs
    }
  }

  partitions(now: number, recentMs: number): PacingView[] {
    const out: { view: PacingView; sessionAt: number }[] = []
    for (const entry of this.#entries.values()) {
      const view: PacingView = {
        record: entry.record,
        inflight: 0,
        waiting: 0,
        throttles: 0,
        successes: 0,
        errors: 0,
        workers: 0,
        activeUntil: 0,
      }
      for (const w of entry.workers.values()) {
        const live = w.leaseUntil >= now
        if (live) {
          view.inflight += w.slots
          view.waiting += w.waiting
          view.workers++
        }
        view.throttles += w.throttles
        view.successes += w.successes
        view.errors += w.errors
        view.activeUntil = Math.max(view.activeUntil, w.leaseUntil)
      }
      if (view.activeUntil >= now - recentMs) out.push({ view, sessionAt: entry.sessionAt })
    }
    return out.sort((a, b) => a.sessionAt - b.sessionAt).map((o) => o.view)
  }

  subscribe(worker: string, listener: (partition: string) => void): () => void {
    return this.#bell.subscribe(worker, listener)
  }

  #entry(partition: string): Entry {
    const entry = this.#entries.get(partition)
    if (!entry) throw new Error(`pacing partition ${partition} has no record: join it first`)
    return entry
  }

  #worker(entry: Entry, worker: string): WorkerEntry {
    let w = entry.workers.get(worker)
    if (!w) {
      w = { slots: 0, waiting: 0, leaseUntil: 0, throttles: 0, successes: 0, errors: 0 }
      entry.workers.set(worker, w)
    }
    return w
  }

  #inflight(entry: Entry, worker: string, now: number): number {
    let inflight = 0
    for (const id of entry.workers.keys()) {
      const w = entry.workers.get(id) as WorkerEntry
      if (id === worker || w.leaseUntil >= now) inflight += w.slots
    }
    return inflight
  }

  #apply(record: PacingRecord, change: RecordChange): PacingRecord {
    // One counter for every record, so versions never repeat across sessions.
    const next = applyChange(record, change)
    next.version = ++this.#versions
    return next
  }
}
