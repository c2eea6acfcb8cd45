// The runner on its own: a real SQLite file, the real claims, queue, ledger and scheduler, and a
// provider written in the test, so each case decides what it answers and counts the calls.
// Here a task's run: one call, reuse, truncated answers, steps, a fenced completion, stop().
// A call's outcomes: runner/call.test.ts; the engine's group commit: runner/group-commit.test.ts.
import { afterEach, describe, expect, it } from 'vitest'
import { until } from '../../../helpers/until'
import { USAGE, answer, cleanUp, harness } from './harness'

afterEach(cleanUp)

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
