// How the runner treats what goes wrong, against a real loopback server speaking the OpenAI API:
// setup errors are not cached as results, refused inputs are, and one payload on two models is
// two executions.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../src/main/engine/app/engine'
import { createOpenAiCompatibleProvider } from '../../../src/main/engine/providers/openai'
import { tempDir, until } from '../../helpers/cli'
import { closeVendors, fakeVendor } from '../../helpers/fake-vendor'

type Answer = { status: number; body: unknown }

/** A fake provider whose next answers the test decides; it counts the requests it gets. */
async function providerServer(next: (n: number) => Answer) {
  const vendor = await fakeVendor({ answer: (_req, n) => next(n) })
  return { baseUrl: vendor.baseUrl, requests: () => vendor.requests.length }
}

const ok: Answer = {
  status: 200,
  body: {
    choices: [{ message: { role: 'assistant', content: 'done' } }],
    usage: { prompt_tokens: 10, completion_tokens: 5 },
  },
}

let engine: Engine | undefined
afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  await closeVendors()
  engine = undefined
})

async function runToEnd(e: Engine, tasks: unknown[]): Promise<string> {
  const { batchId } = await e.handlers['tasks:enqueue']({ tasks: tasks as never })
  await until(() => {
    const b = e.queue.batch(batchId)
    return b && b.counts.queued + b.counts.running === 0
  }, 20_000)
  return batchId
}

function start(baseUrl: string): Engine {
  const e = createEngine({
    dbPath: join(tempDir(), 'pacer.db'),
    providers: {
      'openai-compatible': createOpenAiCompatibleProvider({
        id: 'openai-compatible',
        baseUrl,
        apiKey: () => null,
      }),
    },
  })
  e.start()
  return e
}

const task = { type: 'q', payload: { prompt: 'hi' }, provider: 'openai-compatible', model: 'm1' }

describe('runner failures', () => {
  it('a 401 (setup problem) stops the partition and pauses the batch; resuming it executes', async () => {
    const fake = await providerServer((n) =>
      n === 1 ? { status: 401, body: { error: { message: 'invalid api key' } } } : ok,
    )
    engine = start(fake.baseUrl)
    const { batchId } = await engine.handlers['tasks:enqueue']({ tasks: [task] })
    // The console's batch waits, paused, with the reason; its task stays queued, nothing kept.
    const held = await until(() => {
      const b = engine!.queue.batch(batchId)
      return b?.state === 'paused' && b.counts.running === 0 && b
    })
    expect(held.counts.queued).toBe(1)
    expect(held.stopReason).toMatch(/^openai-compatible:m1 stopped: HTTP 401: invalid api key/)
    const [partition] = await engine.handlers['scheduler:get']({})
    expect(partition).toMatchObject({
      partition: 'openai-compatible:m1',
      stopped: { reason: held.stopReason },
    })

    // The key fixed, the operator resumes the partition (Concurrency view): its batch runs on.
    const view = await engine.handlers['scheduler:resume']({ partition: 'openai-compatible:m1' })
    expect(view[0]!.stopped).toBeUndefined()
    // The batch settles at the end of the turn its last task ended in: wait for that, not the count.
    await until(() => engine!.queue.batch(batchId)?.state === 'done', 20_000)
    expect(engine.queue.counts(batchId).succeeded).toBe(1)
    expect(engine.queue.batch(batchId)!.stopReason).toBeUndefined()
    expect(fake.requests()).toBe(2)
    expect(engine.ledger.totals()).toMatchObject({ executed: 1, errors: 1 })
  })

  it('a 400 (the input itself refused) is kept like a result: the same task is not sent again', async () => {
    const fake = await providerServer(() => ({
      status: 400,
      body: { error: { message: 'prompt too long' } },
    }))
    engine = start(fake.baseUrl)
    const first = await runToEnd(engine, [task])
    expect(engine.queue.counts(first).failed).toBe(1)
    const second = await runToEnd(engine, [task])
    expect(engine.queue.counts(second).failed).toBe(1)
    const [row] = engine.queue.listTasks({ batchId: second, offset: 0, limit: 1 }).rows
    expect(row!.error).toMatch(/same task failed before: HTTP 400: prompt too long/)
    expect(fake.requests()).toBe(1)

    // The operator retries (after fixing the prompt's limits, say): it is really sent again.
    await engine.handlers['tasks:retry']({ batchId: second })
    await until(() => fake.requests() === 2)
    await until(() => engine!.queue.counts(second).failed === 1)
  })

  it('the same payload on another model or step count is another execution, never a reuse', async () => {
    const fake = await providerServer(() => ok)
    engine = start(fake.baseUrl)
    const batchId = await runToEnd(engine, [
      task,
      { ...task, model: 'm2' },
      { ...task, steps: 2 },
      { ...task }, // the only duplicate
    ])
    expect(engine.queue.counts(batchId)).toMatchObject({ succeeded: 3, reused: 1 })
    expect(fake.requests()).toBe(4) // 1 + 1 + 2 steps
    // A local model has no price: what its reuse saved is unknown, not $0.
    expect(engine.ledger.totals()).toMatchObject({ costMicros: null, savedMicros: null, reused: 1 })
  })

  it('a task on a provider other than the default must name its model', async () => {
    engine = start('http://127.0.0.1:9/v1')
    const enqueue = (t: object) =>
      Promise.resolve().then(() => engine!.handlers['tasks:enqueue']({ tasks: [t as never] }))
    await expect(
      enqueue({ type: 'q', payload: 1, provider: 'openai-compatible' }),
    ).rejects.toMatchObject({ code: 'invalid_task', field: 'tasks[0].model' })
    await expect(enqueue({ type: 'q', payload: 1, provider: 'nope' })).rejects.toMatchObject({
      code: 'invalid_task',
      field: 'tasks[0].provider',
    })
  })
})

