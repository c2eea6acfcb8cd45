// A task and its duplicate, picked together on a real SQLite file by one runner, the second waiting
// on the first one's claim: what the full-disk tests of a step or a reuse run, each with its own
// queue or journal meeting the full disk.
import type Database from 'better-sqlite3'
import { SqliteClaimStore } from '../../../../../src/main/engine/claims/claims'
import { executionFingerprint, fingerprint } from '../../../../../src/main/engine/core/fingerprint'
import type { ProviderRequest } from '../../../../../src/main/engine/core/types'
import type { StepWrites } from '../../../../../src/main/engine/db/step-writes'
import type { WriteHealth } from '../../../../../src/main/engine/db/write-failures'
import { Ledger } from '../../../../../src/main/engine/ledger/ledger'
import { Scheduler } from '../../../../../src/main/engine/pacing/scheduler'
import { Prices } from '../../../../../src/main/engine/pricing/prices'
import type { TaskQueue } from '../../../../../src/main/engine/queue/queue'
import { Runner } from '../../../../../src/main/engine/runner'
import type { CallJournal } from '../../../../../src/main/engine/runner/durable/journal'
import { TaskLog } from '../../../../../src/main/engine/runner/durable/task-log'
import type { FakeClock } from '../../../../helpers/clock'
import type { openLedgerDb } from '../../../../helpers/ledger-db'
import { until } from '../../../../helpers/until'

const USAGE = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 50 }

export interface PairParts {
  file: ReturnType<typeof openLedgerDb>
  clock: FakeClock
  health: WriteHealth
  writes: StepWrites
  queue: TaskQueue
  journal: CallJournal
  /** The task's steps (calls), and its payload's prompt. */
  steps: number
  prompt: string
}

/** Runs the pair until neither task is queued or running; cleanups close what it opened. */
export async function runDuplicatePair(
  { file, clock, health, writes, queue, journal, steps, prompt }: PairParts,
  cleanups: (() => Promise<void> | void)[],
): Promise<{ ledger: Ledger; batchId: string; requests: ProviderRequest[] }> {
  const { db } = file
  const ledger = new Ledger({ db, prices: new Prices(), clock, writes })
  const scheduler = new Scheduler({ clock })
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
  const payload = { prompt }
  const fp = executionFingerprint(fingerprint('job', payload), {
    provider: 'sim',
    model: 'm',
    steps,
  })
  const batchId = queue.createBatch(
    { name: 't', source: null, sourceHash: null, audit: false },
    [1, 2].map((seq) => ({
      seq,
      type: 'job',
      payloadJson: JSON.stringify(payload),
      fp,
      key: null,
      steps,
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
  return { ledger, batchId, requests }
}

/** The ledger's rows in the order written: whose, which step, what outcome. */
export function ledgerRows(
  db: Database.Database,
): { taskId: number; step: number; outcome: string }[] {
  return db.prepare('SELECT task_id AS taskId, step, outcome FROM ledger ORDER BY id').all() as {
    taskId: number
    step: number
    outcome: string
  }[]
}
