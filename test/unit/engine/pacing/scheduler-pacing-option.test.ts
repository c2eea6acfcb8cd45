// The Scheduler with pacing turned on by its option: pauses from retry-after, the rate budget
// the headers announce, a 429 that budget explains, close() during a pause, bad options.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PauseChange } from '../../../../src/main/engine/pacing/partition-pacing'
import { Scheduler, SchedulerClosedError } from '../../../../src/main/engine/pacing/scheduler'
import { fakeClock, flush, state, tracked } from './scheduler-helpers'

afterEach(() => {
  vi.useRealTimers()
})

describe('Scheduler pacing (opt-in)', () => {
  const requests = (limit: number, remaining: number) => ({
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(remaining),
    'x-ratelimit-reset-requests': '1s',
  })

  /** Fake timers for the wake-ups, a fake clock for now(), moved together. */
  function paced(options: Partial<ConstructorParameters<typeof Scheduler>[0]> = {}) {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const clock = fakeClock()
    const s = new Scheduler({ clock, pacing: { random: () => 0.5 }, ...options })
    const pass = async (ms: number) => {
      clock.advance(ms)
      vi.advanceTimersByTime(ms)
      await flush()
    }
    return { s, clock, pass }
  }

  it('retry-after in every form pauses every waiting call of exactly that partition', async () => {
    const forms: [Record<string, string>, number][] = [
      [{ 'retry-after-ms': '1500' }, 1500],
      [{ 'retry-after': '2' }, 2000],
      [{ 'retry-after': new Date(1_000_000 + 3000).toUTCString() }, 3000],
      [{ 'retry-after-ms': '40', 'retry-after': '1' }, 40],
      // No retry-after and no budget to pace by: the exhausted reset is the pause.
      [{ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '2s500ms' }, 2500],
      [
        {
          'anthropic-ratelimit-tokens-remaining': '0',
          'anthropic-ratelimit-tokens-reset': new Date(1_000_000 + 4000).toISOString(),
        },
        4000,
      ],
    ]
    for (const [headers, wait] of forms) {
      const { s, clock, pass } = paced({ params: { initial: 1 } })
      const pauses: PauseChange[] = []
      s.on('pause', (p) => pauses.push(p))
      const log: string[] = []
      const refused = await s.acquire('a')
      void tracked(s, 'a', log, 'a1')
      void tracked(s, 'a', log, 'a2')
      refused.release('throttled', { headers })
      await flush()
      void tracked(s, 'b', log, 'b1')
      await flush()
      // Resuming waits a jitter of up to 20 % of the pause; random() is 0.5 here.
      const until = 1_000_000 + wait + Math.ceil(0.5 * 0.2 * wait)
      expect(pauses).toMatchObject([{ partition: 'a', ts: 1_000_000, until }])
      expect(s.pacing('a')?.pausedUntil).toBe(until)
      expect(log).toEqual(['b1'])
      await pass(until - clock.now() - 1)
      expect(log).toEqual(['b1'])
      await pass(1)
      expect(log).toEqual(['b1', 'a1'])
      s.close()
      vi.useRealTimers()
    }
  })

  it('without the option, headers change nothing (the default stays as it was)', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 1 } })
    const log: string[] = []
    const refused = await s.acquire('a')
    void tracked(s, 'a', log, 'a1')
    refused.release('throttled', { headers: { 'retry-after': '30', ...requests(60, 0) } })
    await flush()
    expect(log).toEqual(['a1'])
    expect(s.pacing('a')).toBeUndefined()
  })

  it('admission waits for the rate budget the headers announce', async () => {
    const { s, pass } = paced({ params: { initial: 4 } })
    const log: string[] = []
    const first = await s.acquire('a')
    first.release('ok', { headers: requests(60, 0) })
    void tracked(s, 'a', log, 'a1')
    void tracked(s, 'a', log, 'a2')
    await pass(999)
    expect(log).toEqual([])
    await pass(1)
    // 60 a minute: one a second, whatever the concurrency limit allows.
    expect(log).toEqual(['a1'])
    await pass(1000)
    expect(log).toEqual(['a1', 'a2'])
    expect(state(s, 'a').concurrency).toBe(4)
    s.close()
  })

  it("with a rate announced, a 429 is the rate's: explained it waits for the refill, unexplained it narrows the pace; the concurrency limit holds", async () => {
    const { s, pass } = paced({ params: { initial: 8 } })
    const explained = await s.acquire('a')
    explained.release('throttled', { headers: requests(600, 0) })
    expect(state(s, 'a')).toMatchObject({ limit: 8, throttles: 1 })
    expect(s.pacing('a')?.pace).toMatchObject({ burstMs: 60_000 })
    // 600 a minute: the next call may go 100 ms later.
    const next = s.acquire('a')
    await pass(100)
    const unexplained = await next
    // Refused with 300 left: the provider counts in a shorter window than a minute. One call at
    // a time from now on, spread at the rate; the concurrency limit holds.
    unexplained.release('throttled', { headers: requests(600, 300) })
    expect(state(s, 'a')).toMatchObject({ limit: 8, throttles: 2 })
    expect(s.pacing('a')?.pace).toMatchObject({ burstMs: 0 })
    await pass(1000)
    const rate = s.pacing('a')?.pace?.perMinute.requests ?? 0
    // Refused again, one call at a time: less of the rate is ours than announced (a tenant the
    // headers hide, a cap on calls in flight). The pace's rate is cut; the limit still holds.
    const again = await s.acquire('a')
    again.release('throttled', { headers: requests(600, 300) })
    expect(state(s, 'a')).toMatchObject({ limit: 8, throttles: 3 })
    expect(s.pacing('a')?.pace?.perMinute.requests).toBeCloseTo(rate * 0.8, 6)
    s.close()
  })

  it('close() cancels the pending wake-up and rejects the paused waiters', async () => {
    const { s } = paced({ params: { initial: 1 } })
    const refused = await s.acquire('a')
    const waiting = s.acquire('a')
    refused.release('throttled', { headers: { 'retry-after': '60' } })
    expect(vi.getTimerCount()).toBe(1)
    s.close()
    await expect(waiting).rejects.toBeInstanceOf(SchedulerClosedError)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('rejects bad pacing options with a TypeError naming the field', () => {
    expect(() => new Scheduler({ pacing: { resumeJitterMs: -1 } })).toThrow(/`resumeJitterMs`/)
    expect(() => new Scheduler({ pacing: { windowMs: 0 } })).toThrow(/`windowMs`/)
    expect(() => new Scheduler({ pacing: { random: 3 as never } })).toThrow(/`random`/)
  })
})
