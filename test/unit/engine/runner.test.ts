// The runner on its own: a real SQLite file, the real claims, queue, ledger and scheduler, and a
// provider written in the test, so each case decides what it answers and counts the calls.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SqliteClaimStore } from '../../../src/main/engine/claims'
import { executionFingerprint, fingerprint } from '../../../src/main/engine/fingerprint'
import { Ledger } from '../../../src/main/engine/ledger'
import { Prices } from '../../../src/main/engine/prices'
import { estimateTokens } from '../../../src/main/engine/prompt'
import { TaskQueue } from '../../../src/main/engine/queue'
import { Runner, type RunnerOptions } from '../../../src/main/engine/runner'
import { Scheduler, type SchedulerOptions } from '../../../src/main/engine/scheduler'
import { StepWrites } from '../../../src/main/engine/db/step-writes'
import Database from 'better-sqlite3'
import type { ProviderRequest, ProviderResponse, Usage } from '../../../src/main/engine/types'
import { fakeClock } from '../../helpers/clock'
import { openLedgerDb } from '../../helpers/ledger-db'
import { until } from '../../helpers/until'

const USAGE: Usage = { inputTokens: 10, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5 }
const answer = (text: string): ProviderResponse => ({
  status: 200,
  headers: {},
  text,
  usage: USAGE,
})

type Answer = (request: ProviderRequest, n: number) => ProviderResponse | Promise<ProviderResponse>