describe('API keys over the network', () => {
  it('a key is never sent over plain http to another machine; keyless http is fine', async () => {
    const withKey = createOpenAiCompatibleProvider({
      id: 'openai-compatible',
      baseUrl: 'http://lan-model-server.invalid:8000/v1',
      apiKey: () => 'sk-test-plain-http-0000000000',
    })
    const answer = await withKey.call({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
    expect(answer.status).toBe(401)
    expect(answer.error).toMatch(/refusing to send the openai-compatible API key over plain http/)
    expect(JSON.stringify(answer)).not.toContain('sk-test-plain-http')

    const fake = await providerServer(() => ok)
    const local = createOpenAiCompatibleProvider({
      id: 'openai-compatible',
      baseUrl: fake.baseUrl, // http://127.0.0.1:port: stays on this machine
      apiKey: () => 'sk-test-loopback-000000000000',
    })
    expect(
      (await local.call({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).status,
    ).toBe(200)
  })
})

describe('pause', () => {
  it('a paused batch sends no new calls; resume finishes it', async () => {
    engine = createEngine({ dbPath: join(tempDir(), 'pacer.db'), sim: { latencyScale: 2 } })
    engine.start()
    const { batchId } = await engine.handlers['tasks:enqueue']({
      tasks: Array.from({ length: 40 }, (_, i) => ({ type: 'job', payload: { i } })),
    })
    await until(() => engine!.queue.counts(batchId).succeeded >= 3)
    const inflight = engine.scheduler.snapshot().reduce((n, p) => n + p.inflight, 0)
    const before = engine.ledger.totals({ batchId }).executed
    await engine.handlers['batches:pause']({ batchId })
    // Calls already sent land; then nothing moves.
    await until(() => engine!.queue.counts(batchId).running === 0, 5_000)
    const calls = () => engine!.ledger.totals({ batchId })
    const frozen = calls()
    // Only what was already in flight: tasks picked but still waiting for a slot stayed home.
    expect(frozen.executed).toBeLessThanOrEqual(before + inflight)
    // The runner keeps dispatching meanwhile: another batch runs to its end past the paused one.
    const other = await engine.handlers['tasks:enqueue']({
      tasks: Array.from({ length: 5 }, (_, i) => ({ type: 'other', payload: { i } })),
    })
    await until(() => engine!.queue.counts(other.batchId).succeeded === 5, 30_000)
    expect(calls()).toEqual(frozen)
    expect(engine.queue.counts(batchId).queued).toBeGreaterThan(0)

    await engine.handlers['batches:resume']({ batchId })
    // Settled at the end of the turn its last task ended in: wait for that, not the count.
    await until(() => engine!.queue.batch(batchId)?.state === 'done', 30_000)
    expect(engine.queue.counts(batchId).succeeded).toBe(40)
  })
})
