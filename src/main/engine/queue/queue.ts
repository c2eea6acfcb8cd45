import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import { BATCH_TRANSITIONS, type BatchAction } from '../../../shared/batch-states'
import type {
  BatchState,
  BatchSummary,
  ProviderBatchSummary,
  StatusCounts,
  TaskRow,
  TaskStatus,
} from '../../../shared/contract'
import { directWrites, endOfTurn, type WriteScope } from '../db/step-writes'
import { BatchTable, type NewBatch } from './batches'
import { failureGroups, type FailureGroup } from './failures'
import { TaskPages } from './task-pages'
import {
  TaskTable,
  type FinalTaskStatus,
  type NewTask,
  type QueuedTask,
  type TaskResult,
} from './tasks'
import type { Clock } from '../core/types'
import type { WorkerRegistry } from './workers'

export type { NewBatch } from './batches'
export type { FailureGroup } from './failures'
export type { NewTask, QueuedTask } from './tasks'

/** A batch being filled task by task, inside the caller's transaction (see TaskQueue.openBatch). */
export interface BatchWriter {
  readonly id: string
  add(task: NewTask): void
  /** Records how many tasks were added on the batch's counters; returns that number. */
  close(): number
}

/**
 * The queue: batches (queue-batches.ts) and their tasks (queue-tasks.ts), each table's SQL next to
 * its owner. This class holds the transactions that span both: enqueue, the expired-lease sweep
 * and retry.
 */
export class TaskQueue {
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #writes: WriteScope
  readonly #batches: BatchTable
  readonly #tasks: TaskTable
  readonly #pages: TaskPages
  /**
   * Batch states read this turn of the event loop. The runner looks before every call; within a
   * turn only this queue can change them (it drops them when it does), another process's pause
   * is seen from the next turn on.
   */
  readonly #states = new Map<string, BatchState | null>()
  readonly #workers: WorkerRegistry | null

