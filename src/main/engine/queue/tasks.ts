import type Database from 'better-sqlite3'
import type { TaskStatus } from '../../../shared/contract'
import { fpKeyOnce, fpText, fpTextKept, TASK_STATUSES, TASK_STATUS_CODES as S } from '../db/codes'
import { TASK_SQL, type Moved, type PickedRow } from './tasks-sql'

export { TASK_PAGE_FILTERS, TASK_SQL, taskPageSql } from './tasks-sql'
import { directWrites, type WriteScope } from '../db/step-writes'
import type { Clock } from '../core/types'

/** A task as the runner sees it (with its payload), picked atomically from the queue. */
export interface QueuedTask {
  id: number
  batchId: string
  seq: number
  type: string
  payload: string
  fp: string
  /** The fingerprint's row id (fingerprints.id). */
  fpId: number
  key: string | null
  steps: number
  provider: string
  model: string
  /** Canonical JSON of the request parameters; null: none. */
  params: string | null
  attempts: number
  audit: boolean
}

export interface NewTask {
  seq: number
  type: string
  payloadJson: string
  fp: string
  key: string | null
  steps: number
  provider: string
  model: string
  /** Canonical JSON of the request parameters (the line's over the run's); null: none. */
  paramsJson?: string | null
}

/** What the pick reads of a task's fingerprint and batch. */
type PickedContent = Omit<QueuedTask, 'id' | 'seq' | 'fpId' | 'attempts' | 'fp' | 'audit'> & {
  fp: Buffer | string
  audit: number
}

/** The statuses a worker can finish a task with. */
export type FinalTaskStatus = Extract<TaskStatus, 'succeeded' | 'reused' | 'failed' | 'cancelled'>

/** What a finished task got: a result already stored (`ref`, shared with its claim), or its text. */
export type TaskResult = { ref: number } | { text: string } | null

type Statements = { [K in keyof typeof TASK_SQL]: Database.Statement }

/**
 * Owns the task_queue table: inserts (with their fingerprint's content, stored once), the atomic
 * pick, leases and status changes (its pages for the console: queue-task-pages.ts). Transactions that span batches and tasks belong to TaskQueue;
 * these methods run inside them. Status counts are kept per batch by the table's triggers.
 */
export class TaskTable {
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #writes: WriteScope
  readonly #stmts: Statements
  readonly #moves = new Map<string, Database.Statement<[number, number]>>()
  /** Counter changes of the open step, per batch key: written once, just before it commits. */
  readonly #pending = new Map<number, number[]>()
  readonly #addCounts: Database.Statement
  readonly #finish: (...args: FinishArgs) => boolean

