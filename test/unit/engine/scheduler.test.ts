import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ConcurrencyController, OutcomeContext } from '../../../src/main/engine/aimd'
import { SeedAimd } from '../../../src/main/engine/aimd'
import type { PauseChange } from '../../../src/main/engine/pacing/partition-pacing'
import type { Permit, SchedulerSample } from '../../../src/main/engine/scheduler'
import {
  PartitionStoppedError,
  Scheduler,
  SchedulerClosedError,
} from '../../../src/main/engine/scheduler'
import type { LimitChange, Outcome } from '../../../src/main/engine/types'
import { fakeClock as newFakeClock } from '../../helpers/clock'

const fakeClock = (start = 1_000_000) => newFakeClock(start)

/** Lets resolved acquire promises run their callbacks. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

const OUTCOMES: Outcome[] = ['ok', 'near_limit', 'throttled', 'overloaded', 'timeout', 'error']

function state(s: Scheduler, partition: string) {
  const snap = s.snapshot().find((p) => p.partition === partition)
  if (!snap) throw new Error(`no partition ${partition}`)
  return snap
}

/** Acquires and records when (in order) each permit was granted. */
function tracked(
  s: Scheduler,
  partition: string,
  log: string[],
  label: string,
  signal?: AbortSignal,
) {
  const p = s.acquire(partition, signal)
  void p.then(
    () => log.push(label),
    () => log.push(`${label}!`),
  )
  return p
}

afterEach(() => {
  vi.useRealTimers()
})

