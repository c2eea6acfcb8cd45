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
import { fakeClock, type FakeClock } from '../../../../helpers/clock'
import { openLedgerDb } from '../../../../helpers/ledger-db'
import { ledgerRows, runDuplicatePair } from './duplicate-pair'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Full = 'transaction' | 'statement'
/** What meets a reused task's first end: the full disk, or another worker that ended it. */
type AtEnd = Full | 'taken'

/**
 * The queue, whose first write of a reused task's end meets the full disk: SQLite's page limit,
 * which rolls back the whole transaction (the reuse's row with it), or a failure of that statement
 * alone, which leaves the row in the transaction (SQLite may do either on SQLITE_FULL); or finds
 * the task ended by another worker meanwhile (`taken`).
 */
class AtReusedEnd extends TaskQueue {
  hits = 0

  constructor(
    readonly db: ConstructorParameters<typeof TaskQueue>[0],
    clock: ConstructorParameters<typeof TaskQueue>[1],
    writes: ConstructorParameters<typeof TaskQueue>[2],
    readonly mode: AtEnd,
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
    if (status === 'reused' && this.hits++ === 0) {
      if (this.mode === 'taken') {
        // Its lease ran out and another worker ended it: this end finds it no longer its own.
        this.db.prepare("UPDATE task_queue SET worker = 'worker-2' WHERE id = ?").run(taskId)
        expect(super.finishTask(taskId, 'worker-2', status, result, error)).toBe(true)
      } else {
        if (this.mode === 'transaction') fillOnce(this.db)
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
      }
    }
    return super.finishTask(taskId, worker, status, result, error)
  }
}

/** A write that needs pages the limit no longer allows: SQLite rolls the whole transaction back. */
function fillOnce(db: AtReusedEnd['db']): void {
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

/** A task and its duplicate on `file` (one step each), the queue built over the engine's writes. */
async function pairOn<Q extends TaskQueue>(
  file: ReturnType<typeof openLedgerDb>,
  prompt: string,
  queueOf: (writes: StepWrites, clock: FakeClock) => Q,
  onError: (err: Error) => void = () => {},
) {
  const clock = fakeClock()
  const health = new WriteHealth({ dbPath: file.file, probe: () => true, minDelayMs: 10 })
  const writes = new StepWrites(file.db, { onError, health })
  const queue = queueOf(writes, clock)
  const journal = new CallJournal(file.db, writes)
  const pair = { file, clock, health, writes, queue, journal, steps: 1, prompt }
  return { ...(await runDuplicatePair(pair, cleanups)), queue }
}

describe('a full disk as a duplicate reuses a result', () => {
  it.each<[Full, string]>([
    ['transaction', "writes the reuse's ledger row again with the task's end"],
    ['statement', "keeps the reuse's ledger row its transaction still holds: written once"],
  ])('%s rolled back: %s', async (mode) => {
    const file = openLedgerDb()
    const { db } = file
    const lost: Error[] = []
    const { ledger, batchId, requests, queue } = await pairOn(
      file,
      'once',
      (writes, clock) => new AtReusedEnd(db, clock, writes, mode),
      (err) => lost.push(err),
    )

    // The end's first write met the full disk; SQLite took its transaction back, or kept it.
    expect(queue.hits).toBe(2)
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
    const { ledger, batchId, queue } = await pairOn(
      file,
      'row',
      (writes, clock) => new TaskQueue(db, clock, writes),
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
    const { ledger, batchId, queue } = await pairOn(
      file,
      'gone',
      (writes, clock) => new AtReusedEnd(db, clock, writes, 'taken'),
    )

    expect(queue.hits).toBe(1)
    const tasks = queue.listTasks({ batchId, offset: 0, limit: 10 }).rows
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'reused'])
    // The worker that ended it writes its own reuse row; this one's would count the saving twice.
    expect(ledgerRows(db).map((r) => r.outcome)).toEqual(['executed'])
    expect(ledger.totals({ batchId })).toMatchObject({ executed: 1, reused: 0 })
  })
})
