// The console's retry in team mode: two engines (two machines, each its own SQLite file) on one
// real redis-server. A failure kept as a result is the team's too; the console's retry on one
// machine (after the cause is fixed) forgets it in Redis as well, runs each failed task once more,
// and the other machine's retry then takes the new answer from the team instead of calling.
import { join } from 'node:path'
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { connectTeamStore } from '../../../../src/main/engine/team/connect'
import { parseStoreUrl } from '../../../../src/main/engine/team/store-url'
import type { Provider, ProviderResponse } from '../../../../src/main/engine/core/types'
import { tempDir, until } from '../../../helpers/cli'
import { startRedis, type RedisServer } from '../../../helpers/redis'

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await redis.close()
})

const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.shutdown({ graceMs: 0 })))
})

/** Answers every prompt, but 400 to those starting with `bad` while `refusing`; counts calls. */
function provider(): Provider & { refusing: boolean; calls: Map<string, number> } {
  const p = {
    id: 'test',
    refusing: true,
    calls: new Map<string, number>(),
    call(request: { messages: { content: unknown }[] }): Promise<ProviderResponse> {
      const prompt = String(request.messages.at(-1)?.content ?? '')
      p.calls.set(prompt, (p.calls.get(prompt) ?? 0) + 1)
      if (p.refusing && prompt.startsWith('bad')) {
        return Promise.resolve({ status: 400, headers: {}, error: 'prompt refused' })
      }
      return Promise.resolve({
        status: 200,
        headers: {},
        text: 'ok',
        usage: { inputTokens: 5, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2 },
      })
    },
  }
  return p
}

async function machine(p: Provider): Promise<Engine> {
  const engine = createEngine({
    dbPath: join(tempDir('pacer-team-retry-'), 'pacer.db'),
    providers: { test: p },
    team: await connectTeamStore(parseStoreUrl(redis.url, 'test'), { prefix: PREFIX }),
  })
  engines.push(engine)
  engine.start()
  return engine
}

const PREFIX = `retry${process.pid}:`
const PROMPTS = ['good-0', 'bad-0', 'bad-1']

/** Waits until the batch has nothing queued or running; its counts. */
async function settled(engine: Engine, batchId: string) {
  return until(() => {
    const b = engine.queue.batch(batchId)
    return b && b.counts.queued + b.counts.running === 0 ? b.counts : undefined
  })
}

async function enqueue(engine: Engine): Promise<string> {
  const tasks = PROMPTS.map((prompt) => ({
    type: 'job',
    payload: { prompt },
    provider: 'test',
    model: 'm',
  }))
  return (await engine.handlers['tasks:enqueue']({ tasks })).batchId
}

describe("the console's retry in team mode", () => {
  it("forgets the team's failure too: each failed task runs once more across the machines", async () => {
    const p = provider()
    const a = await machine(p)
    const b = await machine(p)
    const batchA = await enqueue(a)
    expect(await settled(a, batchA)).toMatchObject({ succeeded: 1, failed: 2 })
    // Machine B reuses A's answer and A's failures: nothing is called again.
    const batchB = await enqueue(b)
    expect(await settled(b, batchB)).toMatchObject({ reused: 1, failed: 2 })
    expect([...p.calls.values()]).toEqual([1, 1, 1])

    // Fixed; B's console retries its batch: the failed tasks run, once each.
    p.refusing = false
    expect((await b.handlers['tasks:retry']({ batchId: batchB })).retried).toBe(2)
    expect(await settled(b, batchB)).toMatchObject({ reused: 1, succeeded: 2, failed: 0 })
    expect(Object.fromEntries(p.calls)).toEqual({ 'good-0': 1, 'bad-0': 2, 'bad-1': 2 })

    // A's console retries too: the team has the answers now, so A takes them without a call.
    expect((await a.handlers['tasks:retry']({ batchId: batchA })).retried).toBe(2)
    expect(await settled(a, batchA)).toMatchObject({ succeeded: 1, reused: 2, failed: 0 })
    expect(Object.fromEntries(p.calls)).toEqual({ 'good-0': 1, 'bad-0': 2, 'bad-1': 2 })
  })
})
