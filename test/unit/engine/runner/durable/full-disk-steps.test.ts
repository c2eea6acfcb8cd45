// A full disk between the steps of a multi-step task: the task has paid for its first call, so it
// keeps its claim and waits for room to journal the next one, instead of giving its execution to a
// duplicate waiting on the same fingerprint (which would replay the first call and run the rest:
// one execution ledgered under two tasks, and no reuse).
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
import { Runner } from '../../../../../src/main/engine/runner'
import { CallJournal, type EntryKey } from '../../../../../src/main/engine/runner/durable/journal'
import { TaskLog } from '../../../../../src/main/engine/runner/durable/task-log'
import { fakeClock } from '../../../../helpers/clock'
import { openLedgerDb } from '../../../../helpers/ledger-db'
import { until } from '../../../../helpers/until'

const USAGE = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 50 }

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The journal, whose first write of a second call's intent finds the disk full. */
class FullAtStepTwo extends CallJournal {
  full = 0

  constructor(
    db: ConstructorParameters<typeof CallJournal>[0],
    readonly scope: StepWrites,
  ) {
    super(db, scope)
  }

  override intent(key: EntryKey): void {
    if (key.idx === 2 && this.full++ === 0) {
      this.scope.run(() => {
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
      })
    }
    super.intent(key)
  }
}

describe('a full disk between the steps of a task', () => {
  it('keeps the execution with the task that paid its first call; its duplicate reuses it', async () => {
    const file = openLedgerDb()
    const { db } = file
    const clock = fakeClock()
    const health = new WriteHealth({ dbPath: file.file, probe: () => true, minDelayMs: 10 })
    const writes = new StepWrites(db, { onError: () => {}, health })
    const journal = new FullAtStepTwo(db, writes)
    const ledger = new Ledger({ db, prices: new Prices(), clock, writes })
    const scheduler = new Scheduler({ clock })
    const queue = new TaskQueue(db, clock, writes)
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
      journal: { journal, log: new TaskLog(db, writes) },
    })
    cleanups.push(async () => {
      await runner.stop({ graceMs: 0 })
      writes.commit()
      health.close()
      scheduler.close()
      await ledger.close()
      file.close()
    })
    const payload = { prompt: 'two steps' }
    const fp = executionFingerprint(fingerprint('job', payload), {
      provider: 'sim',
      model: 'm',
      steps: 2,
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
        steps: 2,
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

    expect(journal.full).toBeGreaterThan(0)
    // Each call of the execution was sent once.
    expect(requests.map((r) => r.messages.length)).toEqual([1, 3])
    const tasks = queue.listTasks({ batchId, offset: 0, limit: 10 }).rows
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'reused'])
    const rows = db
      .prepare('SELECT task_id AS taskId, step, outcome FROM ledger ORDER BY id')
      .all() as { taskId: number; step: number; outcome: string }[]
    const [first, second] = tasks.map((t) => t.id)
    expect(rows).toEqual([
      { taskId: first, step: 1, outcome: 'executed' },
      { taskId: first, step: 2, outcome: 'executed' },
      { taskId: second, step: 0, outcome: 'reused' },
    ])
    expect(ledger.totals({ batchId })).toMatchObject({ executed: 1, reused: 1, duplicates: 0 })
  })
})
