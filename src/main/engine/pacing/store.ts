// The coordination interface of pacing: what every worker driving one partition (provider:model)
// must agree on, wherever it runs. In memory (one process), in the SQLite file (every process on
// the database: store-sqlite.ts), and later in Redis (several machines). Each operation is one
// atomic step of the store: a single statement or an IMMEDIATE transaction in SQLite, one Lua
// script in Redis, so the same tests hold for every backend (test/unit/engine/pacing/store-suite.ts).
import type { ConcurrencyController } from './aimd'
import type { AimdParams, JsonValue, LimitChange, MaybePromise, Outcome } from '../core/types'
import type { BudgetCost, BudgetSettle, BudgetTicket, SharedBudget } from './shared-budget'
import type { LearnedPaces } from './learned-pace'
import { sameLearned } from './learned-pace'

export type { MaybePromise } from '../core/types'

/** What a controller learned that a controller of the same kind can continue from. */
export interface ControllerMemory {
  kind: string
  [field: string]: JsonValue
}

/** A concurrency controller's state as the other workers of its partition continue from it. */
export interface ControllerState {
  /** The real-valued limit. */
  limit: number
  /**
   * When the limit was last cut (epoch ms), null if never. Shared so that one cut per congestion
   * episode holds across workers: a throttle answering a call sent before it does not cut again.
   */
  lastCutAt: number | null
  /** Read only by a controller of `memory.kind`; plain JSON. null: nothing beyond the limit. */
  memory: ControllerMemory | null
}

/** One partition's shared pacing state. Records are immutable: a change makes a new one. */
export interface PacingRecord {
  partition: string
  params: AimdParams
  controller: ControllerState
  /** What admission compares the live slots with: max(params.min, floor(controller.limit)). */
  concurrency: number
  /** No call is admitted before this (epoch ms); 0 when not paused. */
  pausedUntil: number
  lastChange: LimitChange | null
  /**
   * The paces the workers learned from refusals (learned-pace.ts), shared so that they pace like
   * one; absent or null: nothing learned this session.
   */
  learned?: LearnedPaces | null
  /** Grows with every change of the fields above, across sessions: a worker re-syncs when it moved. */
  version: number
}

/** What a worker brings to a partition nobody drives: the session starts from it. */
export interface SessionInit {
  params: AimdParams
  controller: ControllerState
}

/** A change to write, computed from the record it applies to. Absent fields stay. */
export interface RecordChange {
  params?: AimdParams
  controller?: ControllerState
  /** Only ever lengthens a pause. */
  pausedUntil?: number
  lastChange?: LimitChange | null
  learned?: LearnedPaces | null
}

/**
 * Computes the change from the current record and the live slots of all workers (the releasing
 * call included). Runs inside the store's atomic step; a networked store may run it again when the
 * record moved under it (compare-and-set on the version), so it must depend on its arguments only.
 */
export type Decide = (record: PacingRecord, inflight: number) => RecordChange | null

/** How a finished call counts on the console. */
export type OutcomeCount = 'success' | 'throttle' | 'error'

export interface Admission {
  admitted: boolean
  /** The record the check used: the shared limit, params and pause as of this admission. */
  record: PacingRecord
  /** Live slots of every worker, after this admission. */
  inflight: number
  /** Calls waiting in the other workers, as they last reported it. */
  othersWaiting: number
  /**
   * Workers with calls in flight or waiting, this one included, where the store counts them (the
   * SQLite file): each paces its sends at its share of an announced rate (send-pace.ts).
   */
  workers?: number
  /** Admitted with a cost: the call's place in the shared announced budget, to settle it with. */
  ticket?: BudgetTicket
  /** Refused by the shared announced budget: ms until the call fits it (0 or absent: not that). */
  budgetWaitMs?: number
  /** The partition's successes, every worker's, where the store counts them (partition-oks.ts). */
  oks?: number
}

/** A release, and what the worker knows when it frees the slot. */
export interface ReleaseRequest {
  now: number
  /** This worker's waiting calls. */
  waiting: number
  /** null: a slot given back unused. */
  outcome: OutcomeCount | null
  decide?: Decide
  /**
   * A call of this worker waits: take the freed slot again for it in the same write, if the
   * budget (and fair share) allows. One write per call instead of two under load.
   */
  handoff?: boolean
  /** The finished call's account in the shared announced budget (its ticket, reading, usage). */
  budget?: BudgetSettle
  /** What the handed-off call costs: the handoff also needs the shared announced budget to allow it. */
  handoffCost?: BudgetCost
}

export interface Released {
  record: PacingRecord
  /** Live slots of every worker, after this release (and the handoff). */
  inflight: number
  /** The decision was written. */
  changed: boolean
  /** The slot was taken again for this worker's next call. */
  handedOff: boolean
  /** The handed-off call's ticket, when it was given a cost. */
  ticket?: BudgetTicket
  /** The partition's successes after this release, where the store counts them. */
  oks?: number
}

