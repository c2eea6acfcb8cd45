// The task table's statements (queue-tasks.ts runs them), by name: what
// test/unit/engine/db/query-plans.test.ts checks, through db/hot-queries.ts.
import type { TaskRow } from '../../../shared/contract'
import { fpText, TASK_STATUSES, TASK_STATUS_CODES as S, taskStatusOf } from '../db/codes'

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
    INSERT INTO fingerprints(fp, type, payload, key, steps, provider, model, params)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  findFingerprint: 'SELECT id, payload IS NOT NULL AS filled FROM fingerprints WHERE fp = ?',
  // A fingerprint first seen by a claim or the ledger gets its content when a task brings it.
  fillFingerprint: `
    INSERT INTO fingerprints(fp, type, payload, key, steps, provider, model, params)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(fp) DO UPDATE SET type = excluded.type, payload = excluded.payload,
      key = excluded.key, steps = excluded.steps, provider = excluded.provider,
      model = excluded.model, params = excluded.params
    RETURNING id`,
  insertTask: `INSERT INTO task_queue(batch, seq, fp_id, status) VALUES (?, ?, ?, ${S.queued})`,
  // Consoles run console batches; a `pacer run` batch runs with that process's keys and limits.
  pickAny: pickSql(`(SELECT key FROM batches WHERE state = 'running' AND driver IS NULL
                      AND queued > 0 ORDER BY created_at LIMIT 1)`),
  pickIn: pickSql(`(SELECT key FROM batches WHERE id = ? AND state = 'running')`),
  pickedContent: `
    SELECT b.id AS batchId, b.audit, f.fp, f.type, f.payload, f.key, f.steps, f.provider, f.model,
      f.params
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
  // A gone worker's tasks (workers.ts): its running ones, found through (batch, status) in the
  // batches that have any running, given back at once instead of when their lease runs out.
  goneTasks: `
    SELECT t.id, t.fp_id, b.id AS batch_id FROM batches b CROSS JOIN task_queue t ON t.batch = b.key
    WHERE b.running > 0 AND t.status = ${S.running} AND t.worker = ?`,
  requeueGone: `
    UPDATE task_queue SET error = ?, status = ${REQUEUED_STATUS}, worker = NULL, lease_until = NULL
    WHERE id = ? AND worker = ? AND status = ${S.running}
    RETURNING batch, status`,
  // Its claim's lease ends now: the next claimer takes it over by the usual compare-and-set on
  // the epoch (claims.ts), without waiting for the lease a dead process cannot renew.
  expireGoneClaim: `
    UPDATE fingerprints SET lease_until = 0 WHERE id = ? AND owner = ? AND state = 'running'`,
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

/** The console's task rows by id (tasks:changed), `count` at a time. */
export function tasksByIdsSql(count: number): string {
  return `SELECT ${TASK_COLUMNS} FROM ${TASK_FROM}
    WHERE t.id IN (${Array<string>(count).fill('?').join(',')}) ORDER BY t.id`
}

/** What a pick returns of each task. */
export interface PickedRow {
  id: number
  batch: number
  seq: number
  fp_id: number
  attempts: number
}

/** A task row as the console's pages read it. */
export interface TaskDbRow {
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

/** A status change's batch and new status, as its RETURNING clause gives them. */
export interface Moved {
  batch: number
  status: number
}

export function toTaskRow(r: TaskDbRow): TaskRow {
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
