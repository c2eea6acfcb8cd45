import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import { BATCH_TRANSITIONS, type BatchAction } from '../../shared/batch-states'
import type {
  BatchState,
  BatchSummary,
  StatusCounts,
  TaskRow,
  TaskStatus,
} from '../../shared/contract'
import { BatchTable, type NewBatch } from './queue-batches'
import { TaskTable, type FinalTaskStatus, type NewTask, type QueuedTask } from './queue-tasks'
import type { Clock } from './types'

export type { NewBatch } from './queue-batches'
export type { FinalTaskStatus, NewTask, QueuedTask } from './queue-tasks'

/**
 * The queue: batches (queue-batches.ts) and their tasks (queue-tasks.ts), each table's SQL next to
 * its owner. This class holds the transactions that span both: enqueue, the expired-lease sweep
 * and retry.
 */
export class TaskQueue {
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #batches: BatchTable
  readonly #tasks: TaskTable

  constructor(db: Database.Database, clock: Clock) {
    this.#db = db
    this.#clock = clock
    this.#batches = new BatchTable(db, clock)
    this.#tasks = new TaskTable(db, clock)
  }

  /** Creates a batch and its tasks in one transaction (all or nothing). */
  createBatch(batch: NewBatch, tasks: readonly NewTask[]): string {
    const id = `b_${this.#clock.now().toString(36)}_${randomBytes(4).toString('hex')}`
    const now = this.#clock.now()
    // IMMEDIATE: take the write lock up front, so a concurrent writer makes us wait (busy_timeout)
    // instead of failing a read-then-write upgrade with SQLITE_BUSY.
    this.#db
      .transaction(() => {
        this.#batches.insert(id, batch, now)
        for (const t of tasks) this.#tasks.insert(id, t, now)
      })
      .immediate()
    return id
  }

  /**
   * Atomically moves the next queued task of a running batch to `running` under this worker's
   * lease: one UPDATE ... RETURNING, so two processes never pick the same row. Console batches are
   * picked oldest first; `batchIds` restricts the pick to those batches, in that order.
   */
  pick(worker: string, leaseMs: number, batchIds: readonly string[] | null): QueuedTask | null {
    const task = this.#tasks.pick(worker, leaseMs, batchIds)
    return task ? { ...task, audit: this.#batches.audit(task.batchId) } : null
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
    result: string | null,
    error: string | null,
  ): boolean {
    return this.#tasks.finish(taskId, worker, status, result, error)
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
    // Every worker sweeps often: look before taking the write lock.
    if (!this.#tasks.anyExpired(now)) return { requeued: 0, batchIds: [] }
    return this.#db
      .transaction(() => {
        const swept = this.#tasks.requeueExpired(now)
        // A batch whose every worker is gone waits for an operator (or the same `pacer run`) to
        // resume it; one still driven by a live worker keeps running.
        for (const b of swept.batchIds) this.#batches.interruptIfOrphaned(b, now)
        return swept
      })
      .immediate()
  }

  /** Marks a batch done when nothing is left queued or running in it. */
  settleBatch(batchId: string): BatchState | null {
    return this.#batches.settle(batchId)
  }

  /** Sets a batch's state, only from one of `from` when given; true if it changed. */
  setBatchState(batchId: string, state: BatchState, from?: readonly BatchState[]): boolean {
    return this.#batches.setState(batchId, state, from)
  }

  /**
   * An operator's pause, resume or cancel, from the states BATCH_TRANSITIONS allows it; false
   * (nothing changed) from any other.
   */
  applyBatchAction(batchId: string, action: Exclude<BatchAction, 'retry'>): boolean {
    return this.#batches.applyAction(batchId, action)
  }

  /** Cancels what has not started yet; running tasks are stopped by the runner. */
  cancelQueued(batchId: string): number {
    return this.#tasks.cancelQueued(batchId)
  }

  /** Failed or cancelled tasks go back to the queue; their batches run again. */
  retry(filter: { batchId?: string; taskIds?: readonly number[] }): {
    count: number
    fps: string[]
  } {
    return this.#db
      .transaction(() => {
        const { count, batchIds, fps } = this.#tasks.retry(filter)
        const { from, to } = BATCH_TRANSITIONS.retry
        for (const b of batchIds) this.#batches.setState(b, to, from)
        return { count, fps: [...fps] }
      })
      .immediate()
  }

  /** Who runs the batch from now on: a CLI worker, or null for the consoles. */
  setDriver(batchId: string, driver: string | null): void {
    this.#batches.setDriver(batchId, driver)
  }

  /** The batch's state, or null if there is no such batch (cheap: one primary-key read). */
  batchState(batchId: string): BatchState | null {
    return this.#batches.state(batchId)
  }

  findResumable(sourceHash: string): string | null {
    return this.#batches.findResumable(sourceHash)
  }

  batch(batchId: string): BatchSummary | null {
    return this.#batches.summary(batchId)
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
    return this.#tasks.list(filter)
  }

  tasksById(ids: readonly number[]): TaskRow[] {
    return this.#tasks.byIds(ids)
  }

  taskResult(taskId: number): string | null {
    return this.#tasks.result(taskId)
  }
}