interface TaskSpec {
  payload: unknown
  steps?: number
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/**
 * A started runner over a fresh database whose provider 'test' answers with `next`; `grouped`
 * writes through the engine's group commit (StepWrites) instead of one statement at a time.
 */
function harness(
  next: Answer,
  options: Partial<RunnerOptions> = {},
  {
    grouped = false,
    ...schedulerOptions
  }: Omit<SchedulerOptions, 'clock'> & { grouped?: boolean } = {},
) {
  const file = openLedgerDb()
  const { db } = file
  const clock = fakeClock()
  const warnings: string[] = []
  const writes = grouped
    ? new StepWrites(db, { onError: (err) => warnings.push(err.message) })
    : undefined
  const claims = new SqliteClaimStore({ db, clock, writes })
  const ledger = new Ledger({ db, prices: new Prices(), clock, writes })
  const scheduler = new Scheduler({ clock, ...schedulerOptions })
  const queue = new TaskQueue(db, clock, writes)
  const requests: ProviderRequest[] = []
  const provider = {
    id: 'test',
    call: (request: ProviderRequest) => {
      requests.push(request)
      return Promise.resolve(next(request, requests.length))
    },
  }
  const runner = new Runner({
    queue,
    claims,
    scheduler,
    ledger,
    clock,
    workerId: 'worker-1',
    provider: (id) => (id === 'test' ? provider : undefined),
    // Sweeps of expired task leases would follow the fake clock: keep them out of the way.
    pollMs: 60_000,
    writes,
    ...options,
  })
  runner.on('warning', (w) => warnings.push(w))
  cleanups.push(async () => {
    await runner.stop({ graceMs: 0 })
    writes?.commit()
    scheduler.close()
    file.close()
  })

  const fpOf = ({ payload, steps = 1 }: TaskSpec) =>
    executionFingerprint(fingerprint('job', payload), { provider: 'test', model: 'm', steps })

  /** Enqueues the tasks as one batch, starts the runner, and waits until none is left to run. */
  async function run(tasks: TaskSpec[]): Promise<string> {
    const batchId = start(tasks)
    await until(() => {
      const c = queue.counts(batchId)
      return c.queued + c.running === 0
    })
    return batchId
  }

  /** Enqueues the tasks as one batch and starts the runner. */
  function start(tasks: TaskSpec[]): string {
    const batchId = queue.createBatch(
      { name: 'test', source: null, sourceHash: null, audit: false },
      tasks.map((t, seq) => ({
        seq,
        type: 'job',
        payloadJson: JSON.stringify(t.payload),
        fp: fpOf(t),
        key: null,
        steps: t.steps ?? 1,
        provider: 'test',
        model: 'm',
      })),
    )
    runner.start()
    return batchId
  }

  const tasks = (batchId: string) => queue.listTasks({ batchId, offset: 0, limit: 100 }).rows
  const outcomes = () => [...ledger.events()].map((r) => r.outcome)
  return {
    clock,
    claims,
    ledger,
    queue,
    runner,
    scheduler,
    requests,
    run,
    start,
    tasks,
    outcomes,
    fpOf,
    file,
    warnings,
  }
}

describe('Runner', () => {
  it('runs a task once and puts one executed row on the ledger', async () => {
    const h = harness(() => answer('done'))
    const batchId = await h.run([{ payload: { i: 1 } }])
    expect(h.requests).toHaveLength(1)
    expect(h.tasks(batchId)).toMatchObject([{ status: 'succeeded', error: null }])
    const [row, ...rest] = [...h.ledger.events()]
    expect(rest).toEqual([])
    expect(row).toMatchObject({
      outcome: 'executed',
      worker: 'worker-1',
      provider: 'test',
      model: 'm',
      step: 1,
      inputTokens: 10,
      outputTokens: 5,
      epoch: 1,
    })
    const [task] = h.tasks(batchId)
    // No finish reason or message from this provider: the result has none (and no cost: unpriced).
    expect(JSON.parse(h.queue.taskResult(task!.id)!)).toEqual({
      text: 'done',
      steps: 1,
      usage: USAGE,
      costMicros: null,
    })
  })

  it("keeps the last step's finish reason and raw message with the answer", async () => {
    const message = { role: 'assistant', content: 'done', refusal: null }
    const h = harness(() => ({ ...answer('done'), finishReason: 'stop', message }))
    const batchId = await h.run([{ payload: { prompt: 'hi' } }])
    const [task] = h.tasks(batchId)
    expect(JSON.parse(h.queue.taskResult(task!.id)!)).toMatchObject({
      text: 'done',
      finishReason: 'stop',
      message,
    })
    expect(h.claims.getResult(h.fpOf({ payload: { prompt: 'hi' } }))?.status).toBe('succeeded')
  })

  it('a truncated answer is kept but not reused: its duplicate executes again', async () => {
    const h = harness(
      (_, n) => ({ ...answer(`cut ${n}`), finishReason: 'length' }),
      {},
      { params: { max: 1, initial: 1 } },
    )
    const spec = { payload: { prompt: 'long' } }
    const batchId = await h.run([spec, spec])
    expect(h.requests).toHaveLength(2)
    expect(h.tasks(batchId).map((t) => t.status)).toEqual(['succeeded', 'succeeded'])
    const texts = h
      .tasks(batchId)
      .map((t) => JSON.parse(h.queue.taskResult(t.id)!) as { text: string; truncated?: boolean })
    expect(texts.map((t) => [t.text, t.truncated]).sort()).toEqual([
      ['cut 1', true],
      ['cut 2', true],
    ])
    expect(h.claims.getResult(h.fpOf(spec))).toBeUndefined()
    h.claims.acceptTruncated = true
    expect(h.claims.getResult(h.fpOf(spec))?.status).toBe('truncated')
  })

  it('with acceptTruncated, a truncated answer is reused like any other', async () => {
    const h = harness(
      () => ({ ...answer('cut'), finishReason: 'length' }),
      {},
      { params: { max: 1, initial: 1 } },
    )
    h.claims.acceptTruncated = true
    const spec = { payload: { prompt: 'long' } }
    const batchId = await h.run([spec, spec])
    expect(h.requests).toHaveLength(1)
    expect(
      h
        .tasks(batchId)
        .map((t) => t.status)
        .sort(),
    ).toEqual(['reused', 'succeeded'])
  })

  it('two identical tasks: one executes, the other reuses its result', async () => {
    const h = harness(() => answer('once'))
    const batchId = await h.run([{ payload: { same: true } }, { payload: { same: true } }])
    expect(h.requests).toHaveLength(1)
    expect(
      h
        .tasks(batchId)
        .map((t) => t.status)
        .sort(),
    ).toEqual(['reused', 'succeeded'])
    expect(h.outcomes().sort()).toEqual(['executed', 'reused'])
    expect(h.ledger.totals()).toMatchObject({ runs: 2, executed: 1, reused: 1, duplicates: 0 })
  })

  it('a task of N steps makes N calls, each carrying the conversation so far', async () => {
    const h = harness((_, n) => answer(`answer ${n}`))
    const batchId = await h.run([{ payload: { prompt: 'plan it' }, steps: 3 }])
    expect(h.requests).toHaveLength(3)
    expect(h.requests.map((r) => r.messages.length)).toEqual([1, 3, 5])
    expect(h.requests[2]!.messages[3]).toEqual({ role: 'assistant', content: 'answer 2' })
    expect([...h.ledger.events()].map((r) => [r.outcome, r.step])).toEqual([
      ['executed', 1],
      ['executed', 2],
      ['executed', 3],
    ])
    // Three calls, one execution.
    expect(h.ledger.totals()).toMatchObject({ executed: 1, inputTokens: 30, outputTokens: 15 })
    const [task] = h.tasks(batchId)
    expect(task!.status).toBe('succeeded')
    expect(JSON.parse(h.queue.taskResult(task!.id)!)).toMatchObject({
      text: 'answer 3',
      steps: 3,
      usage: { inputTokens: 30, outputTokens: 15 },
    })
  })

  it('retries a throttled call and succeeds', async () => {
    const h = harness((_, n) =>
      n === 1
        ? { status: 429, headers: { 'retry-after-ms': '0' }, error: 'slow down' }
        : answer('after the wait'),
    )
    const batchId = await h.run([{ payload: { i: 2 } }])
    expect(h.requests).toHaveLength(2)
    expect(h.outcomes()).toEqual(['throttled', 'executed'])
    expect(h.tasks(batchId)).toMatchObject([{ status: 'succeeded' }])
  })

  it('gives up after maxThrottleRetries and fails the task visibly, claim released', async () => {
    const h = harness(() => ({ status: 429, headers: { 'retry-after-ms': '0' } }), {
      maxThrottleRetries: 2,
    })
    const batchId = await h.run([{ payload: { i: 3 } }])
    expect(h.requests).toHaveLength(3)
    const [task] = h.tasks(batchId)
    expect(task).toMatchObject({ status: 'failed' })
    expect(task!.error).toMatch(/gave up after 3 throttles/)
    // A throttle is no verdict on the task: nothing is kept, the next run may send it again.
    expect(h.claims.getResult(h.fpOf({ payload: { i: 3 } }))).toBeUndefined()
  })

  it('a deterministic 400 is not retried and is kept as a failed result', async () => {
    const h = harness(() => ({ status: 400, headers: {}, error: 'prompt too long' }))
    const spec = { payload: { prompt: 'x'.repeat(50) } }
    const batchId = await h.run([spec])
    expect(h.requests).toHaveLength(1)
    expect(h.outcomes()).toEqual(['error'])
    expect(h.tasks(batchId)).toMatchObject([
      { status: 'failed', error: 'HTTP 400: prompt too long' },
    ])
    const stored = h.claims.getResult(h.fpOf(spec))
    expect(stored?.status).toBe('failed')
    expect(JSON.parse(stored!.result)).toEqual({
      error: 'HTTP 400: prompt too long',
      status: 400,
      step: 1,
      costMicros: null,
    })
  })

  it('a claim lost mid-call (fenced completion) puts the paid call on the ledger as a duplicate', async () => {
    const leaseMs = 150
    const spec = { payload: { i: 4 } }
    let rivalEpoch = 0
    const h = harness(
      (_, n) => {
        if (n === 1) {
          // The call outlives the lease and a rival worker takes the claim over meanwhile.
          h.clock.advance(leaseMs + 1)
          const fp = h.fpOf(spec)
          const rival = h.claims.claim(fp, 'rival', leaseMs)
          if (rival.kind !== 'owned' || !rival.tookOver)
            throw new Error('the rival took nothing over')
          rivalEpoch = rival.epoch
        }
        return answer('stale owner')
      },
      { leaseMs },
    )
    const running = h.run([spec])
    // Reported by the await below; without this a failed wait would also surface as unhandled.
    running.catch(() => undefined)
    await until(() => h.outcomes().includes('duplicate'))
    // The stale owner waits for the rival's result instead of saving its own or calling again.
    const rivalResult = JSON.stringify({ text: 'rival', steps: 1, usage: USAGE })
    expect(h.claims.complete(h.fpOf(spec), rivalEpoch, rivalResult, 'succeeded')).toBe(true)
    const batchId = await running
    expect(h.requests).toHaveLength(1)
    expect(h.outcomes()).toEqual(['duplicate'])
    expect(h.ledger.totals()).toMatchObject({ executed: 0, duplicates: 1, reused: 0 })
    const [task] = h.tasks(batchId)
    expect(task!.status).toBe('succeeded')
    expect(h.queue.taskResult(task!.id)).toBe(rivalResult)
  })

  /** Enqueues and starts; resolves once a stopped partition has paused the batch. */
  async function runUntilHeld(h: ReturnType<typeof harness>, tasks: TaskSpec[]) {
    const batchId = h.queue.createBatch(
      { name: 'test', source: null, sourceHash: null, audit: false },
      tasks.map((t, seq) => ({
        seq,
        type: 'job',
        payloadJson: JSON.stringify(t.payload),
        fp: h.fpOf(t),
        key: null,
        steps: 1,
        provider: 'test',
        model: 'm',
      })),
    )
    h.runner.start()
    await until(() => {
      const b = h.queue.batch(batchId)
      return b?.state === 'paused' && b.counts.running === 0 && b
    })
    return batchId
  }

  it('an account out of quota stops the partition at once: no retry, task queued, says why', async () => {
    let credit = false
    const h = harness(() =>
      !credit
        ? {
            status: 429,
            headers: { 'retry-after': '1' },
            error: 'You exceeded your current quota, please check your plan and billing details.',
            errorCodes: ['insufficient_quota'],
          }
        : answer('credit added'),
    )
    const spec = { payload: { i: 5 } }
    const batchId = await runUntilHeld(h, [spec, { payload: { i: 55 } }])
    // The calls in flight at once (the initial limit is 2) answered so; nothing after them.
    const sent = h.requests.length
    expect(sent).toBeLessThanOrEqual(2)
    expect(h.outcomes()).toEqual(Array(sent).fill('error'))
    // About the account, not the task: nothing is kept, both tasks wait, queued, with the reason.
    expect(h.tasks(batchId).map((t) => t.status)).toEqual(['queued', 'queued'])
    const reason = h.queue.batch(batchId)!.stopReason
    expect(reason).toMatch(
      /^test:m stopped: HTTP 429: You exceeded your current quota.*add credit or raise the spend limit/,
    )
    expect(h.tasks(batchId)[0]!.error).toBe(reason)
    expect(h.claims.getResult(h.fpOf(spec))).toBeUndefined()
    // And no throttle: the limit did not move; the partition shows why it stopped.
    expect(h.scheduler.snapshot()[0]).toMatchObject({
      limit: 2,
      throttles: 0,
      errors: sent,
      stopped: { partition: 'test:m', reason },
    })

    // Credit added, the operator resumes: the same tasks run.
    credit = true
    expect(h.runner.takeHeld('test:m')).toEqual([batchId])
    h.scheduler.resume('test:m')
    h.queue.applyBatchAction(batchId, 'resume')
    h.runner.pump()
    await until(() => h.queue.counts(batchId).succeeded === 2)
    expect(h.scheduler.snapshot()[0]!.stopped).toBeUndefined()
  })

  it("Anthropic's low-credit 400 stops the partition too: not kept as the task's result", async () => {
    const h = harness(() => ({
      status: 400,
      headers: {},
      error: 'Your credit balance is too low to access the Anthropic API.',
      errorCodes: ['invalid_request_error'],
    }))
    const spec = { payload: { i: 6 } }
    const batchId = await runUntilHeld(h, [spec])
    expect(h.requests).toHaveLength(1)
    expect(h.tasks(batchId)[0]).toMatchObject({ status: 'queued' })
    expect(h.queue.batch(batchId)!.stopReason).toMatch(/HTTP 400: Your credit balance is too low/)
    expect(h.claims.getResult(h.fpOf(spec))).toBeUndefined()
  })

  it('a 401 stops the partition after the calls already in flight: never one per task', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const h = harness(async () => {
      // Both first calls are in flight before either answers, as with a real server.
      await gate
      return { status: 401, headers: {}, error: 'invalid api key' }
    })
    const specs = Array.from({ length: 20 }, (_, i) => ({ payload: { k: i } }))
    const held = runUntilHeld(h, specs)
    await until(() => h.requests.length === 2)
    release()
    const batchId = await held
    expect(h.requests).toHaveLength(2)
    expect(h.queue.counts(batchId)).toMatchObject({ queued: 20, failed: 0 })
    expect(h.outcomes()).toEqual(['error', 'error'])
  })

  it('with pacing, a throttled call waits for the partition pause, not a sleep of its own', async () => {
    const h = harness(
      (_, n) =>
        n === 1
          ? { status: 429, headers: { 'retry-after': '3600' }, error: 'slow down' }
          : answer('after the pause'),
      {},
      { pacing: { random: () => 0 } },
    )
    const partition = 'test:m'
    const running = h.run([{ payload: { i: 7 } }])
    running.catch(() => undefined)
    // The retry queues in the scheduler at once (a runner sleep would hold it outside), held by
    // the partition's pause of exactly the hour the provider asked for.
    await until(() => h.scheduler.snapshot()[0]?.waiting === 1)
    const pausedUntil = h.scheduler.pacing(partition)?.pausedUntil
    expect(pausedUntil).toBe(h.clock.now() + 3_600_000)
    expect(h.requests).toHaveLength(1)
    // The hour passes on the scheduler's clock; the next admission sends the retry.
    h.clock.advance(3_600_000)
    h.scheduler.setParams(partition, {})
    const batchId = await running
    expect(h.requests).toHaveLength(2)
    expect(h.outcomes()).toEqual(['throttled', 'executed'])
    expect(h.tasks(batchId)).toMatchObject([{ status: 'succeeded' }])
  })

  it('hands the scheduler an estimate, and the answer its headers and usage settle', async () => {
    const budget = {
      'x-ratelimit-limit-tokens': '100000',
      'x-ratelimit-remaining-tokens': '99000',
      'x-ratelimit-reset-tokens': '1s',
    }
    const h = harness(() => ({ ...answer('ok'), headers: budget }), {}, { pacing: true })
    const acquire = vi.spyOn(h.scheduler, 'acquire')
    await h.run([{ payload: { prompt: 'x'.repeat(400) } }])
    // Input counted at about four characters a token; no max_tokens sent, so no output estimate.
    const estimate = acquire.mock.calls[0]?.[2]
    expect(estimate).toEqual({
      inputTokens: estimateTokens(h.requests[0]!.messages),
      outputTokens: 0,
    })
    expect(estimate!.inputTokens).toBeGreaterThanOrEqual(100)
    // The announced token budget was read from the answer the runner passed back.
    expect(h.scheduler.pacing('test:m')?.budget.tokens).toMatchObject({ limit: 100_000 })
  })
})

