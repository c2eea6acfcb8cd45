import type Database from 'better-sqlite3'
import type { TaskRow, TaskStatus } from '../../shared/contract'
import type { Clock } from './types'

/** A task as the runner sees it (with its payload), picked atomically from the queue. */
export interface QueuedTask {
  id: number
  batchId: string
  seq: number
  type: string
  payload: string
  fp: string
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

interface TaskDbRow {
  id: number
  batch_id: string
  seq: number
  type: string
  payload: string
  fp: string
  key: string | null
  steps: number
  provider: string
  model: string
  status: TaskStatus
  attempts: number
  error: string | null
  created_at: number
  started_at: number | null
  finished_at: number | null
  audit?: number
}

/**
 * Owns the tasks table: inserts, the atomic pick, leases and status changes. Transactions that
 * span batches and tasks belong to TaskQueue; these methods run inside them.
 */
export class TaskTable {
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #stmts: ReturnType<typeof prepare>

  constructor(db: Database.Database, clock: Clock) {
    this.#db = db
    this.#clock = clock
    this.#stmts = prepare(db)
  }

  insert(batchId: string, t: NewTask, now: number): void {
    this.#stmts.insertTask.run(
      batchId,
      t.seq,
      t.type,
      t.payloadJson,
      t.fp,
      t.key,
      t.steps,
      t.provider,
      t.model,
      now,
    )
  }

  /**
   * Atomically moves the next queued task of a running batch to `running` under this worker's
   * lease: one UPDATE ... RETURNING, so two processes never pick the same row. `audit` is the
   * batch's, for the caller to fill in.
   */
  pick(
    worker: string,
    leaseMs: number,
    batchIds: readonly string[] | null,
  ): Omit<QueuedTask, 'audit'> | null {
    const now = this.#clock.now()
    const row = (
      batchIds === null
        ? this.#stmts.pickAny.get(worker, now + leaseMs, now)
        : this.#pickIn(worker, now + leaseMs, now, batchIds)
    ) as TaskDbRow | undefined
    if (!row) return null
    return {
      id: row.id,
      batchId: row.batch_id,
      seq: row.seq,
      type: row.type,
      payload: row.payload,
      fp: row.fp,
      key: row.key,
      steps: row.steps,
      provider: row.provider,
      model: row.model,
      attempts: row.attempts,
    }
  }

  #pickIn(worker: string, leaseUntil: number, now: number, batchIds: readonly string[]) {
    for (const batchId of batchIds) {
      const row = this.#stmts.pickIn.get(worker, leaseUntil, now, batchId)
      if (row) return row
    }
    return undefined
  }

  renew(taskId: number, worker: string, leaseMs: number): boolean {
    return this.#stmts.renewTask.run(this.#clock.now() + leaseMs, taskId, worker).changes === 1
  }

  finish(
    taskId: number,
    worker: string,
    status: FinalTaskStatus,
    result: string | null,
    error: string | null,
  ): boolean {
    const now = this.#clock.now()
    return this.#stmts.finishTask.run(status, result, error, now, taskId, worker).changes === 1
  }

  requeue(taskId: number, worker: string, error: string | null): boolean {
    return this.#stmts.requeueTask.run(error, taskId, worker).changes === 1
  }

  /** Whether any running task's lease has run out: a cheap look before taking the write lock. */
  anyExpired(now: number): boolean {
    return this.#stmts.anyExpired.get(now) !== undefined
  }

  /** Gives back every task whose lease ran out; returns their batches (each once). */
  requeueExpired(now: number): { requeued: number; batchIds: string[] } {
    const rows = this.#stmts.expiredTasks.all(now) as { id: number; batch_id: string }[]
    for (const r of rows) this.#stmts.requeueExpired.run(r.id, now)
    return { requeued: rows.length, batchIds: [...new Set(rows.map((r) => r.batch_id))] }
  }

  cancelQueued(batchId: string): number {
    return this.#stmts.cancelQueued.run(this.#clock.now(), batchId).changes
  }

  /** Failed or cancelled tasks back to queued; returns how many, their batches and fingerprints. */
  retry(filter: { batchId?: string; taskIds?: readonly number[] }): {
    count: number
    batchIds: Set<string>
    fps: Set<string>
  } {
    let ids: number[]
    if (filter.taskIds && filter.taskIds.length > 0) {
      ids = filter.taskIds.filter((id) => {
        const row = this.#stmts.getTaskStatus.get(id) as { status: TaskStatus } | undefined
        return row?.status === 'failed' || row?.status === 'cancelled'
      })
    } else if (filter.batchId) {
      ids = (this.#stmts.retryableInBatch.all(filter.batchId) as { id: number }[]).map((r) => r.id)
    } else {
      ids = (this.#stmts.retryableAll.all() as { id: number }[]).map((r) => r.id)
    }
    const batchIds = new Set<string>()
    const fps = new Set<string>()
    for (const id of ids) {
      const row = this.#stmts.retryTask.get(id) as { batch_id: string; fp: string } | undefined
      if (row) {
        batchIds.add(row.batch_id)
        fps.add(row.fp)
      }
    }
    return { count: ids.length, batchIds, fps }
  }

  list(filter: {
    batchId?: string
    statuses?: readonly TaskStatus[]
    offset: number
    limit: number
  }): { rows: TaskRow[]; total: number } {
    const where: string[] = []
    const args: unknown[] = []
    if (filter.batchId) {
      where.push('batch_id = ?')
      args.push(filter.batchId)
    }
    if (filter.statuses && filter.statuses.length > 0) {
      where.push(`status IN (${filter.statuses.map(() => '?').join(',')})`)
      args.push(...filter.statuses)
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : ''
    const total = (
      this.#db.prepare(`SELECT COUNT(*) AS n FROM tasks ${clause}`).get(...args) as { n: number }
    ).n
    const rows = this.#db
      .prepare(`SELECT ${TASK_COLUMNS} FROM tasks ${clause} ORDER BY id LIMIT ? OFFSET ?`)
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
          `SELECT ${TASK_COLUMNS} FROM tasks WHERE id IN (${chunk.map(() => '?').join(',')}) ORDER BY id`,
        )
        .all(...chunk) as TaskDbRow[]
      out.push(...rows.map(toTaskRow))
    }
    return out
  }

  result(taskId: number): string | null {
    const row = this.#stmts.getTaskResult.get(taskId) as { result: string | null } | undefined
    return row?.result ?? null
  }
}

