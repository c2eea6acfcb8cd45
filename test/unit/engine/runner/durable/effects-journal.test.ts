// The call journal under the runner: a real SQLite file, the engine's group commit, the real
// claims, queue, ledger and scheduler, and a provider written in the test that counts its calls.
// Each case runs an execution, ends it the way a real run can end (a failed call, a failed write,
// Ctrl-C), and runs it again: what was answered is replayed, not paid again.
import { afterEach, describe, expect, it } from 'vitest'
import { SqliteClaimStore } from '../../../../../src/main/engine/claims/claims'
import { StepWrites } from '../../../../../src/main/engine/db/step-writes'
import { executionFingerprint, fingerprint } from '../../../../../src/main/engine/core/fingerprint'
import { CallJournal } from '../../../../../src/main/engine/runner/durable/journal'
import { Ledger } from '../../../../../src/main/engine/ledger/ledger'
import { Prices } from '../../../../../src/main/engine/pricing/prices'
import { TaskQueue } from '../../../../../src/main/engine/queue/queue'
import {
  Runner,
  type DivergenceEvent,
  type RunnerOptions,
} from '../../../../../src/main/engine/runner'
import type { Driver } from '../../../../../src/main/engine/runner/durable/effects'
import { Scheduler } from '../../../../../src/main/engine/pacing/scheduler'
import { MAX_LOG_LINES, TaskLog } from '../../../../../src/main/engine/runner/durable/task-log'
import type { ProviderRequest, ProviderResponse } from '../../../../../src/main/engine/core/types'
import { fakeClock } from '../../../../helpers/clock'
import { openLedgerDb } from '../../../../helpers/ledger-db'
import { until } from '../../../../helpers/until'

const USAGE = { inputTokens: 1000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 500 }
const ok = (text: string): ProviderResponse => ({ status: 200, headers: {}, text, usage: USAGE })
const fail = (): ProviderResponse => ({ status: 500, headers: {}, error: 'boom' })

type Answer = (request: ProviderRequest, n: number) => ProviderResponse | Promise<ProviderResponse>

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** One database; `process()` starts a runner on it as one `pacer run` process would. */
function database() {
  const file = openLedgerDb()
  cleanups.push(() => file.close())
  const { db } = file
  const clock = fakeClock()
  let answer: Answer = (r) => ok(`answer to ${lastText(r)}`)
  const requests: ProviderRequest[] = []
  const provider = {
    id: 'sim',
    call: (request: ProviderRequest) => {
      requests.push(request)
      return Promise.resolve(answer(request, requests.length))
    },
  }
  const divergences: DivergenceEvent[] = []
  const warnings: string[] = []

  function process(options: Partial<RunnerOptions> = {}) {
    const writes = new StepWrites(db, { onError: (err) => warnings.push(err.message) })
    const claims = new SqliteClaimStore({ db, clock, writes })
    const ledger = new Ledger({ db, prices: new Prices(), clock, writes })
    const scheduler = new Scheduler({ clock })
    const queue = new TaskQueue(db, clock, writes)
    const runner = new Runner({
      queue,
      claims,
      scheduler,
      ledger,
      clock,
      workerId: 'worker-1',
      provider: (id) => (id === 'sim' ? provider : undefined),
      pollMs: 60_000,
      maxAttempts: 1,
      writes,
      journal: { journal: new CallJournal(db, writes), log: new TaskLog(db, writes) },
      ...options,
    })
    runner.on('warning', (w) => warnings.push(w))
    runner.on('divergence', (e) => divergences.push(e))
    cleanups.push(async () => {
      await runner.stop({ graceMs: 0 })
      writes.commit()
      scheduler.close()
      await ledger.close()
    })
    /** Queues the task as a new batch and runs until nothing of it is left to run. */
    async function run(payload: unknown, steps: number): Promise<string> {
      const batchId = queue.createBatch(
        { name: 't', source: null, sourceHash: null, audit: false },
        [
          {
            seq: 1,
            type: 'job',
            payloadJson: JSON.stringify(payload),
            fp: executionFingerprint(fingerprint('job', payload), {
              provider: 'sim',
              model: 'sim-small',
              steps,
            }),
            key: null,
            steps,
            provider: 'sim',
            model: 'sim-small',
          },
        ],
      )
      return resume(batchId)
    }
    /** Runs until nothing of the batch is left to run. */
    async function resume(batchId: string): Promise<string> {
      runner.start()
      runner.pump()
      await until(() => {
        const c = queue.counts(batchId)
        return c.queued + c.running === 0
      })
      writes.commit()
      return batchId
    }
    const task = (batchId: string) => queue.listTasks({ batchId, offset: 0, limit: 10 }).rows[0]!
    return { runner, ledger, queue, writes, run, resume, task }
  }

  const rows = () =>
    db
      .prepare(
        'SELECT step, outcome, epoch, reason, cost_micros, saved_micros FROM ledger ORDER BY id',
      )
      .all() as {
      step: number
      outcome: string
      epoch: number | null
      reason: string | null
      cost_micros: number | null
      saved_micros: number | null
    }[]
  const journalRows = () => db.prepare('SELECT idx, state FROM call_journal ORDER BY idx').all()
  return {
    db,
    requests,
    divergences,
    warnings,
    process,
    rows,
    journalRows,
    answerWith: (next: Answer) => (answer = next),
  }
}

