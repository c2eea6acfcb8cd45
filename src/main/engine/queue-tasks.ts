import type Database from 'better-sqlite3'
import type { TaskRow, TaskStatus } from '../../shared/contract'
import { fpKey, fpText, TASK_STATUSES, TASK_STATUS_CODES as S, taskStatusOf } from './db/codes'
import { directWrites, type WriteScope } from './db/step-writes'
import type { Clock } from './types'

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
}

/** The statuses a worker can finish a task with. */
export type FinalTaskStatus = Extract<TaskStatus, 'succeeded' | 'reused' | 'failed' | 'cancelled'>

/** What a finished task got: a result already stored (`ref`, shared with its claim), or its text. */
export type TaskResult = { ref: number } | { text: string } | null

interface PickedRow {
  id: number
  batch: number
  seq: number
  fp_id: number
  attempts: number
}

interface TaskDbRow {
  id: number
  batch_id: string
  seq: number
  type: string
  fp: Buffer | string
  steps: number
  provider: string
  model: string
  status: number
  attempts: number
  error: string | null
  created_at: number
  started_at: number | null
  finished_at: number | null
}

// A task given back to a cancelled batch ends cancelled: nothing would ever pick it again.
const REQUEUED_STATUS = `CASE WHEN (SELECT state FROM batches WHERE key = task_queue.batch) = 'cancelled'
  THEN ${S.cancelled} ELSE ${S.queued} END`

// The batch is chosen first, then its next tasks through task_queue_batch_status (batch, status,
// seq): one index range per pick of up to `?` tasks, however long the queue.
const pickSql = (batchKey: string) => `
  UPDATE task_queue SET status = ${S.running}, worker = ?, lease_until = ?, attempts = attempts + 1,
    started_at = COALESCE(started_at, ?)
  WHERE id IN (SELECT id FROM task_queue WHERE batch = ${batchKey} AND status = ${S.queued}
               ORDER BY seq LIMIT ?)
  RETURNING id, batch, seq, fp_id, attempts`

