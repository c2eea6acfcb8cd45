// The runner on its own: a real SQLite file, the real claims, queue, ledger and scheduler, and a
// provider written in the test, so each case decides what it answers and counts the calls.
// Here a call's outcomes: throttles retried, a deterministic 400 kept, an account or key
// failure stopping the partition, pacing's waits, the estimate and answer given to the scheduler.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { estimateTokens } from '../../../../src/main/engine/providers/prompt'
import { until } from '../../../helpers/until'
import { answer, cleanUp, harness, type TaskSpec } from './harness'

afterEach(cleanUp)

describe('Runner', () => {
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
