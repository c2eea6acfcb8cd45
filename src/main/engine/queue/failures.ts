// Why a batch's tasks failed, grouped: what `pacer run` prints at its end, one example each.
import type Database from 'better-sqlite3'
import { TASK_STATUS_CODES as S } from '../db/codes'

/** Tasks that failed for one reason, and the first of them (its line in the batch file). */
export interface FailureGroup {
  reason: string
  tasks: number
  example: { line: number; type: string }
}

/** The groups' statements: through (batch, status, seq), the failed tasks of one batch only. */
export const FAILURE_SQL = {
  // SQLite takes the bare fp_id from the row MIN(seq) picked: the example is the first line.
  groups: `
    SELECT COALESCE(t.error, 'failed') AS reason, COUNT(*) AS tasks, MIN(t.seq) AS line,
      t.fp_id AS fpId
    FROM task_queue t
    WHERE t.batch = (SELECT key FROM batches WHERE id = ?) AND t.status = ${S.failed}
    GROUP BY t.error ORDER BY tasks DESC, line LIMIT ?`,
  typeOf: 'SELECT type FROM fingerprints WHERE id = ?',
} as const

/** The batch's failed tasks by reason, most common first, at most `limit` reasons. */
export function failureGroups(
  db: Database.Database,
  batchId: string,
  limit: number,
): FailureGroup[] {
  const rows = db.prepare(FAILURE_SQL.groups).all(batchId, limit) as {
    reason: string
    tasks: number
    line: number
    fpId: number
  }[]
  const typeOf = db.prepare(FAILURE_SQL.typeOf).pluck()
  return rows.map((r) => ({
    reason: r.reason,
    tasks: r.tasks,
    example: { line: r.line, type: String(typeOf.get(r.fpId) ?? '') },
  }))
}
