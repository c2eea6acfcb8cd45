// The Scheduler's rules that came with pacing on by default: the controller swap, sliders under
// pacing, the floor's learned pace, announced budgets as `headers` changes, the pause in the snapshot,
// waits asked for beyond an hour or beyond one timer's reach.
// Fake timers for the wake-ups and a fake clock for now(), moved together.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { controllerFactory } from '../../../../src/main/engine/pacing/controllers'
import {
  MAX_PAUSE_MS,
  PartitionPacing,
  checkPacingOptions,
  type PauseChange,
} from '../../../../src/main/engine/pacing/partition-pacing'
import { MAX_TIMER_MS } from '../../../../src/main/engine/core/timers'
import { Scheduler, type SchedulerOptions } from '../../../../src/main/engine/pacing/scheduler'
import type { LimitChange } from '../../../../src/main/engine/core/types'
import { fakeClock } from '../../../helpers/clock'

const T0 = 1_000_000
const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

function paced(options: SchedulerOptions = {}) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const clock = fakeClock(T0)
  const s = new Scheduler({
    clock,
    createController: controllerFactory('adaptive'),
    pacing: { random: () => 0.5 },
    ...options,
  })
  const limits: LimitChange[] = []
  const pauses: PauseChange[] = []
  const budgets: LimitChange[] = []
  s.on('limit', (c) => limits.push(c))
  s.on('pause', (p) => pauses.push(p))
  s.on('budget', (b) => budgets.push(b))
  const pass = async (ms: number) => {
    clock.advance(ms)
    vi.advanceTimersByTime(ms)
    await flush()
  }
  /** Acquires, and records in `log` when it was granted. */
  const track = (log: string[], label: string, partition = 'p') => {
    const permit = s.acquire(partition)
    void permit.then(() => log.push(label))
    return permit
  }
  const partition = (name = 'p') => s.snapshot().find((x) => x.partition === name)!
  return { s, clock, pass, track, partition, limits, pauses, budgets }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('Scheduler.setController', () => {
  it('swaps every controller at its current limit and params; later partitions get it too', async () => {
    const { s, partition, limits } = paced({ params: { initial: 8 } })
    s.setParams('p', { max: 10 })
    const held = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(() => s.acquire('p')))
    // The adaptive controller: one cut for the burst (half of it refused, half served).
    for (const permit of held.slice(0, 4)) permit.release('throttled')
    for (const permit of held.slice(4)) permit.release('ok')
    expect(partition().limit).toBe(4)

    limits.length = 0
    s.setController(controllerFactory('seed'), 'seed controller')
    expect(limits).toEqual([
      {
        partition: 'p',
        ts: T0,
        from: 4,
        to: 4,
        reason: 'operator: seed controller',
        cause: 'operator',
      },
    ])
    expect(partition()).toMatchObject({ limit: 4, params: { max: 10, initial: 8 } })
    expect(partition().lastChange?.reason).toBe('operator: seed controller')
    // The seed's rule now: every throttle of a burst cuts (4 -> 2 -> 1).
    const burst = await Promise.all([1, 2, 3, 4].map(() => s.acquire('p')))
    for (const permit of burst) permit.release('throttled')
    expect(partition().limit).toBe(1)
    // A partition created after the swap runs the seed controller from its initial limit.
    const q = await Promise.all([1, 2].map(() => s.acquire('q')))
    for (const permit of q) permit.release('throttled')
    expect(partition('q').limit).toBe(2)
    s.close()
  })

  it('applies to the next admission: waiters go as soon as the new controller allows', async () => {
    const { s, track } = paced({ params: { initial: 2 } })
    const log: string[] = []
    const first = await s.acquire('p')
    await s.acquire('p')
    void track(log, 'w1')
    await flush()
    expect(log).toEqual([])
    s.setController(controllerFactory('seed'))
    // Same limit, same admission: the swap neither frees nor takes a slot.
    await flush()
    expect(log).toEqual([])
    first.release('ok')
    await flush()
    expect(log).toEqual(['w1'])
    expect(() => s.setController('seed' as never)).toThrow(/`createController`/)
    s.close()
  })
})

