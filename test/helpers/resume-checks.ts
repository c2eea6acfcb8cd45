// What must hold of a database after a batch file was interrupted (Ctrl-C, kill -9, any number of
// times) and run again to its end: one batch, done, every task counted once, every answer there.
import { expect } from 'vitest'
import type { StatusCounts } from '../../src/shared/contract'
import { query, runPacer } from './cli'

/** What the file held: its lines, and how many distinct tasks (fingerprints) they are. */
export interface FileShape {
  lines: number
  distinct: number
}

/**
 * One batch of the file, done, nothing queued or running; `pacer summary` counts each line once
 * (runs = lines, executed = distinct tasks, the rest reused); every distinct task has its result.
 */
export async function assertResumedOnce(db: string, file: FileShape): Promise<void> {
  const listed = await runPacer(['batches', '--db', db, '--json'])
  expect(listed.code, listed.stderr).toBe(0)
  const { batches } = JSON.parse(listed.stdout) as {
    batches: { id: string; state: string; total: number; counts: StatusCounts }[]
  }
  expect(batches.map((b) => [b.state, b.total])).toEqual([['done', file.lines]])
  expect(batches[0]!.counts).toMatchObject({ queued: 0, running: 0, failed: 0, cancelled: 0 })
  expect(batches[0]!.counts.succeeded + batches[0]!.counts.reused).toBe(file.lines)

  const summary = await runPacer(['summary', '--db', db, '--json'])
  expect(summary.code, summary.stderr).toBe(0)
  const { totals } = JSON.parse(summary.stdout) as {
    totals: { runs: number; executed: number; reused: number; duplicates: number }
  }
  expect(totals.runs).toBe(file.lines)
  expect(totals.executed + totals.duplicates).toBe(file.distinct)
  expect(totals.reused).toBe(file.lines - file.distinct)

  // Every distinct task has its answer, and every line points at one.
  const answered = query<{ n: number }>(
    db,
    `SELECT COUNT(DISTINCT fp) AS n FROM claims WHERE state = 'completed' AND status = 'succeeded'`,
  )
  expect(answered[0]!.n).toBe(file.distinct)
  const unanswered = query<{ n: number }>(
    db,
    `SELECT COUNT(*) AS n FROM task_queue WHERE result_id IS NULL`,
  )
  expect(unanswered[0]!.n).toBe(0)
}

/**
 * After an interruption and a rerun, each (execution, call index) was paid once (the call
 * journal): exactly one `executed` row each, no duplicate when the run was stopped with Ctrl-C (its
 * in-flight calls landed), and after kill -9 at most as many repeats as calls were in flight at the
 * kill, each ledgered as `duplicate`.
 */
export function assertCallsOnce(db: string, how: 'sigint' | { sigkill: number }): void {
  const repeats = query<{ fp: string; step: number; executed: number; duplicates: number }>(
    db,
    `SELECT fp, step, SUM(outcome = 'executed') AS executed, SUM(outcome = 'duplicate') AS duplicates
     FROM ledger WHERE outcome IN ('executed', 'duplicate') GROUP BY fp, step`,
  )
  for (const r of repeats) expect(r.executed, `${r.fp} call ${r.step}`).toBe(1)
  const duplicates = repeats.reduce((n, r) => n + r.duplicates, 0)
  if (how === 'sigint') expect(duplicates).toBe(0)
  else expect(duplicates).toBeLessThanOrEqual(how.sigkill)
}
