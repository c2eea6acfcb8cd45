// The Scheduler's admission: never beyond the limit, FIFO per partition, aborts, releases and
// their outcomes, stops. Limits and params: scheduler-limits.test.ts; samples and close:
// scheduler-sampling.test.ts; the pacing option: scheduler-pacing-option.test.ts.
import { getEventListeners } from 'node:events'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ConcurrencyController, OutcomeContext } from '../../../../src/main/engine/pacing/aimd'
import { SeedAimd } from '../../../../src/main/engine/pacing/aimd'
import type { Permit } from '../../../../src/main/engine/pacing/scheduler'
import { PartitionStoppedError, Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import type { LimitChange, Outcome } from '../../../../src/main/engine/core/types'
import { OUTCOMES, fakeClock, flush, state, tracked } from './scheduler-helpers'

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

  it('listens to the signal only while the call waits for its slot', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 1, max: 1 } })
    const ctrl = new AbortController()
    const listeners = () => getEventListeners(ctrl.signal, 'abort').length
    const first = await s.acquire('p', ctrl.signal)
    // Admitted at once: nothing was added to the signal.
    expect(listeners()).toBe(0)
    const second = s.acquire('p', ctrl.signal)
    expect(listeners()).toBe(1)
    first.release('ok')
    await (await second).release('ok')
    // Admitted after a wait: its listener went with it.
    expect(listeners()).toBe(0)
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
})
