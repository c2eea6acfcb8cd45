import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import type {
  BatchState,
  BatchSummary,
  StatusCounts,
  TaskRow,
  TaskStatus,
} from '../../shared/contract'
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

export interface NewBatch {
  /** The `pacer run` process driving it; absent for console batches. */
  driver?: string | null
  name: string
  source: string | null
  sourceHash: string | null
  audit: boolean
  state?: BatchState
}

const EMPTY_COUNTS: StatusCounts = {
  queued: 0,
  running: 0,
  succeeded: 0,
  reused: 0,
  failed: 0,
  cancelled: 0,
}

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

interface BatchDbRow {
  id: string
  name: string
  source: string | null
  source_hash: string | null
  state: BatchState
  audit: number
  created_at: number
  updated_at: number
}

/** Owns the batches and tasks tables: enqueue, atomic pick, task leases, status changes. */
export class TaskQueue {
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #stmts: ReturnType<typeof prepare>
  readonly #transitions = new Map<string, Database.Statement>()

  constructor(db: Database.Database, clock: Clock) {
    this.#db = db
    this.#clock = clock
    this.#stmts = prepare(db)
  }

  /** Creates a batch and its tasks in one transaction (all or nothing). */
  createBatch(batch: NewBatch, tasks: readonly NewTask[]): string {
    const id = `b_${this.#clock.now().toString(36)}_${randomBytes(4).toString('hex')}`
    const now = this.#clock.now()
    // IMMEDIATE: take the write lock up front, so a concurrent writer makes us wait (busy_timeout)
    // instead of failing a read-then-write upgrade with SQLITE_BUSY.
    this.#db
      .transaction(() => {
        this.#stmts.insertBatch.run(
          id,
          batch.driver ?? null,
          batch.name,
          batch.source,
          batch.sourceHash,
          batch.state ?? 'running',
          batch.audit ? 1 : 0,
          now,
          now,
        )
        for (const t of tasks) {
          this.#stmts.insertTask.run(
            id,
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
      })
      .immediate()
    return id
  }

