// The task table's pages for the console, the CLI and `pacer run`'s summary: tasks by filter or
// id, a batch's failed fingerprints and distinct count, one task's result. Reads only: the writes
// are TaskTable's (queue-tasks.ts).
import type Database from 'better-sqlite3'
import type { TaskRow, TaskStatus } from '../../../shared/contract'
import { fpText, TASK_STATUS_CODES as S } from '../db/codes'
import {
  TASK_PAGE_FILTERS,
  TASK_SQL,
  taskPageSql,
  tasksByIdsSql,
  toTaskRow,
  type TaskDbRow,
} from './tasks-sql'

/** Reads of the task_queue table. */
export class TaskPages {
  readonly #db: Database.Database
  readonly #failedFingerprints: Database.Statement
  readonly #distinct: Database.Statement
  readonly #result: Database.Statement

  constructor(db: Database.Database) {
    this.#db = db
    this.#failedFingerprints = db.prepare(TASK_SQL.failedFingerprints)
    this.#distinct = db.prepare(TASK_SQL.distinctTasks)
    this.#result = db.prepare(TASK_SQL.getTaskResult)
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
      // Across batches too through task_queue_batch_status (a few batches): the page costs the
      // tasks in those statuses, not a pass over every task looking for a sparse few.
      if (!filter.batchId) where.push('t.batch IN (SELECT key FROM batches)')
      where.push(`t.status IN (${statuses.map(() => '?').join(',')})`)
      args.push(...statuses.map((s) => S[s]))
    }
    // No filter: the page is a range of ids read in order (offset + limit rows, never the rest).
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : 'WHERE t.id > 0'
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
      const rows = this.#db.prepare(tasksByIdsSql(chunk.length)).all(...chunk) as TaskDbRow[]
      out.push(...rows.map(toTaskRow))
    }
    return out
  }

  failedFingerprints(batchId: string): string[] {
    const rows = this.#failedFingerprints.all(batchId) as { fp: Buffer | string }[]
    return rows.map((r) => fpText(r.fp))
  }

  distinct(batchId: string): number {
    return (this.#distinct.get(batchId) as { n: number }).n
  }

  result(taskId: number): string | null {
    const row = this.#result.get(taskId) as { body: string } | undefined
    return row?.body ?? null
  }
}