describe('Scheduler admission', () => {
  it('never admits beyond concurrency, and never leaves a waiter behind a free slot (property)', async () => {
    const op = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('acquire' as const),
          partition: fc.constantFrom('a', 'b'),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant('release' as const),
          pick: fc.nat(),
          outcome: fc.constantFrom(...OUTCOMES),
        }),
      },
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 10_000 }) }),
      fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }),
      fc.record({
        kind: fc.constant('params' as const),
        partition: fc.constantFrom('a', 'b', '*'),
        min: fc.integer({ min: 1, max: 4 }),
        max: fc.integer({ min: 4, max: 12 }),
      }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
        const clock = fakeClock()
        const s = new Scheduler({ clock })
        const held: Permit[] = []
        const pending: { ctrl: AbortController; settled: boolean }[] = []
        const order = new Map<string, { issued: number[]; granted: number[] }>()
        let violation: string | undefined
        let seq = 0
        for (const o of ops) {
          if (o.kind === 'acquire') {
            const id = seq++
            const ctrl = new AbortController()
            const entry = { ctrl, settled: false }
            pending.push(entry)
            const log = order.get(o.partition) ?? { issued: [], granted: [] }
            order.set(o.partition, log)
            log.issued.push(id)
            s.acquire(o.partition, ctrl.signal).then(
              (permit) => {
                entry.settled = true
                held.push(permit)
                log.granted.push(id)
                // Observed right after the admission: no release ran in between.
                const snap = state(s, o.partition)
                if (snap.inflight > snap.concurrency) {
                  violation ??= `inflight ${snap.inflight} > concurrency ${snap.concurrency}`
                }
              },
              () => {
                entry.settled = true
                log.issued.splice(log.issued.indexOf(id), 1)
              },
            )
          } else if (o.kind === 'release' && held.length > 0) {
            const [permit] = held.splice(o.pick % held.length, 1)
            permit?.release(o.outcome)
          } else if (o.kind === 'advance') {
            clock.advance(o.ms)
          } else if (o.kind === 'abort') {
            const open = pending.filter((p) => !p.settled)
            open[o.pick % Math.max(1, open.length)]?.ctrl.abort(new Error('cancelled'))
          } else if (o.kind === 'params') {
            s.setParams(o.partition, { min: o.min, max: o.max })
          }
          await flush()
          for (const snap of s.snapshot()) {
            if (snap.waiting > 0 && snap.inflight < snap.concurrency) {
              violation ??= `${snap.waiting} waiting with ${snap.inflight}/${snap.concurrency}`
            }
            const real = held.filter((p) => p.partition === snap.partition).length
            if (real !== snap.inflight) violation ??= `inflight ${snap.inflight}, held ${real}`
          }
        }
        for (const [partition, log] of order) {
          const fifo = log.issued.slice(0, log.granted.length)
          if (log.granted.join() !== fifo.join()) violation ??= `${partition} not FIFO`
        }
        s.close()
        await flush()
        expect(violation).toBeUndefined()
      }),
      { numRuns: 150 },
    )
  })

  it('many concurrent acquires with random outcomes never exceed floor(limit) at admission', async () => {
    const clock = fakeClock()
    const s = new Scheduler({ clock })
    let random = 12345
    const rand = () => {
      random = (random * 1103515245 + 12345) % 2 ** 31
      return random / 2 ** 31
    }
    let maxInflight = 0
    let excess = 0
    let cuts = 0
    s.on('limit', (c) => {
      if (c.to < c.from) cuts++
    })
    const work = Array.from({ length: 400 }, async () => {
      const permit = await s.acquire('sim:sim-small')
      const snap = state(s, 'sim:sim-small')
      maxInflight = Math.max(maxInflight, snap.inflight)
      excess = Math.max(excess, snap.inflight - Math.floor(snap.limit))
      const ticks = 1 + Math.floor(rand() * 5)
      for (let i = 0; i < ticks; i++) await flush()
      clock.advance(Math.floor(rand() * 500))
      const r = rand()
      permit.release(r < 0.1 ? 'throttled' : r < 0.15 ? 'error' : 'ok')
    })
    await Promise.all(work)
    expect(excess).toBeLessThanOrEqual(0)
    // The run must actually have exercised growth and cuts for the bound to mean anything.
    expect(maxInflight).toBeGreaterThan(4)
    expect(cuts).toBeGreaterThan(3)
    expect(state(s, 'sim:sim-small')).toMatchObject({ inflight: 0, waiting: 0 })
  })

  it('a cut applies to the next admission at once', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 4 } })
    const log: string[] = []
    const permits = await Promise.all([1, 2, 3, 4].map(() => s.acquire('p')))
    void tracked(s, 'p', log, 'w1')
    void tracked(s, 'p', log, 'w2')
    permits[0]?.release('throttled')
    await flush()
    expect(state(s, 'p')).toMatchObject({ limit: 2, concurrency: 2, inflight: 3, waiting: 2 })
    expect(log).toEqual([])
    permits[1]?.release('ok') // in the cooldown: no growth
    await flush()
    expect(log).toEqual([])
    permits[2]?.release('ok')
    await flush()
    expect(log).toEqual(['w1'])
    expect(state(s, 'p')).toMatchObject({ inflight: 2, waiting: 1 })
  })

  it('a success that raises the limit admits a waiter at once', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 2.5 } })
    const log: string[] = []
    const [a] = await Promise.all([s.acquire('p'), s.acquire('p')])
    void tracked(s, 'p', log, 'w1')
    void tracked(s, 'p', log, 'w2')
    a?.release('ok') // 2.5 -> 3: one slot freed, one slot added
    await flush()
    expect(log).toEqual(['w1', 'w2'])
  })

  it('setParams raising the limit admits waiters at once; raising max alone only lifts the cap', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { max: 2 } })
    const log: string[] = []
    await Promise.all([s.acquire('p'), s.acquire('p')])
    for (let i = 1; i <= 5; i++) void tracked(s, 'p', log, `w${i}`)
    const limits: LimitChange[] = []
    const params: string[] = []
    s.on('limit', (c) => limits.push(c))
    s.on('params', (c) => params.push(`${c.partition}:${c.params.max}`))

    s.setParams('p', { max: 6 })
    await flush()
    expect(log).toEqual([])
    expect(limits).toEqual([])
    expect(params).toEqual(['p:6'])

    s.setParams('p', { initial: 6 })
    await flush()
    expect(log).toEqual(['w1', 'w2', 'w3', 'w4'])
    expect(limits).toMatchObject([{ partition: 'p', from: 2, to: 6, reason: 'operator' }])
    expect(state(s, 'p')).toMatchObject({ inflight: 6, waiting: 1, lastChange: limits[0] })

    s.setParams('p', { min: 7, max: 8 })
    await flush()
    expect(log).toEqual(['w1', 'w2', 'w3', 'w4', 'w5'])
  })

  it("setParams('*') applies to existing partitions and to later ones, atomically", async () => {
    const s = new Scheduler({ clock: fakeClock() })
    await s.acquire('a')
    s.setParams('*', { initial: 5 })
    expect(state(s, 'a').limit).toBe(5)
    expect(s.getParams('later').initial).toBe(5)
    expect(s.getParams('*').initial).toBe(5)
    const later = await Promise.all([1, 2, 3, 4, 5].map(() => s.acquire('later')))
    expect(later).toHaveLength(5)
    expect(state(s, 'later').inflight).toBe(5)

    s.setParams('a', { max: 5 })
    expect(() => s.setParams('*', { min: 6 })).toThrow(/`max`/)
    // Valid for the defaults and for 'later', invalid for 'a': nothing changed anywhere.
    expect(s.getParams('*').min).toBe(1)
    expect(s.getParams('later').min).toBe(1)
    expect(s.getParams('a').min).toBe(1)
  })

  it('an aborted acquire rejects with the reason and leaves no ghost waiter', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 1 } })
    const log: string[] = []
    const first = await s.acquire('p')
    const ctrl = new AbortController()
    const aborted = tracked(s, 'p', log, 'x', ctrl.signal)
    void tracked(s, 'p', log, 'y')
    expect(state(s, 'p').waiting).toBe(2)
    const reason = new Error('user cancelled')
    ctrl.abort(reason)
    await expect(aborted).rejects.toBe(reason)
    expect(state(s, 'p').waiting).toBe(1)
    first.release('ok')
    await flush()
    expect(log).toEqual(['x!', 'y'])
    expect(state(s, 'p')).toMatchObject({ inflight: 1, waiting: 0 })
  })

  it('an already aborted signal rejects without queueing; an abort after admission does nothing', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 1 } })
    const reason = new Error('too late')
    await expect(s.acquire('p', AbortSignal.abort(reason))).rejects.toBe(reason)
    expect(s.snapshot()).toEqual([])
    const ctrl = new AbortController()
    const permit = await s.acquire('p', ctrl.signal)
    ctrl.abort()
    expect(state(s, 'p').inflight).toBe(1)
    permit.release('ok')
    expect(state(s, 'p').inflight).toBe(0)
  })

  it('serves waiters first in, first out', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 1, max: 1 } })
    const log: string[] = []
    const permits = new Map<string, Permit>()
    let current = await s.acquire('p')
    for (const label of ['b', 'c', 'd', 'e']) {
      void s.acquire('p').then((p) => {
        log.push(label)
        permits.set(label, p)
      })
    }
    for (let i = 0; i < 4; i++) {
      current.release('ok')
      await flush()
      const next = permits.get(log.at(-1) ?? '')
      if (!next) throw new Error(`nobody admitted after release ${i}`)
      current = next
    }
    expect(log).toEqual(['b', 'c', 'd', 'e'])
  })

  it('partitions are independent', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 4 } })
    const a = await Promise.all([1, 2, 3, 4].map(() => s.acquire('openai:gpt-4o')))
    for (const p of a) p.release('throttled')
    expect(state(s, 'openai:gpt-4o').limit).toBe(1)
    const b = await Promise.all([1, 2, 3, 4].map(() => s.acquire('anthropic:claude')))
    expect(b).toHaveLength(4)
    expect(state(s, 'anthropic:claude')).toMatchObject({ limit: 4, inflight: 4, throttles: 0 })
  })

  it('release is idempotent, counts outcomes and feeds the controller', async () => {
    const clock = fakeClock()
    const seen: [Outcome, OutcomeContext][] = []
    const s = new Scheduler({
      clock,
      params: { initial: 3 },
      createController: (partition, params): ConcurrencyController => {
        const inner = new SeedAimd(partition, params)
        return {
          partition,
          get params() {
            return inner.params
          },
          get limit() {
            return inner.limit
          },
          get concurrency() {
            return inner.concurrency
          },
          onOutcome: (o, ctx) => {
            seen.push([o, ctx])
            return inner.onOutcome(o, ctx)
          },
          setParams: (patch, now) => inner.setParams(patch, now),
        }
      },
    })
    const p1 = await s.acquire('p')
    clock.advance(10)
    const p2 = await s.acquire('p')
    const p3 = await s.acquire('p')
    clock.advance(5)
    const changes: LimitChange[] = []
    s.on('limit', (c) => changes.push(c))
    p1.release('ok')
    p1.release('throttled')
    p2.release('error')
    p3.release('overloaded')
    expect(seen).toEqual([
      ['ok', { now: 1_000_015, sentAt: 1_000_000, inflight: 3 }],
      ['error', { now: 1_000_015, sentAt: 1_000_010, inflight: 2 }],
      ['overloaded', { now: 1_000_015, sentAt: 1_000_010, inflight: 1 }],
    ])
    expect(changes.map((c) => c.reason)).toEqual(['success +0.5', 'overloaded x0.5'])
    expect(state(s, 'p')).toMatchObject({
      inflight: 0,
      successes: 1,
      errors: 1,
      throttles: 1,
      limit: 1.75,
      concurrency: 1,
    })
  })

  it('a bad outcome still frees the slot', async () => {
    const s = new Scheduler({ clock: fakeClock() })
    const p = await s.acquire('p')
    expect(() => p.release('meh' as Outcome)).toThrow(TypeError)
    expect(state(s, 'p').inflight).toBe(0)
  })

  it('validates options and arguments with TypeErrors naming the field', () => {
    expect(() => new Scheduler({ sampleIntervalMs: 0 })).toThrow(/`sampleIntervalMs`.*`0`/)
    expect(() => new Scheduler({ params: { decrease: 2 } })).toThrow(/`decrease`.*`2`/)
    expect(() => new Scheduler({ clock: {} as never })).toThrow(/`clock`/)
    const s = new Scheduler()
    expect(() => s.acquire('*')).toThrow(/`partition`/)
    expect(() => s.acquire('')).toThrow(/`partition`/)
    expect(() => s.setParams('p', { max: 0 })).toThrow(/`max`.*`0`/)
  })

  it('stop() rejects the waiters and later acquires of one partition until resume()', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 1 } })
    const events: string[] = []
    s.on('stopped', (stop) => events.push(`stopped ${stop.partition}: ${stop.reason}`))
    s.on('resumed', (partition) => events.push(`resumed ${partition}`))
    const held = await s.acquire('a:m')
    const waiting = s.acquire('a:m')
    const other = await s.acquire('b:m')
    expect(s.stop('a:m', 'a:m stopped: HTTP 401')).toBe(true)
    expect(s.stop('a:m', 'again')).toBe(false)
    await expect(waiting).rejects.toMatchObject({
      name: 'PartitionStoppedError',
      partition: 'a:m',
      reason: 'a:m stopped: HTTP 401',
    })
    await expect(s.acquire('a:m')).rejects.toBeInstanceOf(PartitionStoppedError)
    expect(state(s, 'a:m')).toMatchObject({
      waiting: 0,
      inflight: 1,
      stopped: { partition: 'a:m', reason: 'a:m stopped: HTTP 401' },
    })
    expect(state(s, 'b:m').stopped).toBeUndefined()
    // The call in flight lands and frees its slot as usual.
    held.release('error')
    other.release('ok')
    expect(s.resume('a:m')).toEqual(['a:m'])
    expect(s.resume('a:m')).toEqual([])
    expect(state(s, 'a:m').stopped).toBeUndefined()
    ;(await s.acquire('a:m')).release('ok')
    expect(events).toEqual(['stopped a:m: a:m stopped: HTTP 401', 'resumed a:m'])
    s.close()
  })

  it('getParams does not create a partition', () => {
    const s = new Scheduler({ params: { max: 7 } })
    expect(s.getParams('x').max).toBe(7)
    expect(s.snapshot()).toEqual([])
  })
})

