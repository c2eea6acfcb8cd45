// A full disk between the steps of a multi-step task: the task has paid for its first call, so it
// keeps its claim and waits for room to journal the next one, instead of giving its execution to a
// duplicate waiting on the same fingerprint (which would replay the first call and run the rest:
// one execution ledgered under two tasks, and no reuse).
import { afterEach, describe, expect, it } from 'vitest'
import { StepWrites } from '../../../../../src/main/engine/db/step-writes'
import { WriteHealth } from '../../../../../src/main/engine/db/write-failures'
import { TaskQueue } from '../../../../../src/main/engine/queue/queue'
import { CallJournal, type EntryKey } from '../../../../../src/main/engine/runner/durable/journal'
import { fakeClock } from '../../../../helpers/clock'
import { openLedgerDb } from '../../../../helpers/ledger-db'
import { ledgerRows, runDuplicatePair } from './duplicate-pair'

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
    const queue = new TaskQueue(db, clock, writes)
    const { ledger, batchId, requests } = await runDuplicatePair(
      { file, clock, health, writes, queue, journal, steps: 2, prompt: 'two steps' },
      cleanups,
    )

    expect(journal.full).toBeGreaterThan(0)
    // Each call of the execution was sent once.
    expect(requests.map((r) => r.messages.length)).toEqual([1, 3])
    const tasks = queue.listTasks({ batchId, offset: 0, limit: 10 }).rows
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'reused'])
    const [first, second] = tasks.map((t) => t.id)
    expect(ledgerRows(db)).toEqual([
      { taskId: first, step: 1, outcome: 'executed' },
      { taskId: first, step: 2, outcome: 'executed' },
      { taskId: second, step: 0, outcome: 'reused' },
    ])
    expect(ledger.totals({ batchId })).toMatchObject({ executed: 1, reused: 1, duplicates: 0 })
  })
})