/** A partition as the console shows it: the record and what every worker reports. */
export interface PacingView {
  record: PacingRecord
  /** Slots held under live leases. */
  inflight: number
  waiting: number
  throttles: number
  successes: number
  errors: number
  /** Workers holding a live lease (holding slots or waiting). */
  workers: number
  /** The latest lease of any worker (epoch ms): the partition's last sign of activity plus leaseMs. */
  activeUntil: number
}

/** What a worker reports in a heartbeat for each partition it holds slots in or waits on. */
export interface WorkerLease {
  partition: string
  /** The permits the worker holds: absolute, so a lost release cannot leak a slot for good. */
  slots: number
  waiting: number
}

/** How blocked admissions learn of slots freed by workers of other processes. */
export interface PollPolicy {
  /** First delay, doubled after each refusal. */
  minMs: number
  maxMs: number
}

/**
 * The shared pacing state of every partition. Slots are held as per-worker leases: a worker's
 * slots count while its lease is live (renewed by every admission, release and heartbeat), so a
 * worker that dies gives its slots back when the lease expires. A session is the life of a
 * partition's record while some worker holds a live lease: the first worker to join a partition
 * nobody drives starts a new one with its own params.
 */
export interface PacingStore {
  /** How long a lease lasts past a worker's last sign of life. */
  readonly leaseMs: number
  /** null when every worker is in this process (it is told by `subscribe`). */
  readonly poll: PollPolicy | null
  /** A networked store out of reach: why admission waits (one line); null or absent otherwise. */
  readonly outage?: string | null
  /**
   * Enters the worker into the partition. When no worker holds a live lease on it, a new session
   * starts from `init` (the dead workers' rows are dropped); otherwise the live record is returned.
   */
  join(
    partition: string,
    worker: string,
    init: SessionInit,
    now: number,
  ): MaybePromise<{ record: PacingRecord; created: boolean }>
  /**
   * Takes one slot, atomically, when the live slots of all workers are below the record's
   * concurrency and the partition is not paused, and the worker holds less than its fairShare;
   * renews the worker's lease. With a `cost`, the shared announced budget must allow the call as
   * well, and is charged in the same step (shared-budget.ts).
   */
  admit(
    partition: string,
    worker: string,
    now: number,
    waiting: number,
    cost?: BudgetCost,
  ): MaybePromise<Admission>
  /**
   * Frees one of the worker's slots, counts the outcome and writes `decide`'s change (and with
   * `handoff`, takes a slot again as admit would), all in one atomic write.
   */
  release(partition: string, worker: string, request: ReleaseRequest): MaybePromise<Released>
  /** Writes `decide`'s change (an operator's params); undefined when the partition has no record. */
  update(
    partition: string,
    now: number,
    decide: (record: PacingRecord) => RecordChange | null,
  ): MaybePromise<{ record: PacingRecord; changed: boolean } | undefined>
  /** The partition's record, if any worker ever joined it. */
  record(partition: string): MaybePromise<PacingRecord | undefined>
  /** The partition's shared announced budget (EMPTY_BUDGET before any costed admission). */
  budget(partition: string): MaybePromise<SharedBudget>
  /** Renews the worker's leases and sets its slots and waiting counts to what it holds. */
  heartbeat(worker: string, leases: readonly WorkerLease[], now: number): MaybePromise<void>
  /** Partitions with a live lease or one that ended at most `recentMs` ago, oldest session first. */
  partitions(now: number, recentMs: number): MaybePromise<PacingView[]>
  /**
   * The worker's scheduler closed: what it holds beyond its calls in flight goes back (a store
   * that leases in blocks: store-sqlite-lean.ts). Optional; the calls in flight keep their slots.
   */
  leave?(partition: string, worker: string): void
  /**
   * Calls `listener` after another worker of this process released a slot or changed a record
   * (a microtask later, never inside the call), so `worker`'s waiters wake at once. Returns the
   * unsubscribe.
   */
  subscribe(worker: string, listener: (partition: string) => void): () => void
}

/**
 * Tells the other workers of this process that a partition changed. Rung after the store call
 * that changed it returns, in one microtask per burst, and only if another worker listens: one
 * worker alone pays nothing for it.
 */
export class Doorbell {
  readonly #listeners = new Map<(partition: string) => void, string>()
  #pending: { partition: string; worker: string }[] = []

  subscribe(worker: string, listener: (partition: string) => void): () => void {
    this.#listeners.set(listener, worker)
    return () => this.#listeners.delete(listener)
  }