describe('Runner.stop', () => {
  it('sends no new call for a task that waited for a slot when the stop began', async () => {
    let land!: () => void
    const landed = new Promise<void>((r) => (land = r))
    // One slot; the runner holds two more tasks waiting for it.
    const h = harness(
      async (_, n) => {
        if (n === 1) await landed
        return answer(`answer ${n}`)
      },
      { prefetch: 2 },
      { params: { initial: 1, min: 1, max: 1 } },
    )
    const batchId = h.start([{ payload: { i: 1 } }, { payload: { i: 2 } }, { payload: { i: 3 } }])
    await until(() => h.requests.length === 1 && h.queue.counts(batchId).running === 3)
    const stopped = h.runner.stop({ graceMs: 60_000 })
    // The call in flight lands and frees the slot: the stop lets it finish, and sends nothing else.
    land()
    await stopped
    expect(h.requests).toHaveLength(1)
    expect(h.queue.counts(batchId)).toMatchObject({ succeeded: 1, queued: 2, running: 0 })
  })
})

describe('Runner on the engine’s group commit', () => {
  it('sends a call only once its claim is on disk, for another process to see', async () => {
    let observer: Database.Database | undefined
    const seenAtCall: string[] = []
    const h = harness(
      () => {
        // Another process looking at the file the moment the request leaves.
        observer ??= new Database(h.file.file, { readonly: true })
        const claims = observer.prepare('SELECT state FROM claims').pluck().all() as string[]
        seenAtCall.push(claims.join(','))
        return answer('ok')
      },
      {},
      { grouped: true },
    )
    cleanups.push(async () => {
      observer?.close()
    })
    await h.run([{ payload: { durable: 1 } }])
    expect(seenAtCall).toEqual(['running'])
    expect(h.warnings).toEqual([])
  })

  it('stores one result for a task and its duplicates: they point at the claim’s', async () => {
    const h = harness(() => answer('shared answer'), {}, { grouped: true })
    const batchId = await h.run([
      { payload: { dup: 1 } },
      { payload: { dup: 1 } },
      { payload: { dup: 1 } },
    ])
    const refs = h.file.db
      .prepare('SELECT DISTINCT result_id FROM task_queue WHERE result_id IS NOT NULL')
      .pluck()
      .all()
    expect(refs).toHaveLength(1)
    expect(h.file.db.prepare('SELECT COUNT(*) FROM results').pluck().get()).toBe(1)
    for (const t of h.tasks(batchId)) {
      expect(JSON.parse(h.queue.taskResult(t.id)!)).toMatchObject({ text: 'shared answer' })
    }
    // What the reuses saved is what the execution cost, as its claim kept it.
    expect(h.ledger.totals()).toMatchObject({ executed: 1, reused: 2 })
    const [executed] = [...h.ledger.events()].filter((r) => r.outcome === 'executed')
    const saved = [...h.ledger.events()]
      .filter((r) => r.outcome === 'reused')
      .map((r) => r.savedMicros)
    expect(saved).toEqual([executed!.costMicros, executed!.costMicros])
  })

  it('a call past its deadline is given up alone: the task goes on with a fresh signal', async () => {
    const signals: AbortSignal[] = []
    const h = harness(
      (request, n) => {
        const signal = request.signal!
        signals.push(signal)
        if (n > 1) return answer('second try')
        // The first call never answers by itself: only its deadline ends it.
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason)),
        )
      },
      { callTimeoutMs: 100 },
      { grouped: true },
    )
    const batchId = await h.run([{ payload: { slow: 1 } }])
    expect(h.tasks(batchId)).toMatchObject([{ status: 'succeeded' }])
    expect(signals).toHaveLength(2)
    expect(signals[0]!.aborted).toBe(true)
    expect(String(signals[0]!.reason)).toMatch(/no answer within 100 ms/)
    // The retry went out on a signal of its own, which its deadline never touched.
    expect(signals[1]).not.toBe(signals[0])
    expect(signals[1]!.aborted).toBe(false)
    // Its own outcome on the ledger, and a timeout to the controller (a cut, not an error).
    const rows = [...h.ledger.events()]
    expect(rows.map((r) => r.outcome)).toEqual(['timeout', 'executed'])
    expect(h.scheduler.snapshot()[0]).toMatchObject({ throttles: 1, errors: 0 })
  })

  it('a call that always hangs is retried once, then the task fails with the timeout', async () => {
    const h = harness(
      (request) =>
        new Promise((_, reject) =>
          request.signal!.addEventListener('abort', () => reject(request.signal!.reason)),
        ),
      { callTimeoutMs: 50 },
    )
    const batchId = await h.run([{ payload: { hangs: 1 } }])
    expect(h.requests).toHaveLength(2)
    expect(h.outcomes()).toEqual(['timeout', 'timeout'])
    expect(h.tasks(batchId)[0]).toMatchObject({
      status: 'failed',
      error: 'timeout: gave up after 2 calls with no answer within 50 ms',
    })
  })
})
