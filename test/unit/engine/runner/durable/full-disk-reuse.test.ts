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

  it('a row whose statement fails after the end went in is written again, the end kept', async () => {
    const file = openLedgerDb()
    const { db } = file
    // The reuse's row (step 0) meets the full disk once, at its statement alone.
    let full = 0
    db.function('full_once', () => {
      if (full++ === 0) {
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
      }
      return 0
    })
    db.exec(
      'CREATE TEMP TRIGGER reuse_full BEFORE INSERT ON ledger_rows WHEN NEW.step = 0 BEGIN SELECT full_once(); END',
    )
    const clock = fakeClock()
    const health = new WriteHealth({ dbPath: file.file, probe: () => true, minDelayMs: 10 })
    const writes = new StepWrites(db, { onError: () => {}, health })
    const queue = new TaskQueue(db, clock, writes)
    const { ledger, batchId } = await runDuplicatePair(
      {
        file,
        clock,
        health,
        writes,
        queue,
        journal: new CallJournal(db, writes),
        steps: 1,
        prompt: 'row',
      },
      cleanups,
    )

    expect(full).toBe(2)
    const tasks = queue.listTasks({ batchId, offset: 0, limit: 10 }).rows
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'reused'])
    expect(ledgerRows(db).map((r) => r.outcome)).toEqual(['executed', 'reused'])
    expect(ledger.totals({ batchId })).toMatchObject({ executed: 1, reused: 1 })
  })

  it("writes no reuse row for an end that finds the task no longer this worker's", async () => {
    const file = openLedgerDb()
    const { db } = file
    const clock = fakeClock()
    const health = new WriteHealth({ dbPath: file.file, probe: () => true, minDelayMs: 10 })
    const writes = new StepWrites(db, { onError: () => {}, health })
    const queue = new TakenAtReusedEnd(db, clock, writes)
    const { ledger, batchId } = await runDuplicatePair(
      {
        file,
        clock,
        health,
        writes,
        queue,
        journal: new CallJournal(db, writes),
        steps: 1,
        prompt: 'gone',
      },
      cleanups,
    )

    expect(queue.taken).toBe(1)
    const tasks = queue.listTasks({ batchId, offset: 0, limit: 10 }).rows
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'reused'])
    // The worker that ended it writes its own reuse row; this one's would count the saving twice.
    expect(ledgerRows(db).map((r) => r.outcome)).toEqual(['executed'])
    expect(ledger.totals({ batchId })).toMatchObject({ executed: 1, reused: 0 })
  })
})

/**
 * The queue whose reused task, as its worker ends it, was taken meanwhile: its lease ran out and
 * another worker ended it (finishTask then finds it no longer this worker's, and says false).
 */
class TakenAtReusedEnd extends TaskQueue {
  taken = 0

  constructor(
    readonly db: ConstructorParameters<typeof TaskQueue>[0],
    clock: ConstructorParameters<typeof TaskQueue>[1],
    writes: ConstructorParameters<typeof TaskQueue>[2],
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
    if (status === 'reused' && this.taken++ === 0) {
      this.db.prepare("UPDATE task_queue SET worker = 'worker-2' WHERE id = ?").run(taskId)
      expect(super.finishTask(taskId, 'worker-2', status, result, error)).toBe(true)
    }
    return super.finishTask(taskId, worker, status, result, error)
  }
}