  /** `worker` changed the partition ('' for an operator). */
  ring(partition: string, worker: string): void {
    let others = false
    for (const w of this.#listeners.values()) {
      if (w !== worker) {
        others = true
        break
      }
    }
    if (!others) return
    if (this.#pending.push({ partition, worker }) > 1) return
    queueMicrotask(() => {
      const rung = this.#pending
      this.#pending = []
      const seen = new Set<string>()
      for (const { partition: p, worker: by } of rung) {
        for (const [listener, w] of this.#listeners) {
          const key = `${w}\u0000${p}`
          if (w === by || seen.has(key)) continue
          seen.add(key)
          listener(p)
        }
      }
    })
  }
}

/** Admission's bound: the controllers' max(min, floor(limit)). */
function concurrencyOf(params: AimdParams, limit: number): number {
  return Math.max(params.min, Math.floor(limit))
}

/**
 * A worker's fair share while `othersWaiting` other workers have calls waiting: the concurrency
 * split between them, rounded up so that no slot is left unused. Without it, a worker that frees a
 * slot takes it back in the same turn, and workers that learn of free slots by polling starve.
 */
export function fairShare(concurrency: number, othersWaiting: number): number {
  return othersWaiting === 0
    ? Number.POSITIVE_INFINITY
    : Math.ceil(concurrency / (othersWaiting + 1))
}

/** Applies a change to a record: the next record, with the version moved on. */
export function applyChange(record: PacingRecord, change: RecordChange): PacingRecord {
  const params = change.params ?? record.params
  const controller = change.controller ?? record.controller
  const learned = change.learned === undefined ? record.learned : change.learned
  return {
    partition: record.partition,
    params,
    controller,
    concurrency: concurrencyOf(params, controller.limit),
    pausedUntil: Math.max(record.pausedUntil, change.pausedUntil ?? 0),
    lastChange: change.lastChange === undefined ? record.lastChange : change.lastChange,
    ...(learned ? { learned } : {}),
    version: record.version + 1,
  }
}

/** A new session's record. */
export function newRecord(partition: string, init: SessionInit, version: number): PacingRecord {
  return {
    partition,
    params: { ...init.params },
    controller: init.controller,
    concurrency: concurrencyOf(init.params, init.controller.limit),
    pausedUntil: 0,
    lastChange: null,
    version,
  }
}

/** How a call's outcome counts in a partition's totals. */
export function outcomeCount(outcome: Outcome): OutcomeCount {
  if (outcome === 'throttled' || outcome === 'overloaded' || outcome === 'timeout') {
    return 'throttle'
  }
  return outcome === 'error' ? 'error' : 'success'
}

/** A controller's state as the store keeps it; controllers that cannot export share their limit. */
export function controllerStateOf(
  c: ConcurrencyController,
  lastCutAt: number | null,
): ControllerState {
  return c.exportState?.() ?? { limit: c.limit, lastCutAt, memory: null }
}

/** What a controller's step changed in the record; null when nothing did. */
export function changeOf(
  c: ConcurrencyController,
  record: PacingRecord,
  change: LimitChange | null,
  pauseUntil?: number,
  learned?: LearnedPaces | null,
): RecordChange | null {
  const controller = controllerStateOf(c, record.controller.lastCutAt)
  const out: RecordChange = {}
  if (!sameState(controller, record.controller)) out.controller = controller
  if (change) out.lastChange = change
  if (pauseUntil !== undefined && pauseUntil > record.pausedUntil) out.pausedUntil = pauseUntil
  if (learned !== undefined && !sameLearned(learned, record.learned)) out.learned = learned
  // Checked by field, not by Object.keys: this runs on every release.
  const any = out.controller || out.lastChange || out.pausedUntil !== undefined || 'learned' in out
  return any ? out : null
}

/** Validates a lease or poll length given to a store. */
export function checkStoreMs(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(
      `Expected \`${name}\` to be an integer >= ${min} (ms), got \`${String(value)}\``,
    )
  }
  return value
}

/** Two controller states are the same: nothing to write. */
function sameState(a: ControllerState, b: ControllerState): boolean {
  if (a.limit !== b.limit || a.lastCutAt !== b.lastCutAt) return false
  if (a.memory === null || b.memory === null) return a.memory === b.memory
  // No arrays and no closure: this runs on every release.
  let n = 0
  for (const k in a.memory) {
    if (!Object.hasOwn(a.memory, k)) continue
    if (a.memory[k] !== b.memory[k]) return false
    n++
  }
  for (const k in b.memory) if (Object.hasOwn(b.memory, k)) n--
  return n === 0
}

export function sameParams(a: AimdParams, b: AimdParams): boolean {
  for (const key of Object.keys(a) as (keyof AimdParams)[]) if (a[key] !== b[key]) return false
  return true
}

export function sameChange(a: LimitChange | null, b: LimitChange | null): boolean {
  if (a === b) return true
  if (!a || !b) return false
  return a.ts === b.ts && a.from === b.from && a.to === b.to && a.reason === b.reason
}

/** Validates the Scheduler's store and worker options; throws a TypeError naming the value. */
export function checkStoreOptions(store: unknown, worker: unknown): void {
  const s = store as Partial<PacingStore> | null
  if (s === null || typeof s !== 'object' || typeof s.admit !== 'function') {
    throw new TypeError(`Expected \`store\` to be a PacingStore, got \`${String(store)}\``)
  }
  if (typeof worker !== 'string' || worker === '') {
    throw new TypeError(`Expected \`worker\` to be a non-empty string, got \`${String(worker)}\``)
  }
}