describe('sliders with pacing on', () => {
  it('a lowered max applies to the next admission; a raised start admits at once', async () => {
    const { s, track, partition } = paced({ params: { initial: 4 } })
    const held = await Promise.all([1, 2, 3, 4].map(() => s.acquire('p')))
    const log: string[] = []
    void track(log, 'w1')
    void track(log, 'w2')
    s.setParams('p', { max: 2 })
    expect(partition().concurrency).toBe(2)
    held[0]!.release('ok')
    held[1]!.release('ok')
    await flush()
    // 2 still in flight: nothing admitted under a limit of 2.
    expect(log).toEqual([])
    held[2]!.release('ok')
    await flush()
    expect(log).toEqual(['w1'])
    s.setParams('p', { max: 6, initial: 6 })
    await flush()
    expect(log).toEqual(['w1', 'w2'])
    s.close()
  })

  it('a slider never lets a call through a pause', async () => {
    const { s, track, pass } = paced({ params: { initial: 1 } })
    const refused = await s.acquire('p')
    const log: string[] = []
    void track(log, 'w1')
    refused.release('throttled', { headers: { 'retry-after': '2' } })
    s.setParams('p', { max: 8, initial: 8 })
    await flush()
    expect(log).toEqual([])
    // 2 s and the jitter (random 0.5 of up to 20 % of the pause).
    await pass(2200)
    expect(log).toEqual(['w1'])
    s.close()
  })
})

describe('the floor: a refusal with no budget announced and nothing left to cut', () => {
  it('starts a pace below one call per round trip; a refusal cuts it, successes grow it', async () => {
    const { s, pass, track, partition } = paced({ params: { initial: 1, max: 1 } })
    const first = await s.acquire('p')
    await pass(1000)
    first.release('ok')
    expect(partition().pace).toBeUndefined()
    const refused = await s.acquire('p')
    await pass(100)
    refused.release('throttled')
    // One call a round trip (1 s) was what the floor sent: the pace starts at 0.8 of it.
    expect(partition().pace).toEqual({ burstMs: 0, perMinute: { requests: 48 }, learned: true })
    // The next call waits 1250 ms from the last send (100 ms before the refusal came).
    const log: string[] = []
    const next = track(log, 'next')
    await pass(1000)
    expect(log).toEqual([])
    await pass(150)
    expect(log).toEqual(['next'])
    const permit = await next
    await pass(1000)
    permit.release('ok')
    const grown = partition().pace?.perMinute.requests ?? 0
    expect(grown).toBeGreaterThan(48)
    // A refusal of a call sent after the cut: x0.8.
    const pending = s.acquire('p')
    await pass(2000)
    const again = await pending
    again.release('throttled')
    expect(partition().pace?.perMinute.requests).toBeCloseTo(grown * 0.8, 6)
    s.close()
  })

  it('ends once the pace allows the controller’s range, 64 calls per round trip', async () => {
    const { s, pass, partition } = paced({ params: { initial: 1, max: 1 } })
    const first = await s.acquire('p')
    await pass(1000)
    first.release('ok')
    const refused = await s.acquire('p')
    refused.release('throttled')
    expect(partition().pace?.learned).toBe(true)
    let last = 0
    for (let i = 0; i < 200 && partition().pace; i++) {
      last = partition().pace?.perMinute.requests ?? 0
      const next = s.acquire('p')
      await pass(2000)
      const permit = await next
      await pass(1000)
      permit.release('ok')
    }
    expect(partition().pace).toBeUndefined()
    // Round trips of one to three seconds: a call and a half per round trip, where it ended
    // before the eleventh round, is 90 a minute at most; it held up to 64 (1,280 a minute at 3 s).
    expect(last).toBeGreaterThan(600)
    expect(last).toBeLessThan(3840)
    s.close()
  })

  it('above the floor the cut answers a refusal; at the floor retry-after wins', async () => {
    const above = paced({ params: { initial: 4 } })
    const permit = await above.s.acquire('p')
    permit.release('throttled')
    expect(above.pauses).toEqual([])
    expect(above.partition().limit).toBe(2)
    above.s.close()
    vi.useRealTimers()

    const floor = paced({ params: { initial: 1 } })
    const refused = await floor.s.acquire('p')
    refused.release('throttled', { headers: { 'retry-after-ms': '5000' } })
    expect(floor.pauses).toHaveLength(1)
    expect(floor.pauses[0]!.reason).not.toMatch(/backing off/)
    expect(floor.pauses[0]!.until).toBe(T0 + 5000 + 500)
    floor.s.close()
  })
})