describe('Scheduler samples and close', () => {
  it('emits samples every interval while active, one idle sample, then stops', async () => {
    vi.useFakeTimers()
    const clock = fakeClock(0)
    const s = new Scheduler({ clock, sampleIntervalMs: 100 })
    const samples: SchedulerSample[] = []
    s.on('sample', (x) => samples.push(x))
    vi.advanceTimersByTime(500)
    expect(samples).toEqual([])

    const permit = await s.acquire('p')
    clock.advance(100)
    vi.advanceTimersByTime(100)
    clock.advance(100)
    vi.advanceTimersByTime(100)
    expect(samples.map((x) => x.ts)).toEqual([100, 200])
    expect(samples[0]?.partitions).toMatchObject([{ partition: 'p', inflight: 1, waiting: 0 }])

    permit.release('throttled')
    clock.advance(100)
    vi.advanceTimersByTime(100)
    expect(samples).toHaveLength(3)
    expect(samples[2]?.partitions).toMatchObject([{ inflight: 0, throttles: 1 }])
    vi.advanceTimersByTime(1000)
    expect(samples).toHaveLength(3)

    await s.acquire('p')
    vi.advanceTimersByTime(100)
    expect(samples).toHaveLength(4)
    s.close()
    vi.advanceTimersByTime(1000)
    expect(samples).toHaveLength(4)
  })

  it("the sampling timer does not keep the process alive (unref'd)", async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const before = timeouts()
    const s = new Scheduler({ sampleIntervalMs: 50 })
    const permit = await s.acquire('p')
    expect(timeouts()).toBe(before)
    permit.release('ok')
    s.close()
  })

  it('close() rejects waiters, stops admitting, and lets held permits release', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 1 } })
    const held = await s.acquire('p')
    const waiting = s.acquire('p', new AbortController().signal)
    s.close()
    await expect(waiting).rejects.toBeInstanceOf(SchedulerClosedError)
    await expect(s.acquire('p')).rejects.toBeInstanceOf(SchedulerClosedError)
    expect(state(s, 'p')).toMatchObject({ waiting: 0, inflight: 1 })
    held.release('ok')
    expect(state(s, 'p').inflight).toBe(0)
    s.close()
  })
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

  it('a 429 the announced budget explains holds the concurrency limit; another one cuts it', async () => {
    const { s, pass } = paced({ params: { initial: 8 } })
    const explained = await s.acquire('a')
    explained.release('throttled', { headers: requests(600, 0) })
    expect(state(s, 'a')).toMatchObject({ limit: 8, throttles: 1 })
    // 600 a minute: the next call may go 100 ms later.
    const next = s.acquire('a')
    await pass(100)
    const unexplained = await next
    unexplained.release('throttled', { headers: requests(600, 300) })
    expect(state(s, 'a')).toMatchObject({ limit: 4, throttles: 2 })
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