function lastText(r: ProviderRequest): string {
  const content = r.messages.at(-1)?.content
  return typeof content === 'string' ? content : JSON.stringify(content)
}

describe('the call journal', () => {
  it('a task whose step 2 failed replays step 1 on the rerun: not sent, ledgered replayed', async () => {
    const d = database()
    d.answerWith((_, n) => (n === 2 ? fail() : ok(`step answer ${n}`)))
    const first = d.process()
    const b1 = await first.run({ prompt: 'three steps' }, 3)
    expect(first.task(b1).status).toBe('failed')
    expect(d.requests).toHaveLength(2)
    // Step 1 answered stays journaled; step 2 failed and left nothing to replay.
    expect(d.journalRows()).toEqual([{ idx: 1, state: 1 }])

    d.answerWith((_, n) => ok(`step answer ${n}`))
    const b2 = await first.run({ prompt: 'three steps' }, 3)
    expect(first.task(b2).status).toBe('succeeded')
    // Steps 2 and 3 only: step 1 came from the journal.
    expect(d.requests).toHaveLength(4)
    const rows = d.rows()
    const paid = rows[0]!.cost_micros!
    expect(paid).toBeGreaterThan(0)
    expect(rows.map((r) => [r.step, r.outcome, r.epoch])).toEqual([
      [1, 'executed', 1],
      [2, 'error', 1],
      [1, 'replayed', 2],
      [2, 'executed', 2],
      [3, 'executed', 2],
    ])
    // A replayed row costs nothing and saved what the call cost when it was paid.
    expect(rows[2]).toMatchObject({ cost_micros: 0, saved_micros: paid })
    const totals = first.ledger.totals()
    expect(totals.replayed).toBe(1)
    expect(totals.savedMicros).toBe(paid)
    expect(totals.duplicates).toBe(0)
    // Step 2 of the rerun resent step 1's journaled answer as history, exactly as a live run would.
    expect(d.requests[2]!.messages.map((m) => m.content)).toEqual([
      'three steps',
      'step answer 1',
      expect.stringContaining('step 2 of 3'),
    ])
    // The result is stored: the journal is no longer needed.
    expect(d.journalRows()).toEqual([])
    const result = JSON.parse(first.queue.taskResult(first.task(b2).id)!) as {
      usage: typeof USAGE
      costMicros: number
    }
    // The result is worth all three calls, the replayed one included.
    expect(result.usage.inputTokens).toBe(3 * USAGE.inputTokens)
    expect(result.costMicros).toBe(3 * paid)
  })

  it('a call whose answer was paid but not written is a duplicate on the rerun: answer lost', async () => {
    const d = database()
    // The answer of call 2 cannot be written (a failing disk, as far as this write knows).
    d.db.exec(`CREATE TRIGGER lose_step_2 BEFORE INSERT ON ledger_rows
      WHEN NEW.step = 2 AND NEW.outcome = 1 BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`)
    const first = d.process()
    const b1 = await first.run({ prompt: 'lost' }, 3)
    expect(first.task(b1).status).toBe('failed')
    expect(d.requests).toHaveLength(2)
    // The intent of call 2 is on disk: the request went out, its answer never came back in.
    expect(d.journalRows()).toEqual([
      { idx: 1, state: 1 },
      { idx: 2, state: 0 },
    ])
    d.db.exec('DROP TRIGGER lose_step_2')
    const b2 = await first.run({ prompt: 'lost' }, 3)
    expect(first.task(b2).status).toBe('succeeded')
    expect(d.requests).toHaveLength(4)
    const rows = d.rows()
    expect(rows.map((r) => [r.step, r.outcome, r.reason])).toEqual([
      [1, 'executed', null],
      [1, 'replayed', null],
      // Call 2 sent again and answered, and the payment whose answer was lost beside it.
      [2, 'executed', null],
      [2, 'duplicate', 'answer lost'],
      [3, 'executed', null],
    ])
    // Wasted is that one call, not the whole execution, and not an execution of its own.
    const totals = first.ledger.totals()
    expect(totals.duplicates).toBe(0)
    expect(totals.wastedMicros).toBe(rows[3]!.cost_micros)
    const log = new TaskLog(d.db).lines(first.task(b2).id)
    expect(log).toEqual([
      expect.objectContaining({ kind: 'lost', message: expect.stringContaining('call 2') }),
    ])
  })

  it('Ctrl-C mid-call: the aborted call runs live on the rerun, each index executed once', async () => {
    const d = database()
    let release = false
    d.answerWith((request, n) =>
      n === 2 && !release
        ? new Promise((_, reject) => {
            request.signal?.addEventListener('abort', () => reject(new Error('aborted')))
          })
        : ok(`answer ${n}`),
    )
    const first = d.process()
    // Its wait for the batch ends when the second process finishes it.
    const waiting = first.run({ prompt: 'interrupted' }, 3)
    await until(() => d.requests.length === 2)
    await first.runner.stop({ graceMs: 0 })
    first.writes.commit()
    const b1 = first.queue.listBatches()[0]!.id
    // The aborted call is ledgered abandoned and leaves no intent: its answer was not lost.
    expect(d.journalRows()).toEqual([{ idx: 1, state: 1 }])
    release = true
    const second = d.process()
    await second.resume(b1)
    await waiting
    expect(second.task(b1).status).toBe('succeeded')
    const executed = d.rows().filter((r) => r.outcome === 'executed')
    expect(executed.map((r) => r.step)).toEqual([1, 2, 3])
    expect(d.rows().map((r) => r.outcome)).toEqual([
      'executed',
      'abandoned',
      'replayed',
      'executed',
      'executed',
    ])
  })

  it('a rerun whose request differs ends the replay there, tells it, and runs the rest live', async () => {
    const d = database()
    let variant = 'first'
    let failAt2 = true
    const driver: Driver = async (_task, fx) => {
      const a = await fx.chat({ messages: [{ role: 'user', content: 'same start' }] })
      if (failAt2) throw new Error('tool crashed')
      const b = await fx.chat({ messages: [{ role: 'user', content: `then ${variant}` }] })
      const c = await fx.chat({ messages: [{ role: 'user', content: `last of ${b.text}` }] })
      return { text: `${a.text} | ${c.text}` }
    }
    const first = d.process({ driverFor: () => driver })
    const b1 = await first.run({ prompt: 'agent' }, 1)
    expect(first.task(b1)).toMatchObject({ status: 'failed', error: 'tool crashed' })
    // The second run gets through call 2 and then stops (its claim released by a failed call 3).
    failAt2 = false
    d.answerWith((r, n) => (lastText(r).startsWith('last') ? fail() : ok(`live ${n}`)))
    await first.run({ prompt: 'agent' }, 1)
    expect(d.journalRows()).toEqual([
      { idx: 1, state: 1 },
      { idx: 2, state: 1 },
    ])
    // Third run: call 2 differs now.
    variant = 'second'
    d.answerWith((_, n) => ok(`live ${n}`))
    const calls = d.requests.length
    const b3 = await first.run({ prompt: 'agent' }, 1)
    expect(first.task(b3).status).toBe('succeeded')
    expect(d.requests.length - calls).toBe(2)
    expect(d.divergences).toEqual([
      expect.objectContaining({ taskId: first.task(b3).id, index: 2, kind: 'call' }),
    ])
    expect(d.warnings.join('\n')).toContain('call 2 differs from the journal')
    const log = new TaskLog(d.db).lines(first.task(b3).id)
    expect(log.map((l) => l.kind)).toEqual(['divergence'])
  })

  it('ctx.step runs its function once: the rerun replays its value; log lines are kept, clean', async () => {
    const d = database()
    let toolRuns = 0
    let crash = true
    const driver: Driver = async (_task, fx) => {
      const found = await fx.step('search', () => {
        toolRuns++
        return { hits: ['a', 'b'] }
      })
      fx.log(`found \u001b[31m${found.hits.length}\u001b[0m hits\u0007`)
      const a = await fx.chat({ messages: [{ role: 'user', content: found.hits.join(',') }] })
      if (crash) throw new Error('later failure')
      return { text: a.text, value: { found } }
    }
    const p = d.process({ driverFor: () => driver })
    const b1 = await p.run({ prompt: 'tools' }, 1)
    crash = false
    const b2 = await p.run({ prompt: 'tools' }, 1)
    expect(p.task(b2).status).toBe('succeeded')
    expect(toolRuns).toBe(1)
    expect(d.requests).toHaveLength(1)
    // Each task has its log: the escapes and the bell are gone from the agent's line.
    const lines = (batchId: string) =>
      new TaskLog(d.db).lines(p.task(batchId).id).map((l) => [l.kind, l.message])
    expect(lines(b1)).toEqual([
      ['step', expect.stringMatching(/^step 1 "search": ran in \d+ ms$/)],
      ['log', 'found 2 hits'],
    ])
    expect(lines(b2)).toEqual([
      ['step', 'step 1 "search": replayed from the journal'],
      ['log', 'found 2 hits'],
    ])
    const result = JSON.parse(p.queue.taskResult(p.task(b2).id)!) as { value: unknown }
    expect(result.value).toEqual({ found: { hits: ['a', 'b'] } })
  })

  it("keeps a task's log bounded", async () => {
    const d = database()
    const driver: Driver = async (_task, fx) => {
      for (let i = 0; i < MAX_LOG_LINES + 50; i++) fx.log(`line ${i}`)
      return { text: 'done' }
    }
    const p = d.process({ driverFor: () => driver })
    const b = await p.run({ prompt: 'chatty' }, 1)
    const log = new TaskLog(d.db).lines(p.task(b).id)
    expect(log).toHaveLength(MAX_LOG_LINES)
    expect(log.at(-1)!.message).toContain('later lines are not kept')
  })
})