/** The task table's hot statements, by name: what test/unit/engine/db/query-plans.test.ts checks. */
export const TASK_SQL = {
  // A fingerprint not stored yet, with its content (found missing under this transaction's lock).
  addFingerprint: `
    INSERT INTO fingerprints(fp, type, payload, key, steps, provider, model)
    VALUES (?, ?, ?, ?, ?, ?, ?)`,
  findFingerprint: 'SELECT id, payload IS NOT NULL AS filled FROM fingerprints WHERE fp = ?',
  // A fingerprint first seen by a claim or the ledger gets its content when a task brings it.
  fillFingerprint: `
    INSERT INTO fingerprints(fp, type, payload, key, steps, provider, model)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(fp) DO UPDATE SET type = excluded.type, payload = excluded.payload,
      key = excluded.key, steps = excluded.steps, provider = excluded.provider,
      model = excluded.model
    RETURNING id`,
  insertTask: `INSERT INTO task_queue(batch, seq, fp_id, status) VALUES (?, ?, ?, ${S.queued})`,
  // Consoles run console batches; a `pacer run` batch runs with that process's keys and limits.
  pickAny: pickSql(`(SELECT key FROM batches WHERE state = 'running' AND driver IS NULL
                      AND queued > 0 ORDER BY created_at LIMIT 1)`),
  pickIn: pickSql(`(SELECT key FROM batches WHERE id = ? AND state = 'running')`),
  pickedContent: `
    SELECT b.id AS batchId, b.audit, f.fp, f.type, f.payload, f.key, f.steps, f.provider, f.model
    FROM fingerprints f, batches b WHERE f.id = ? AND b.key = ?`,
  renewTask: `UPDATE task_queue SET lease_until = ? WHERE id = ? AND worker = ? AND status = ${S.running}`,
  insertResult: 'INSERT INTO results(body) VALUES (?)',
  finishTask: `
    UPDATE task_queue SET status = ?, result_id = ?, error = ?, finished_at = ?, worker = NULL,
      lease_until = NULL
    WHERE id = ? AND worker = ? AND status = ${S.running}
    RETURNING batch`,
  requeueTask: `
    UPDATE task_queue SET status = ${REQUEUED_STATUS}, worker = NULL, lease_until = NULL, error = ?
    WHERE id = ? AND worker = ? AND status = ${S.running}
    RETURNING batch, status`,
  // Only batches whose counters show running tasks, each through (batch, status): a look at the
  // tasks in flight, not at the queue.
  anyExpired: `
    SELECT 1 FROM task_queue WHERE batch IN (SELECT key FROM batches WHERE running > 0)
      AND status = ${S.running} AND lease_until < ? LIMIT 1`,
  expiredTasks: `
    SELECT t.id, b.id AS batch_id FROM batches b CROSS JOIN task_queue t ON t.batch = b.key
    WHERE b.running > 0 AND t.status = ${S.running} AND t.lease_until < ?`,
  requeueExpired: `
    UPDATE task_queue SET error = 'requeued: its worker stopped renewing the lease',
      status = ${REQUEUED_STATUS}, worker = NULL, lease_until = NULL
    WHERE id = ? AND status = ${S.running} AND lease_until < ?
    RETURNING batch, status`,
  batchKey: 'SELECT key FROM batches WHERE id = ?',
  cancelQueued: `
    UPDATE task_queue SET status = ${S.cancelled}, finished_at = ?
    WHERE batch = ? AND status = ${S.queued}`,
  retryableInBatch: `
    SELECT id, status FROM task_queue WHERE batch = (SELECT key FROM batches WHERE id = ?)
      AND status IN (${S.failed}, ${S.cancelled})`,
  // Only batches whose counters say they have any: no pass over the tasks of the others.
  retryableAll: `
    SELECT id, status FROM task_queue WHERE status IN (${S.failed}, ${S.cancelled})
      AND batch IN (SELECT key FROM batches WHERE failed + cancelled > 0)`,
  retryTask: `
    UPDATE task_queue SET status = ${S.queued}, error = NULL, finished_at = NULL, result_id = NULL
    WHERE id = ? AND status = ?
    RETURNING batch, (SELECT id FROM batches WHERE key = batch) AS batch_id,
      (SELECT fp FROM fingerprints WHERE id = fp_id) AS fp`,
  getTaskStatus: 'SELECT id, status FROM task_queue WHERE id = ?',
  failedFingerprints: `
    SELECT DISTINCT f.fp FROM task_queue t JOIN fingerprints f ON f.id = t.fp_id
    WHERE t.batch = (SELECT key FROM batches WHERE id = ?)
      AND f.state = 'completed' AND f.status = 'failed'`,
  distinctTasks: `
    SELECT COUNT(DISTINCT fp_id) AS n FROM task_queue
    WHERE batch = (SELECT key FROM batches WHERE id = ?)`,
  getTaskResult: `
    SELECT r.body FROM task_queue t JOIN results r ON r.id = t.result_id WHERE t.id = ?`,
} as const

const TASK_COLUMNS = `t.id, b.id AS batch_id, t.seq, f.type, f.fp, f.steps, f.provider, f.model,
  t.status, t.attempts, t.error, b.created_at, t.started_at, t.finished_at`
const TASK_FROM = `task_queue t JOIN batches b ON b.key = t.batch JOIN fingerprints f ON f.id = t.fp_id`

/** The console's page of tasks (tasks:list) under a WHERE clause on `t`. */
export function taskPageSql(where: string): string {
  return `SELECT ${TASK_COLUMNS} FROM ${TASK_FROM} ${where} ORDER BY t.id LIMIT ? OFFSET ?`
}

/** The WHERE clauses tasks:list builds (the statuses filter takes one `?` per status). */
export const TASK_PAGE_FILTERS = {
  // Its ids from first_task on, in id order: a page costs its offset, not a sort of the batch.
  // (+t.batch: the range is the way in, the batch only a check.)
  batch: `WHERE t.id >= (SELECT first_task FROM batches WHERE id = ?)
    AND t.id < (SELECT first_task + ${TASK_STATUSES.join(' + ')} FROM batches WHERE id = ?)
    AND +t.batch = (SELECT key FROM batches WHERE id = ?)`,
  batchAndStatus: 'WHERE t.batch = (SELECT key FROM batches WHERE id = ?) AND t.status IN (?, ?)',
} as const

type Statements = { [K in keyof typeof TASK_SQL]: Database.Statement }

