// The engine as users get it: the adaptive controller with pacing on, pauses and announced budgets
// reaching the console's event, and the controller setting swapping the running scheduler. A real
// SQLite file and a provider written in the test.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { SchedulerChangedEvent } from '../../../../src/shared/contract'
import { parseCommand } from '../../../../src/shared/contract'
import {
  createEngine,
  type Engine,
  type EngineOptions,
} from '../../../../src/main/engine/app/engine'
import type { Provider, ProviderResponse } from '../../../../src/main/engine/core/types'
import { tempDir, until } from '../../../helpers/cli'

const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.shutdown({ graceMs: 0 })))
})

const BUDGET = {
  'x-ratelimit-limit-requests': '6000',
  'x-ratelimit-remaining-requests': '5990',
  'x-ratelimit-reset-requests': '100ms',
}

/** A provider refusing its first call with a short retry-after, then answering every call. */
function provider(): Provider & { calls: number } {
  const p = {
    id: 'test',
    calls: 0,
    call(): Promise<ProviderResponse> {
      p.calls++
      if (p.calls === 1) {
        return Promise.resolve({ status: 429, headers: { 'retry-after-ms': '200' }, error: 'wait' })
      }
      return Promise.resolve({
        status: 200,
        headers: BUDGET,
        text: 'ok',
        usage: { inputTokens: 5, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2 },
      })
    },
  }
  return p
}

function open(dbPath: string, extra: Partial<EngineOptions> = {}): Engine {
  const engine = createEngine({
    dbPath,
    providers: { test: provider() },
    eventIntervalMs: 50,
    ...extra,
  })
  engines.push(engine)
  // As the console does: the runner picks every running batch.
  engine.start()
  return engine
}

async function runTasks(engine: Engine, n: number): Promise<void> {
  const tasks = Array.from({ length: n }, (_, i) => ({
    type: 'job',
    payload: { i, at: Math.random() },
    provider: 'test',
    model: 'm',
  }))
  const { batchId } = await engine.handlers['tasks:enqueue']({ tasks })
  await until(() => {
    const b = engine.queue.batch(batchId)
    return b && b.counts.queued + b.counts.running === 0
  })
}

describe('the engine paces by default', () => {
  it('runs the adaptive controller with pacing on; pauses and budgets reach scheduler:changed', async () => {
    const engine = open(join(tempDir(), 'pacer.db'))
    const events: SchedulerChangedEvent[] = []
    engine.subscribe('scheduler:changed', (e) => events.push(e))
    expect((await engine.handlers['settings:get']({})).controller).toBe('adaptive')
    expect(engine.scheduler.paced).toBe(true)

    await runTasks(engine, 3)
    await until(() => events.some((e) => e.changes.some((c) => c.cause === 'headers')))
    const pauses = events.flatMap((e) => e.pauses)
    expect(pauses).toMatchObject([
      { partition: 'test:m', reason: expect.stringMatching(/^paused until/) },
    ])
    expect(pauses[0]!.until - pauses[0]!.ts).toBeGreaterThanOrEqual(200)
    const headers = events.flatMap((e) => e.changes).filter((c) => c.cause === 'headers')
    expect(headers).toEqual([
      expect.objectContaining({ from: 0, to: 6000, reason: 'headers: requests 6000/min' }),
    ])
    // The first refusal came in slow start from the initial limit: one cut, with its cause.
    const cuts = events.flatMap((e) => e.changes).filter((c) => c.cause === 'throttle')
    expect(cuts).toHaveLength(1)
    const [partition] = await engine.handlers['scheduler:get']({})
    expect(partition).toMatchObject({ partition: 'test:m', pausedUntil: null, successes: 3 })
  })
})

describe('the controller setting', () => {
  it('swaps the running partitions at their limit, persists, and yields to --controller', async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const engine = open(dbPath)
    await runTasks(engine, 2)
    const before = (await engine.handlers['scheduler:get']({}))[0]!
    const view = await engine.handlers['settings:set']({ controller: 'seed' })
    expect(view.controller).toBe('seed')
    const [after] = await engine.handlers['scheduler:get']({})
    expect(after).toMatchObject({ limit: before.limit, params: before.params })
    expect(after!.lastChange).toMatchObject({
      cause: 'operator',
      reason: 'operator: seed controller',
    })

    // Stored: the next process on the database runs the seed too, unless told otherwise.
    expect((await open(dbPath).handlers['settings:get']({})).controller).toBe('seed')
    const flagged = open(dbPath, { controller: 'adaptive' })
    expect((await flagged.handlers['settings:get']({})).controller).toBe('adaptive')
    expect(flagged.settings.get().controller).toBe('seed')
  })

  it('refuses a bad value with an error naming the field', () => {
    const reply = parseCommand('settings:set', { controller: 'fast' })
    expect(reply.ok).toBe(false)
    if (reply.ok) return
    expect(reply.error).toMatchObject({ code: 'invalid_input', field: 'controller' })
    expect(reply.error.message).toMatch(/^controller: .*"seed".*"adaptive"/)
  })
})
