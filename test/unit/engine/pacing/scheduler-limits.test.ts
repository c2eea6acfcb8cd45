// The Scheduler's limits moving at once: a cut applies to the next admission, a raise (a success,
// setParams) admits waiters at once, '*' reaches every partition and the later ones.
import { describe, expect, it } from 'vitest'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import type { LimitChange } from '../../../../src/main/engine/core/types'
import { fakeClock, flush, state, tracked } from './scheduler-helpers'

describe('Scheduler admission', () => {
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

  it('getParams does not create a partition', () => {
    const s = new Scheduler({ params: { max: 7 } })
    expect(s.getParams('x').max).toBe(7)
    expect(s.snapshot()).toEqual([])
  })
})