  constructor(db: Database.Database, clock: Clock, writes: WriteScope = directWrites) {
    this.#db = db
    this.#clock = clock
    this.#writes = writes
    this.#stmts = Object.fromEntries(
      Object.entries(TASK_SQL).map(([name, sql]) => [name, db.prepare(sql)]),
    ) as Statements
    this.#addCounts = db.prepare(
      `UPDATE batches SET ${TASK_STATUSES.map((s) => `${s} = ${s} + ?`).join(', ')} WHERE key = ?`,
    )
    writes.beforeCommit?.(() => this.flushCounters())
    writes.onRollback?.(() => this.#pending.clear())
    this.#finish = db.transaction((...[status, result, error, now, taskId, worker]: FinishArgs) => {
      const ref = Number(this.#stmts.insertResult.run(result.text).lastInsertRowid)
      // A fenced-out finish must not leave its result behind.
      if (!this.#finishRow(status, { ref }, error, now, taskId, worker)) throw new FencedOut()
      return true
    })
  }

  #finishRow(
    status: FinalTaskStatus,
    result: { ref: number } | null,
    error: string | null,
    now: number,
    taskId: number,
    worker: string,
  ): boolean {
    const ref = result ? result.ref : null
    const done = this.#stmts.finishTask.get(S[status], ref, error, now, taskId, worker) as
      { batch: number } | undefined
    if (!done) return false
    this.#move(done.batch, S.running, S[status])
    return true
  }

  /**
   * Moves `n` tasks of a batch from one status count to another, in the transaction of their
   * status change (a trigger doing it cost twice as much per change).
   */
  #move(batchKey: number, from: number, to: number, n = 1): void {
    // In a step of the engine's scope, a turn's changes add up in memory and are written in its
    // transaction, once per batch, before it commits: two fewer statements per task.
    if (this.#writes.owns?.()) {
      let deltas = this.#pending.get(batchKey)
      if (!deltas) this.#pending.set(batchKey, (deltas = [0, 0, 0, 0, 0, 0]))
      deltas[from] = (deltas[from] as number) - n
      deltas[to] = (deltas[to] as number) + n
      return
    }
    const key = `${from}>${to}`
    let stmt = this.#moves.get(key)
    if (!stmt) {
      const a = TASK_STATUSES[from] as string
      const b = TASK_STATUSES[to] as string
      stmt = this.#db.prepare(`UPDATE batches SET ${a} = ${a} - ?, ${b} = ${b} + ? WHERE key = ?`)
      this.#moves.set(key, stmt)
    }
    ;(stmt as Database.Statement).run(n, n, batchKey)
  }

  /** Writes the counter changes the open step has gathered (before anything reads the counters). */
  flushCounters(): void {
    if (this.#pending.size === 0) return
    // Counts kept for a transaction SQLite has rolled back on its own (a full disk): dropped, or
    // they would be written without the changes they count.
    if (this.#writes.owns && !this.#writes.owns()) {
      this.#pending.clear()
      return
    }
    for (const [key, deltas] of this.#pending) this.#addCounts.run(...deltas, key)
    this.#pending.clear()
  }

  /** Queues one task of batch `batchKey` and returns its id; the caller counts it as queued. */
  insert(batchKey: number, t: NewTask): number {
    // Claimed long after (a big batch's millions of keys would only churn the recent ones).
    const key = fpKeyOnce(t.fp)
    const found = this.#stmts.findFingerprint.get(key) as { id: number; filled: number } | undefined
    let fpId = found?.id
    if (!found?.filled) {
      const { type, payloadJson, steps, provider, model } = t
      const args = [key, type, payloadJson, t.key, steps, provider, model, t.paramsJson ?? null]
      // Known only to a claim or the ledger so far: it gets its content.
      fpId = found
        ? (this.#stmts.fillFingerprint.get(...args) as { id: number }).id
        : Number(this.#stmts.addFingerprint.run(...args).lastInsertRowid)
    }
    return Number(this.#stmts.insertTask.run(batchKey, t.seq, fpId).lastInsertRowid)
  }

  /**
   * Atomically moves the next queued task of a running batch to `running` under this worker's
   * lease: one UPDATE ... RETURNING, so two processes never pick the same row.
   */
  pick(worker: string, leaseMs: number, batchIds: readonly string[] | null): QueuedTask | null {
    return this.pickMany(worker, leaseMs, batchIds, 1)[0] ?? null
  }

  /** Up to `n` tasks at once, in batch order and each batch in seq order (one update per batch). */
  pickMany(
    worker: string,
    leaseMs: number,
    batchIds: readonly string[] | null,
    n: number,
  ): QueuedTask[] {
    if (n < 1) return []
    return this.#writes.run(() => {
      const now = this.#clock.now()
      const picked: QueuedTask[] = []
      const take = (rows: PickedRow[]) => {
        rows.sort((a, b) => a.seq - b.seq)
        const first = rows[0]
        if (first) this.#move(first.batch, S.queued, S.running, rows.length)
        for (const row of rows) picked.push(this.#queued(row))
      }
      if (batchIds === null) {
        take(this.#stmts.pickAny.all(worker, now + leaseMs, now, n) as PickedRow[])
      }
      for (const batchId of batchIds ?? []) {
        if (picked.length >= n) break
        const limit = n - picked.length
        take(this.#stmts.pickIn.all(worker, now + leaseMs, now, batchId, limit) as PickedRow[])
      }
      return picked
    })
  }

  #queued(row: PickedRow): QueuedTask {
    const c = this.#stmts.pickedContent.get(row.fp_id, row.batch) as PickedContent
    return {
      id: row.id,
      batchId: c.batchId,
      seq: row.seq,
      type: c.type,
      payload: c.payload,
      fp: fpTextKept(c.fp),
      fpId: row.fp_id,
      key: c.key,
      steps: c.steps,
      provider: c.provider,
      model: c.model,
      params: c.params,
      attempts: row.attempts,
      audit: c.audit === 1,
    }
  }

  renew(taskId: number, worker: string, leaseMs: number): boolean {
    const until = this.#clock.now() + leaseMs
    return this.#writes.run(() => this.#stmts.renewTask.run(until, taskId, worker).changes === 1)
  }

  finish(
    taskId: number,
    worker: string,
    status: FinalTaskStatus,
    result: TaskResult,
    error: string | null,
  ): boolean {
    const now = this.#clock.now()
    return this.#writes.run(() => {
      // Pointing at a stored result (or none) is one update: no savepoint to undo a result row.
      if (!result || 'ref' in result)
        return this.#finishRow(status, result, error, now, taskId, worker)
      try {
        return this.#finish(status, result, error, now, taskId, worker)
      } catch (err) {
        if (err instanceof FencedOut) return false
        throw err
      }
    })
  }

  requeue(taskId: number, worker: string, error: string | null): boolean {
    return this.#writes.run(() => {
      const row = this.#stmts.requeueTask.get(error, taskId, worker) as Moved | undefined
      if (row) this.#move(row.batch, S.running, row.status)
      return row !== undefined
    })
  }

  /** Whether any running task's lease has run out: a cheap look before taking the write lock. */
  anyExpired(now: number): boolean {
    this.flushCounters()
    return this.#stmts.anyExpired.get(now) !== undefined
  }

  /** Gives back every task whose lease ran out; returns their batches (each once). */
  requeueExpired(now: number): { requeued: number; batchIds: string[] } {
    this.flushCounters()
    const rows = this.#stmts.expiredTasks.all(now) as { id: number; batch_id: string }[]
    for (const r of rows) {
      const moved = this.#stmts.requeueExpired.get(r.id, now) as Moved | undefined
      if (moved) this.#move(moved.batch, S.running, moved.status)
    }
    return { requeued: rows.length, batchIds: [...new Set(rows.map((r) => r.batch_id))] }
  }

  /**
   * Gives back the running tasks of a worker known to be gone and ends its claims' leases; returns
   * how many tasks, and their batches. Runs inside the caller's transaction.
   */
  requeueGone(worker: string, why: string): { requeued: number; batchIds: string[] } {
    this.flushCounters()
    type Gone = { id: number; fp_id: number; batch_id: string }
    const rows = this.#stmts.goneTasks.all(worker) as Gone[]
    for (const r of rows) {
      const moved = this.#stmts.requeueGone.get(why, r.id, worker) as Moved | undefined
      if (moved) this.#move(moved.batch, S.running, moved.status)
      this.#stmts.expireGoneClaim.run(r.fp_id, worker)
    }
    return { requeued: rows.length, batchIds: [...new Set(rows.map((r) => r.batch_id))] }
  }

  cancelQueued(batchId: string): number {
    const batch = this.#stmts.batchKey.get(batchId) as { key: number } | undefined
    if (!batch) return 0
    return this.#db.transaction(() => {
      const n = this.#stmts.cancelQueued.run(this.#clock.now(), batch.key).changes
      if (n > 0) this.#move(batch.key, S.queued, S.cancelled, n)
      return n
    })()
  }

  /** Failed or cancelled tasks back to queued; returns how many, their batches and fingerprints. */
  retry(filter: { batchId?: string; taskIds?: readonly number[] }): {
    count: number
    batchIds: Set<string>
    fps: Set<string>
  } {
    this.flushCounters()
    type Retryable = { id: number; status: number }
    let found: Retryable[]
    if (filter.taskIds && filter.taskIds.length > 0) {
      found = filter.taskIds
        .map((id) => this.#stmts.getTaskStatus.get(id) as Retryable | undefined)
        .filter((r): r is Retryable => r?.status === S.failed || r?.status === S.cancelled)
    } else if (filter.batchId) {
      found = this.#stmts.retryableInBatch.all(filter.batchId) as Retryable[]
    } else {
      found = this.#stmts.retryableAll.all() as Retryable[]
    }
    const batchIds = new Set<string>()
    const fps = new Set<string>()
    for (const { id, status } of found) {
      const row = this.#stmts.retryTask.get(id, status) as
        { batch: number; batch_id: string; fp: Buffer | string } | undefined
      if (row) {
        this.#move(row.batch, status, S.queued)
        batchIds.add(row.batch_id)
        fps.add(fpText(row.fp))
      }
    }
    return { count: found.length, batchIds, fps }
  }
}

/** A finish with a result to store: status, the result, error, when, the task, its worker. */
type FinishArgs = [
  status: FinalTaskStatus,
  result: { text: string },
  error: string | null,
  now: number,
  taskId: number,
  worker: string,
]

/** Rolls back a finish that lost its task (requeued meanwhile), result row included. */
class FencedOut extends Error {}