  /**
   * Atomically moves the next queued task of a running batch to `running` under this worker's
   * lease: one UPDATE ... RETURNING, so two processes never pick the same row.
   */
  pick(worker: string, leaseMs: number, batchIds: readonly string[] | null): QueuedTask | null {
    const now = this.#clock.now()
    const row = (
      batchIds === null
        ? this.#stmts.pickAny.get(worker, now + leaseMs, now)
        : this.#pickIn(worker, now + leaseMs, now, batchIds)
    ) as TaskDbRow | undefined
    if (!row) return null
    const batch = this.#stmts.getBatch.get(row.batch_id) as BatchDbRow
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
      audit: batch.audit === 1,
    }
  }

  #pickIn(worker: string, leaseUntil: number, now: number, batchIds: readonly string[]) {
    for (const batchId of batchIds) {
      const row = this.#stmts.pickIn.get(worker, leaseUntil, now, batchId)
      if (row) return row
    }
    return undefined
  }

  /** Extends the task lease; false if the task is no longer this worker's. */
  renewTask(taskId: number, worker: string, leaseMs: number): boolean {
    return this.#stmts.renewTask.run(this.#clock.now() + leaseMs, taskId, worker).changes === 1
  }

  /** Final status for a task this worker runs. Fenced by worker so a requeued task is not touched. */
  finishTask(
    taskId: number,
    worker: string,
    status: Extract<TaskStatus, 'succeeded' | 'reused' | 'failed' | 'cancelled'>,
    result: string | null,
    error: string | null,
  ): boolean {
    const changed = this.#stmts.finishTask.run(
      status,
      result,
      error,
      this.#clock.now(),
      taskId,
      worker,
    ).changes
    return changed === 1
  }

  /** Gives a running task back to the queue (shutdown, lost lease, transient failure). */
  requeueTask(taskId: number, worker: string, error: string | null): boolean {
    return this.#stmts.requeueTask.run(error, taskId, worker).changes === 1
  }

  /**
   * Tasks left `running` by a worker whose lease expired (a killed process) go back to the queue,
   * and their batches are marked interrupted if nobody else is driving them: never silently lost.
   */
  requeueExpired(): { requeued: number; batchIds: string[] } {
    const now = this.#clock.now()
    // Every worker sweeps often: look before taking the write lock.
    if (!this.#stmts.anyExpired.get(now)) return { requeued: 0, batchIds: [] }
    return this.#db
      .transaction(() => {
        const rows = this.#stmts.expiredTasks.all(now) as { id: number; batch_id: string }[]
        if (rows.length === 0) return { requeued: 0, batchIds: [] }
        for (const r of rows) this.#stmts.requeueExpired.run(r.id, now)
        const batchIds = [...new Set(rows.map((r) => r.batch_id))]
        // A batch whose every worker is gone waits for an operator (or the same `pacer run`) to
        // resume it; one still driven by a live worker keeps running.
        for (const b of batchIds) this.#stmts.interruptOrphaned.run(now, b, b, now)
        return { requeued: rows.length, batchIds }
      })
      .immediate()
  }

  /** Marks a batch done when nothing is left queued or running in it. */
  settleBatch(batchId: string): BatchState | null {
    const now = this.#clock.now()
    this.#stmts.settleBatch.run(now, batchId, batchId)
    const b = this.#stmts.getBatch.get(batchId) as BatchDbRow | undefined
    return b ? b.state : null
  }

  setBatchState(batchId: string, state: BatchState, from?: readonly BatchState[]): boolean {
    const now = this.#clock.now()
    if (from) {
      // Called every poll by the CLI's runner: compile each shape of the statement once.
      const key = from.join(',')
      let stmt = this.#transitions.get(key)
      if (!stmt) {
        const placeholders = from.map(() => '?').join(',')
        stmt = this.#db.prepare(
          `UPDATE batches SET state=?, updated_at=? WHERE id=? AND state IN (${placeholders})`,
        )
        this.#transitions.set(key, stmt)
      }
      return stmt.run(state, now, batchId, ...from).changes === 1
    }
    return this.#stmts.setBatchState.run(state, now, batchId).changes === 1
  }

  /** Cancels what has not started yet; running tasks are stopped by the runner. */
  cancelQueued(batchId: string): number {
    return this.#stmts.cancelQueued.run(this.#clock.now(), batchId).changes
  }

  /** Failed or cancelled tasks go back to the queue; their batches run again. */
  retry(filter: { batchId?: string; taskIds?: readonly number[] }): {
    count: number
    fps: string[]
  } {
    return this.#db
      .transaction(() => {
        let ids: number[]
        if (filter.taskIds && filter.taskIds.length > 0) {
          ids = filter.taskIds.filter((id) => {
            const row = this.#stmts.getTaskStatus.get(id) as { status: TaskStatus } | undefined
            return row?.status === 'failed' || row?.status === 'cancelled'
          })
        } else if (filter.batchId) {
          ids = (this.#stmts.retryableInBatch.all(filter.batchId) as { id: number }[]).map(
            (r) => r.id,
          )
        } else {
          ids = (this.#stmts.retryableAll.all() as { id: number }[]).map((r) => r.id)
        }
        const batches = new Set<string>()
        const fps = new Set<string>()
        for (const id of ids) {
          const row = this.#stmts.retryTask.get(id) as { batch_id: string; fp: string } | undefined
          if (row) {
            batches.add(row.batch_id)
            fps.add(row.fp)
          }
        }
        for (const b of batches) this.#stmts.setBatchState.run('running', this.#clock.now(), b)
        return { count: ids.length, fps: [...fps] }
      })
      .immediate()
  }

  /** Who runs the batch from now on: a CLI worker, or null for the consoles. */
  setDriver(batchId: string, driver: string | null): void {
    this.#stmts.setDriver.run(driver, batchId)
  }

  /** The batch's state, or null if there is no such batch (cheap: one primary-key read). */
  batchState(batchId: string): BatchState | null {
    const row = this.#stmts.getBatchState.get(batchId) as { state: BatchState } | undefined
    return row?.state ?? null
  }

  findResumable(sourceHash: string): string | null {
    const row = this.#stmts.findResumable.get(sourceHash) as { id: string } | undefined
    return row?.id ?? null
  }

  batch(batchId: string): BatchSummary | null {
    const b = this.#stmts.getBatch.get(batchId) as BatchDbRow | undefined
    return b ? this.#summary(b) : null
  }

  listBatches(limit = 200): BatchSummary[] {
    const rows = this.#stmts.listBatches.all(limit) as BatchDbRow[]
    // One GROUP BY for the whole page of batches, not one count query per batch.
    const counts = new Map<string, StatusCounts>()
    for (const r of this.#stmts.countsOfRecent.all(limit) as {
      batch_id: string
      status: TaskStatus
      n: number
    }[]) {
      const c = counts.get(r.batch_id) ?? { ...EMPTY_COUNTS }
      c[r.status] = r.n
      counts.set(r.batch_id, c)
    }
    return rows.map((b) => this.#summary(b, counts.get(b.id) ?? { ...EMPTY_COUNTS }))
  }

  counts(batchId: string): StatusCounts {
    const counts = { ...EMPTY_COUNTS }
    for (const r of this.#stmts.countByStatus.all(batchId) as { status: TaskStatus; n: number }[]) {
      counts[r.status] = r.n
    }
    return counts
  }

  listTasks(filter: {
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

  tasksById(ids: readonly number[]): TaskRow[] {
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

  taskResult(taskId: number): string | null {
    const row = this.#stmts.getTaskResult.get(taskId) as { result: string | null } | undefined
    return row?.result ?? null
  }

  #summary(b: BatchDbRow, counts: StatusCounts = this.counts(b.id)): BatchSummary {
    const total = Object.values(counts).reduce((a, n) => a + n, 0)
    return {
      id: b.id,
      name: b.name,
      source: b.source,
      state: b.state,
      audit: b.audit === 1,
      createdAt: b.created_at,
      updatedAt: b.updated_at,
      total,
      counts,
    }
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
  return {
    insertBatch: db.prepare(
      `INSERT INTO batches(id, driver, name, source, source_hash, state, audit, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
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
    getBatch: db.prepare('SELECT * FROM batches WHERE id = ?'),
    getBatchState: db.prepare('SELECT state FROM batches WHERE id = ?'),
    setDriver: db.prepare('UPDATE batches SET driver = ? WHERE id = ?'),
    renewTask: db.prepare(
      `UPDATE tasks SET lease_until=? WHERE id=? AND worker=? AND status='running'`,
    ),
    finishTask: db.prepare(
      `UPDATE tasks SET status=?, result=?, error=?, finished_at=?, worker=NULL, lease_until=NULL
       WHERE id=? AND worker=? AND status='running'`,
    ),
    requeueTask: db.prepare(
      // A task given back to a cancelled batch ends cancelled: nothing would ever pick it again.
      `UPDATE tasks SET
         status = CASE WHEN (SELECT state FROM batches WHERE id = tasks.batch_id) = 'cancelled'
                       THEN 'cancelled' ELSE 'queued' END,
         worker=NULL, lease_until=NULL, error=?
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
         status = CASE WHEN (SELECT state FROM batches WHERE id = tasks.batch_id) = 'cancelled'
                       THEN 'cancelled' ELSE 'queued' END,
         worker=NULL, lease_until=NULL
       WHERE id=? AND status='running' AND lease_until < ?`,
    ),
    interruptOrphaned: db.prepare(
      `UPDATE batches SET state='interrupted', updated_at=?
       WHERE id=? AND state='running' AND NOT EXISTS (
         SELECT 1 FROM tasks WHERE batch_id=? AND status='running' AND lease_until >= ?)`,
    ),
    settleBatch: db.prepare(
      `UPDATE batches SET state='done', updated_at=?
       WHERE id=? AND state IN ('running','interrupted')
         AND NOT EXISTS (SELECT 1 FROM tasks WHERE batch_id=? AND status IN ('queued','running'))`,
    ),
    setBatchState: db.prepare('UPDATE batches SET state=?, updated_at=? WHERE id=?'),
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
    findResumable: db.prepare(
      `SELECT id FROM batches WHERE source_hash=? AND state='interrupted'
       ORDER BY created_at DESC LIMIT 1`,
    ),
    listBatches: db.prepare('SELECT * FROM batches ORDER BY created_at DESC LIMIT ?'),
    countsOfRecent: db.prepare(
      `SELECT batch_id, status, COUNT(*) AS n FROM tasks
       WHERE batch_id IN (SELECT id FROM batches ORDER BY created_at DESC LIMIT ?)
       GROUP BY batch_id, status`,
    ),
    countByStatus: db.prepare(
      'SELECT status, COUNT(*) AS n FROM tasks WHERE batch_id=? GROUP BY status',
    ),
    getTaskResult: db.prepare('SELECT result FROM tasks WHERE id=?'),
  }
}