/**
 * Owns the task_queue table: inserts (with their fingerprint's content, stored once), the atomic
 * pick, leases and status changes. Transactions that span batches and tasks belong to TaskQueue;
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
    for (const [key, deltas] of this.#pending) this.#addCounts.run(...deltas, key)
    this.#pending.clear()
  }

  /** Queues one task of batch `batchKey` and returns its id; the caller counts it as queued. */
  insert(batchKey: number, t: NewTask): number {
    const key = fpKey(t.fp)
    const found = this.#stmts.findFingerprint.get(key) as { id: number; filled: number } | undefined
    let fpId = found?.id
    if (!found?.filled) {
      const args = [key, t.type, t.payloadJson, t.key, t.steps, t.provider, t.model] as const
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
    const c = this.#stmts.pickedContent.get(row.fp_id, row.batch) as {
      batchId: string
      audit: number
      fp: Buffer | string
      type: string
      payload: string
      key: string | null
      steps: number
      provider: string
      model: string
    }
    return {
      id: row.id,
      batchId: c.batchId,
      seq: row.seq,
      type: c.type,
      payload: c.payload,
      fp: fpText(c.fp),
      fpId: row.fp_id,
      key: c.key,
      steps: c.steps,
      provider: c.provider,
      model: c.model,
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

  /** A page of tasks; `total` is how many the filter selects (from the counters when it can). */
  list(
    filter: {
      batchId?: string
      statuses?: readonly TaskStatus[]
      offset: number
      limit: number
    },
    counted: (batchId: string | undefined, statuses: readonly TaskStatus[]) => number | null = () =>
      null,
  ): { rows: TaskRow[]; total: number } {
    const where: string[] = []
    const args: unknown[] = []
    const statuses = filter.statuses ?? []
    if (filter.batchId && statuses.length === 0) {
      where.push(TASK_PAGE_FILTERS.batch.slice('WHERE '.length))
      args.push(filter.batchId, filter.batchId, filter.batchId)
    } else if (filter.batchId) {
      where.push('t.batch = (SELECT key FROM batches WHERE id = ?)')
      args.push(filter.batchId)
    }
    if (statuses.length > 0) {
      where.push(`t.status IN (${statuses.map(() => '?').join(',')})`)
      args.push(...statuses.map((s) => S[s]))
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : ''
    const total =
      counted(filter.batchId, statuses) ??
      (
        this.#db.prepare(`SELECT COUNT(*) AS n FROM task_queue t ${clause}`).get(...args) as {
          n: number
        }
      ).n
    const rows = this.#db
      .prepare(taskPageSql(clause))
      .all(...args, filter.limit, filter.offset) as TaskDbRow[]
    return { rows: rows.map(toTaskRow), total }
  }

  byIds(ids: readonly number[]): TaskRow[] {
    if (ids.length === 0) return []
    const out: TaskRow[] = []
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500)
      const rows = this.#db
        .prepare(
          `SELECT ${TASK_COLUMNS} FROM ${TASK_FROM}
           WHERE t.id IN (${chunk.map(() => '?').join(',')}) ORDER BY t.id`,
        )
        .all(...chunk) as TaskDbRow[]
      out.push(...rows.map(toTaskRow))
    }
    return out
  }

  failedFingerprints(batchId: string): string[] {
    const rows = this.#stmts.failedFingerprints.all(batchId) as { fp: Buffer | string }[]
    return rows.map((r) => fpText(r.fp))
  }

  distinct(batchId: string): number {
    return (this.#stmts.distinctTasks.get(batchId) as { n: number }).n
  }

  result(taskId: number): string | null {
    const row = this.#stmts.getTaskResult.get(taskId) as { body: string } | undefined
    return row?.body ?? null
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

/** A status change's batch and new status, as its RETURNING clause gives them. */
interface Moved {
  batch: number
  status: number
}

function toTaskRow(r: TaskDbRow): TaskRow {
  return {
    id: r.id,
    batchId: r.batch_id,
    seq: r.seq,
    type: r.type,
    fp: fpText(r.fp),
    steps: r.steps,
    provider: r.provider,
    model: r.model,
    status: taskStatusOf(r.status),
    attempts: r.attempts,
    error: r.error,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  }
}
