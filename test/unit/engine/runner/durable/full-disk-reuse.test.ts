// A full disk as a duplicate's reuse is written: the transaction SQLite rolls back takes the reuse's
// ledger row with it, and the task's end is written again once there is room. The row must be
// written again with it: written apart (just before the end), the task ended reused with no
// 'reused' row on the ledger (the boosted disk-full run's summary: reused 29 of 30).
import { afterEach, describe, expect, it } from 'vitest'
import { StepWrites } from '../../../../../src/main/engine/db/step-writes'
import { WriteHealth } from '../../../../../src/main/engine/db/write-failures'
import { TaskQueue } from '../../../../../src/main/engine/queue/queue'
import type { FinalTaskStatus } from '../../../../../src/main/engine/queue/tasks'
import { CallJournal } from '../../../../../src/main/engine/runner/durable/journal'
import { fakeClock } from '../../../../helpers/clock'
import { openLedgerDb } from '../../../../helpers/ledger-db'
import { ledgerRows, runDuplicatePair } from './duplicate-pair'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Full = 'transaction' | 'statement'

/**
 * The queue, whose first write of a reused task's end meets the full disk: SQLite's page limit,
 * which rolls back the whole transaction (the reuse's row with it), or a failure of that statement
 * alone, which leaves the row in the transaction (SQLite may do either on SQLITE_FULL).
 */
class FullAtReusedEnd extends TaskQueue {
  full = 0

  constructor(
    readonly db: ConstructorParameters<typeof TaskQueue>[0],
    clock: ConstructorParameters<typeof TaskQueue>[1],
    writes: ConstructorParameters<typeof TaskQueue>[2],
    readonly mode: Full,
  ) {
    super(db, clock, writes)
  }

  override finishTask(
    taskId: number,
    worker: string,
    status: FinalTaskStatus,
    result: Parameters<TaskQueue['finishTask']>[3],
    error: string | null,
  ): boolean {
    if (status === 'reused' && this.full++ === 0) {
      if (this.mode === 'transaction') fillOnce(this.db)
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
    }
    return super.finishTask(taskId, worker, status, result, error)
  }
}

/** A write that needs pages the limit no longer allows: SQLite rolls the whole transaction back. */
function fillOnce(db: FullAtReusedEnd['db']): void {
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`)
  try {
    expect(() =>
      db.prepare('INSERT INTO results(body) VALUES (?)').run('x'.repeat(200_000)),
    ).toThrow(/full/)
    expect(db.inTransaction).toBe(false)
  } finally {
    db.pragma('max_page_count = 1000000')
  }
}

describe('a full disk as a duplicate reuses a result', () => {
  it.each<[Full, string]>([
    ['transaction', "writes the reuse's ledger row again with the task's end"],
    ['statement', "keeps the reuse's ledger row its transaction still holds: written once"],
  ])('%s rolled back: %s', async (mode) => {
    const file = openLedgerDb()
    const { db } = file
    const clock = fakeClock()
    const health = new WriteHealth({ dbPath: file.file, probe: () => true, minDelayMs: 10 })
    const lost: Error[] = []
    const writes = new StepWrites(db, { onError: (err) => lost.push(err), health })
    const queue = new FullAtReusedEnd(db, clock, writes, mode)
    const { ledger, batchId, requests } = await runDuplicatePair(
      {
        file,
        clock,
        health,
        writes,
        queue,
        journal: new CallJournal(db, writes),
        steps: 1,
        prompt: 'once',
      },
      cleanups,
    )

    // The end's first write met the full disk; SQLite took its transaction back, or kept it.
    expect(queue.full).toBe(2)
    expect(lost.length > 0).toBe(mode === 'transaction')
    expect(requests).toHaveLength(1)
    const tasks = queue.listTasks({ batchId, offset: 0, limit: 10 }).rows
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'reused'])
    const [first, second] = tasks.map((t) => t.id)
    expect(ledgerRows(db)).toEqual([
      { taskId: first, step: 1, outcome: 'executed' },
      { taskId: second, step: 0, outcome: 'reused' },
    ])
    expect(ledger.totals({ batchId })).toMatchObject({ executed: 1, reused: 1, duplicates: 0 })
  })
})