  /**
   * `writes` groups the runner's writes per task step (the engine's); default: one per statement.
   * `workers`: the registry that tells a gone driver from a live one (none: only leases tell).
   */
  constructor(
    db: Database.Database,
    clock: Clock,
    writes: WriteScope = directWrites,
    workers: WorkerRegistry | null = null,
  ) {
    this.#db = db
    this.#clock = clock
    this.#writes = writes
    this.#workers = workers
    this.#tasks = new TaskTable(db, clock, writes)
    this.#pages = new TaskPages(db)
    this.#batches = new BatchTable(
      db,
      clock,
      writes,
      () => this.#tasks.flushCounters(),
      workers && ((driver) => workers.view(driver)),
    )
  }

  /** Creates a batch and its tasks in one transaction (all or nothing). */
  createBatch(batch: NewBatch, tasks: readonly NewTask[]): string {
    // IMMEDIATE: take the write lock up front, so a concurrent writer makes us wait (busy_timeout)
    // instead of failing a read-then-write upgrade with SQLITE_BUSY.
    return this.#write(() => {
      const writer = this.openBatch(batch)
      for (const t of tasks) writer.add(t)
      writer.close()
      return writer.id
    })
  }

  /**
   * Inserts a batch row and returns a writer that adds its tasks one at a time, so a file of a
   * million lines is queued without holding them all. The caller holds the transaction: rolling
   * it back leaves no batch and no task behind.
   */
  openBatch(batch: NewBatch): BatchWriter {
    if (!this.#db.inTransaction) throw new Error('openBatch needs an open transaction')
    const id = `b_${this.#clock.now().toString(36)}_${randomBytes(4).toString('hex')}`
    const key = this.#batches.insert(id, batch, this.#clock.now())
    let added = 0
    let first: number | null = null
    return {
      id,
      add: (task) => {
        const taskId = this.#tasks.insert(key, task)
        first ??= taskId
        added++
      },
      close: () => {
        this.#batches.addQueued(key, added, first)
        return added
      },
    }
  }

  /**
   * Atomically moves the next queued task of a running batch to `running` under this worker's
   * lease: one UPDATE ... RETURNING, so two processes never pick the same row. Console batches are
   * picked oldest first; `batchIds` restricts the pick to those batches, in that order.
   */
  pick(worker: string, leaseMs: number, batchIds: readonly string[] | null): QueuedTask | null {
    return this.#tasks.pick(worker, leaseMs, batchIds)
  }

  /** pick() of up to `n` tasks in one go (worker, leaseMs, batchIds, n; one update per batch). */
  pickMany(...args: Parameters<TaskTable['pickMany']>): QueuedTask[] {
    return this.#tasks.pickMany(...args)
  }

  /** Extends the task lease; false if the task is no longer this worker's. */
  renewTask(taskId: number, worker: string, leaseMs: number): boolean {
    return this.#tasks.renew(taskId, worker, leaseMs)
  }

  /** Final status for a task this worker runs. Fenced by worker so a requeued task is not touched. */
  finishTask(
    taskId: number,
    worker: string,
    status: FinalTaskStatus,
    result: TaskResult | string,
    error: string | null,
  ): boolean {
    const stored = typeof result === 'string' ? { text: result } : result
    return this.#tasks.finish(taskId, worker, status, stored, error)
  }

  /** Gives a running task back to the queue (shutdown, lost lease, transient failure). */
  requeueTask(taskId: number, worker: string, error: string | null): boolean {
    return this.#tasks.requeue(taskId, worker, error)
  }

  /**
   * Tasks left `running` by a worker whose lease expired (a killed process) go back to the queue,
   * and their batches are marked interrupted if nobody else is driving them: never silently lost.
   */
  requeueExpired(): { requeued: number; batchIds: string[] } {
    const now = this.#clock.now()
    const gone = this.#workers?.gone() ?? []
    const self = this.#workers?.id ?? ''
    // Every worker sweeps often: look before taking the write lock.
    const expired = this.#tasks.anyExpired(now)
    const driverless = this.#workers !== null && this.#batches.anyUnregistered(self)
    if (!expired && gone.length === 0 && !driverless) return { requeued: 0, batchIds: [] }
    this.#states.clear()
    return this.#write(() => {
      const batchIds = new Set<string>()
      let requeued = 0
      // A worker known to be gone (its pid is not running, or no heartbeat): its tasks and claims
      // are free now, not when their leases run out, and the batches it drove are interrupted.
      for (const w of gone) {
        const freed = this.#tasks.requeueGone(w.id, `requeued: its worker is gone (${w.reason})`)
        requeued += freed.requeued
        for (const b of freed.batchIds) batchIds.add(b)
      }
      this.#workers?.forget(gone.map((w) => w.id))
      const ids = gone.map((w) => w.id)
      for (const b of this.#batches.interruptDriverless(ids, self, now)) batchIds.add(b)
      if (expired) {
        const swept = this.#tasks.requeueExpired(now)
        requeued += swept.requeued
        for (const b of swept.batchIds) batchIds.add(b)
      }
      // A batch whose every worker is gone waits for an operator (or the same `pacer run`) to
      // resume it; one still driven by a live worker keeps running.
      for (const b of batchIds) this.#batches.interruptIfOrphaned(b, now)
      return { requeued, batchIds: [...batchIds] }
    })
  }

  /** Marks a batch done when nothing is left queued or running in it. */
  settleBatch(batchId: string): BatchState | null {
    this.#states.delete(batchId)
    return this.#batches.settle(batchId)
  }

  /** Sets a batch's state, only from one of `from` when given; true if it changed. */
  setBatchState(batchId: string, state: BatchState, from?: readonly BatchState[]): boolean {
    this.#states.delete(batchId)
    return this.#writes.run(() => this.#batches.setState(batchId, state, from))
  }

  /** Why the batch's run was stopped (a setup failure), or null to forget it as it runs again. */
  setStopReason(batchId: string, reason: string | null): void {
    this.#writes.run(() => this.#batches.setStopReason(batchId, reason))
  }

  /**
   * Runs `fn` as one transaction in the write scope: its own BEGIN IMMEDIATE when writes are not
   * grouped, else a savepoint of the scope's open transaction.
   */
  #write<T>(fn: () => T): T {
    return this.#writes.run(() => this.#db.transaction(fn).immediate())
  }

  /**
   * An operator's pause, resume or cancel, from the states BATCH_TRANSITIONS allows it; false
   * (nothing changed) from any other.
   */
  applyBatchAction(batchId: string, action: Exclude<BatchAction, 'retry'>): boolean {
    this.#states.delete(batchId)
    return this.#writes.run(() => this.#batches.applyAction(batchId, action))
  }

  /** Cancels what has not started yet; running tasks are stopped by the runner. */
  cancelQueued(batchId: string): number {
    return this.#writes.run(() => this.#tasks.cancelQueued(batchId))
  }

  /** Failed or cancelled tasks go back to the queue; their batches run again. */
  retry(filter: { batchId?: string; taskIds?: readonly number[] }): {
    count: number
    fps: string[]
  } {
    this.#states.clear()
    return this.#write(() => {
      const { count, batchIds, fps } = this.#tasks.retry(filter)
      const { from, to } = BATCH_TRANSITIONS.retry
      for (const b of batchIds) this.#batches.setState(b, to, from)
      return { count, fps: [...fps] }
    })
  }

  /** Who runs the batch from now on: a CLI worker, or null for the consoles. */
  setDriver(batchId: string, driver: string | null): void {
    this.#writes.run(() => this.#batches.setDriver(batchId, driver))
  }

  /** The batch's state and how many of its tasks are queued or running (one read of its row). */
  progress(batchId: string): { state: BatchState; unfinished: number } | null {
    return this.#batches.progress(batchId)
  }

  /** The batch's state, or null if there is no such batch (cheap: one primary-key read). */
  batchState(batchId: string): BatchState | null {
    if (this.#states.has(batchId)) return this.#states.get(batchId) ?? null
    if (this.#states.size === 0) endOfTurn(() => this.#states.clear())
    const state = this.#batches.state(batchId)
    this.#states.set(batchId, state)
    return state
  }

  findResumable(sourceHash: string): string | null {
    return this.#batches.findResumable(sourceHash)
  }

  /** Whether an interrupted batch was read from `source`: only then is a file hashed up front. */
  hasInterrupted(source: string): boolean {
    return this.#batches.hasInterrupted(source)
  }

  /** Whether another process runs a batch read from `source` (then the file is hashed too). */
  hasRunning(source: string): boolean {
    return this.#batches.hasRunning(source, this.#workers?.id ?? '')
  }

  /** A running batch of the same file whose driver is another live process, as listed. */
  findLiveRun(sourceHash: string): BatchSummary | null {
    const self = this.#workers?.id
    for (const r of this.#batches.findRunning(sourceHash)) {
      if (r.driver === null || r.driver === self) continue
      const b = this.#batches.summary(r.id)
      if (b?.owner?.alive) return b
    }
    return null
  }

  /** Records the content hash of a batch queued from a file as it was read. */
  setSourceHash(batchId: string, sourceHash: string): void {
    this.#writes.run(() => this.#batches.setSourceHash(batchId, sourceHash))
  }

  /** Fingerprints of the batch's tasks whose claim keeps a failure as its result. */
  failedFingerprints(batchId: string): string[] {
    return this.#pages.failedFingerprints(batchId)
  }

  /** The batch's failed tasks by reason, most common first, one example task each. */
  failureGroups(batchId: string, limit = 20): FailureGroup[] {
    return failureGroups(this.#db, batchId, limit)
  }

  /** How many distinct executions the batch's tasks are (a pass over its tasks). */
  distinctTasks(batchId: string): number {
    return this.#pages.distinct(batchId)
  }

  batch(batchId: string): BatchSummary | null {
    return this.#batches.summary(batchId)
  }

  /** Where a batch's provider batches are read from (summaries of batch-API batches carry them). */
  followProviderBatches(read: (batchId: string) => ProviderBatchSummary[]): void {
    this.#batches.providerBatches = read
  }

  /** Marks a batch as sent through the vendors' batch APIs (see BatchTable.setBatchApi). */
  setBatchApi(batchId: string): void {
    this.#batches.setBatchApi(batchId)
  }

  /** Whether the batch's calls go through the vendors' batch APIs. */
  batchApi(batchId: string): boolean {
    return this.#batches.batchApi(batchId)
  }

  listBatches(limit = 200): BatchSummary[] {
    return this.#batches.list(limit)
  }

  counts(batchId: string): StatusCounts {
    return this.#batches.counts(batchId)
  }

  listTasks(filter: {
    batchId?: string
    statuses?: readonly TaskStatus[]
    offset: number
    limit: number
  }): { rows: TaskRow[]; total: number } {
    return this.#pages.list(filter, (batchId, statuses) => this.#batches.countOf(batchId, statuses))
  }

  tasksById(ids: readonly number[]): TaskRow[] {
    return this.#pages.byIds(ids)
  }

  taskResult(taskId: number): string | null {
    return this.#pages.result(taskId)
  }
}