describe('announced budgets', () => {
  const requests = (limit: number, remaining: number) => ({
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(remaining),
    'x-ratelimit-reset-requests': '1s',
  })

  it("a budget announced or changed is a 'headers' change; the same one again is not", async () => {
    const { s, budgets, limits } = paced({ params: { initial: 4 } })
    for (const [limit, remaining] of [
      [600, 500],
      [600, 499],
      [300, 200],
    ] as const) {
      const permit = await s.acquire('p')
      permit.release('ok', { headers: requests(limit, remaining) })
    }
    expect(budgets).toEqual([
      {
        partition: 'p',
        ts: T0,
        from: 0,
        to: 600,
        reason: 'headers: requests 600/min',
        cause: 'headers',
      },
      {
        partition: 'p',
        ts: T0,
        from: 600,
        to: 300,
        reason: 'headers: requests 300/min',
        cause: 'headers',
      },
    ])
    // A budget is not the concurrency limit: it is not a 'limit' event, nor the last change.
    expect(limits.every((c) => c.cause !== 'headers')).toBe(true)
    expect(s.snapshot()[0]?.lastChange?.cause).not.toBe('headers')
    s.close()
  })
})

describe('a refusal asking to wait longer than an hour', () => {
  it.each([
    ['retry-after in seconds', { 'retry-after': '99999999' }],
    [
      'retry-after as a date a year ahead',
      { 'retry-after': new Date(T0 + 365 * 86_400_000).toUTCString() },
    ],
    ['retry-after-ms past 2^31-1', { 'retry-after-ms': String(2 ** 32) }],
  ])('%s: the pause is held to an hour, said so, and wakes once after it', async (_, headers) => {
    const { s, track, pass, pauses } = paced({ params: { initial: 1 } })
    const refused = await s.acquire('p')
    const log: string[] = []
    void track(log, 'w1')
    refused.release('throttled', { headers })
    // An hour and the jitter (random 0.5 of at most 1 s).
    const until = T0 + MAX_PAUSE_MS + 500
    expect(pauses).toEqual([
      expect.objectContaining({
        partition: 'p',
        until,
        reason: expect.stringMatching(/held to 1 h, then one call asks again\)$/),
      }),
    ])
    // One timer, for the hour: not one that overflows to 1 ms and re-arms itself.
    expect(vi.getTimerCount()).toBe(1)
    await pass(1000)
    expect(vi.getTimerCount()).toBe(1)
    await pass(until - T0 - 1001)
    expect(log).toEqual([])
    await pass(1)
    expect(log).toEqual(['w1'])
    s.close()
  })

  it('a pause an hour long is kept as asked', async () => {
    const { s, pauses } = paced({ params: { initial: 1 } })
    const refused = await s.acquire('p')
    s.acquire('p').catch(() => {})
    refused.release('throttled', { headers: { 'retry-after': '3600' } })
    expect(pauses[0]?.until).toBe(T0 + 3_600_000 + 500)
    expect(pauses[0]?.reason).not.toMatch(/held to/)
    s.close()
  })
})

describe('a wait beyond one timer', () => {
  it('an announced budget of one call per 1000 h: the wake-up waits 2^31-1 ms, not 1 ms', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const pacing = new PartitionPacing('p', checkPacingOptions({ random: () => 0.5 }))
    const reservation = pacing.admit(T0)
    pacing.settle(T0 + 10, reservation, 'ok', {
      headers: {
        'x-ratelimit-limit-requests': '1',
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '1000h',
      },
    })
    expect(pacing.delayMs(T0 + 10)).toBeGreaterThan(MAX_TIMER_MS)
    const wake = vi.fn()
    expect(pacing.ready(T0 + 10, undefined, wake)).toBe(false)
    vi.advanceTimersByTime(1000)
    expect(wake).not.toHaveBeenCalled()
    // Woken early, the caller asks again and the rest is armed anew.
    vi.advanceTimersByTime(MAX_TIMER_MS - 1000)
    expect(wake).toHaveBeenCalledTimes(1)
    pacing.stop()
  })
})