const TASK_COLUMNS =
  'id, batch_id, seq, type, fp, steps, provider, model, status, attempts, error, created_at, started_at, finished_at'

function toTaskRow(r: TaskDbRow): TaskRow {
  return {
    id: r.id,
    batchId: r.batch_id,
    seq: r.seq,
    type: r.type,
    fp: r.fp,
    steps: r.steps,
    provider: r.provider,
    model: r.model,
    status: r.status,
    attempts: r.attempts,
    error: r.error,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  }
}

function prepare(db: Database.Database) {
  // The batch is chosen first, then its next task through tasks_batch_status (batch_id, status,
  // seq): one index probe per pick. (Ordering a join of all queued tasks by batch and seq sorted
  // the whole queue on every pick: quadratic over a batch.)
  const pick = (batchId: string) => `
    UPDATE tasks SET status='running', worker=?, lease_until=?, attempts=attempts+1,
      started_at=COALESCE(started_at, ?)
    WHERE id = (
      SELECT t.id FROM tasks t
      WHERE t.batch_id = ${batchId} AND t.status='queued'
      ORDER BY t.seq LIMIT 1)
    RETURNING *`
  // A task given back to a cancelled batch ends cancelled: nothing would ever pick it again.
  const requeuedStatus = `CASE WHEN (SELECT state FROM batches WHERE id = tasks.batch_id) = 'cancelled'
                       THEN 'cancelled' ELSE 'queued' END`
  return {
    insertTask: db.prepare(
      `INSERT INTO tasks(batch_id, seq, type, payload, fp, key, steps, provider, model, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)`,
    ),
    // Consoles run console batches; a `pacer run` batch runs with that process's keys and limits.
    pickAny: db.prepare(
      pick(`(SELECT b.id FROM batches b
             WHERE b.state='running' AND b.driver IS NULL
               AND EXISTS (SELECT 1 FROM tasks q WHERE q.batch_id = b.id AND q.status='queued')
             ORDER BY b.created_at LIMIT 1)`),
    ),
    pickIn: db.prepare(pick(`(SELECT id FROM batches WHERE id = ? AND state='running')`)),
    renewTask: db.prepare(
      `UPDATE tasks SET lease_until=? WHERE id=? AND worker=? AND status='running'`,
    ),
    finishTask: db.prepare(
      `UPDATE tasks SET status=?, result=?, error=?, finished_at=?, worker=NULL, lease_until=NULL
       WHERE id=? AND worker=? AND status='running'`,
    ),
    requeueTask: db.prepare(
      `UPDATE tasks SET status = ${requeuedStatus}, worker=NULL, lease_until=NULL, error=?
       WHERE id=? AND worker=? AND status='running'`,
    ),
    anyExpired: db.prepare(
      `SELECT 1 FROM tasks WHERE status='running' AND lease_until < ? LIMIT 1`,
    ),
    expiredTasks: db.prepare(
      `SELECT id, batch_id FROM tasks WHERE status='running' AND lease_until < ?`,
    ),
    requeueExpired: db.prepare(
      `UPDATE tasks SET error='requeued: its worker stopped renewing the lease',
         status = ${requeuedStatus}, worker=NULL, lease_until=NULL
       WHERE id=? AND status='running' AND lease_until < ?`,
    ),
    cancelQueued: db.prepare(
      `UPDATE tasks SET status='cancelled', finished_at=? WHERE batch_id=? AND status='queued'`,
    ),
    getTaskStatus: db.prepare('SELECT status FROM tasks WHERE id=?'),
    retryableInBatch: db.prepare(
      `SELECT id FROM tasks WHERE batch_id=? AND status IN ('failed','cancelled')`,
    ),
    retryableAll: db.prepare(`SELECT id FROM tasks WHERE status IN ('failed','cancelled')`),
    retryTask: db.prepare(
      `UPDATE tasks SET status='queued', error=NULL, finished_at=NULL, result=NULL
       WHERE id=? AND status IN ('failed','cancelled') RETURNING batch_id, fp`,
    ),
    getTaskResult: db.prepare('SELECT result FROM tasks WHERE id=?'),
  }
}
