// A full disk as a duplicate's reuse is written: the transaction SQLite rolls back takes the reuse's
// ledger row with it, and the task's end is written again once there is room. The row must be
// written again with it: written apart (just before the end), the task ended reused with no
// 'reused' row on the ledger (the boosted disk-full run's summary: reused 29 of 30).
import { afterEach, describe, expect, it } from 'vitest'
import { SqliteClaimStore } from '../../../../../src/main/engine/claims/claims'
import { executionFingerprint, fingerprint } from '../../../../../src/main/engine/core/fingerprint'
import type { ProviderRequest } from '../../../../../src/main/engine/core/types'
import { StepWrites } from '../../../../../src/main/engine/db/step-writes'
import { WriteHealth } from '../../../../../src/main/engine/db/write-failures'
import { Ledger } from '../../../../../src/main/engine/ledger/ledger'
import { Scheduler } from '../../../../../src/main/engine/pacing/scheduler'
import { Prices } from '../../../../../src/main/engine/pricing/prices'
import { TaskQueue } from '../../../../../src/main/engine/queue/queue'
import type { FinalTaskStatus } from '../../../../../src/main/engine/queue/tasks'
import { Runner } from '../../../../../src/main/engine/runner'
import { CallJournal } from '../../../../../src/main/engine/runner/durable/journal'
import { TaskLog } from '../../../../../src/main/engine/runner/durable/task-log'
import { fakeClock } from '../../../../helpers/clock'
import { openLedgerDb } from '../../../../helpers/ledger-db'
import { until } from '../../../../helpers/until'

const USAGE = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 50 }

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
    const ledger = new Ledger({ db, prices: new Prices(), clock, writes })
    const scheduler = new Scheduler({ clock })
    const queue = new FullAtReusedEnd(db, clock, writes, mode)
    const requests: ProviderRequest[] = []
    const runner = new Runner({
      queue,
      claims: new SqliteClaimStore({ db, clock, writes }),
      scheduler,
      ledger,
      clock,
      workerId: 'worker-1',
      provider: () => ({
        id: 'sim',
        call: (request: ProviderRequest) => {
          requests.push(request)
          return Promise.resolve({ status: 200, headers: {}, text: 'ok', usage: USAGE })
        },
      }),
      pollMs: 60_000,
      writes,
      journal: { journal: new CallJournal(db, writes), log: new TaskLog(db, writes) },
    })
    cleanups.push(async () => {
      await runner.stop({ graceMs: 0 })
      writes.commit()
      health.close()
      scheduler.close()
      await ledger.close()
      file.close()
    })
    const payload = { prompt: 'once' }
    const fp = executionFingerprint(fingerprint('job', payload), {
      provider: 'sim',
      model: 'm',
      steps: 1,
    })
    // The task and its duplicate, picked together: the second waits on the first one's claim.
    const batchId = queue.createBatch(
      { name: 't', source: null, sourceHash: null, audit: false },
      [1, 2].map((seq) => ({
        seq,
        type: 'job',
        payloadJson: JSON.stringify(payload),
        fp,
        key: null,
        steps: 1,
        provider: 'sim',
        model: 'm',
      })),
    )
    runner.start()
    await until(() => {
      const c = queue.counts(batchId)
      return c.queued + c.running === 0
    })
    writes.commit()

    // The end's first write met the full disk; SQLite took its transaction back, or kept it.
    expect(queue.full).toBe(2)
    expect(lost.length > 0).toBe(mode === 'transaction')
    expect(requests).toHaveLength(1)
    const tasks = queue.listTasks({ batchId, offset: 0, limit: 10 }).rows
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'reused'])
    const rows = db
      .prepare('SELECT task_id AS taskId, step, outcome FROM ledger ORDER BY id')
      .all() as { taskId: number; step: number; outcome: string }[]
    const [first, second] = tasks.map((t) => t.id)
    expect(rows).toEqual([
      { taskId: first, step: 1, outcome: 'executed' },
      { taskId: second, step: 0, outcome: 'reused' },
    ])
    expect(ledger.totals({ batchId })).toMatchObject({ executed: 1, reused: 1, duplicates: 0 })
  })
})
