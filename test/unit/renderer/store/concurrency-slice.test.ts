import { describe, expect, it, vi } from 'vitest'
import type { LimitChangeView, PartitionView, PauseView } from '../../../../src/shared/contract'
import { pauseBands } from '../../../../src/renderer/src/features/concurrency/pause-bands'
import { selectLiveLoad } from '../../../../src/renderer/src/store'
import { ALL_PARTITIONS } from '../../../../src/renderer/src/store/concurrency-slice'
import { ringFor } from '../../../../src/renderer/src/store/samples'
import { fail, ok, storeOnFakePacer } from './fake-pacer'

const change = (partition: string, ts: number, to = 4): LimitChangeView => ({
  partition,
  ts,
  from: to - 1,
  to,
  reason: 'ok',
  cause: 'growth',
})

const partition = (name: string, patch: Partial<PartitionView> = {}): PartitionView =>
  ({
    partition: name,
    limit: 4.5,
    concurrency: 4,
    inflight: 1,
    waiting: 0,
    lastChange: null,
    pausedUntil: null,
    ...patch,
  }) as PartitionView

const pause = (partition: string, ts: number, until: number): PauseView => ({
  partition,
  ts,
  until,
  reason: `paused until ${new Date(until).toISOString()}`,
})

describe('concurrency slice', () => {
  it('loads the partitions sorted, seeds the change log and the charts', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('scheduler:get', () =>
      ok([
        partition('zeta/m', { lastChange: change('zeta/m', 20) }),
        partition('alpha/m', { lastChange: change('alpha/m', 10) }),
      ]),
    )
    await store.getState().loadScheduler()
    const s = store.getState()
    expect(s.schedulerLoaded).toBe(true)
    expect(s.partitions.map((p) => p.partition)).toEqual(['alpha/m', 'zeta/m'])
    expect(s.limitChanges.map((c) => c.ts)).toEqual([20, 10])
    // An idle engine sends no samples: the load puts a first point on each chart.
    expect(ringFor('alpha/m').size).toBeGreaterThan(0)
  })

  it('reports a failed load and stays not loaded', async () => {
    const { store, fake } = storeOnFakePacer()
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    fake.on('scheduler:get', () => fail('engine_down'))
    await store.getState().loadScheduler()
    expect(store.getState().schedulerLoaded).toBe(false)
    expect(store.getState().toasts[0]).toMatchObject({ title: 'Could not load the scheduler' })
    log.mockRestore()
  })

  it('merges partition updates by name', () => {
    const { store } = storeOnFakePacer()
    store.getState().setPartitions([partition('b'), partition('a')])
    store.getState().setPartitions([partition('b', { inflight: 7 })])
    expect(store.getState().partitions.map((p) => [p.partition, p.inflight])).toEqual([
      ['a', 1],
      ['b', 7],
    ])
  })

  it('keeps limit changes newest first, each once, at most 200', () => {
    const { store } = storeOnFakePacer()
    store.getState().addLimitChanges([change('p', 1), change('p', 3)])
    store.getState().addLimitChanges([change('p', 3), change('p', 2)])
    expect(store.getState().limitChanges.map((c) => c.ts)).toEqual([3, 2, 1])
    const before = store.getState().limitChanges
    store.getState().addLimitChanges([change('p', 2)])
    expect(store.getState().limitChanges).toBe(before)
    store.getState().addLimitChanges(Array.from({ length: 300 }, (_, i) => change('q', 100 + i)))
    expect(store.getState().limitChanges).toHaveLength(200)
    expect(store.getState().limitChanges[0]!.ts).toBe(399)
  })

  it('counts accepted parameter changes per partition, all of them for *', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('scheduler:set', () => ok([partition('a'), partition('b')]))
    await store.getState().setSchedulerParams('a', { max: 8 })
    await store.getState().setSchedulerParams(ALL_PARTITIONS, { min: 2 })
    expect(store.getState().paramChanges).toEqual({ a: 2, b: 1 })
    expect(fake.inputs('scheduler:set')).toEqual([
      { partition: 'a', params: { max: 8 } },
      { partition: '*', params: { min: 2 } },
    ])
    fake.on('scheduler:set', () => fail('invalid_input'))
    expect(await store.getState().setSchedulerParams('a', { max: 0 })).toEqual(
      fail('invalid_input'),
    )
    expect(store.getState().paramChanges).toEqual({ a: 2, b: 1 })
  })

  it('sums the header numbers over partitions, naming the only one', () => {
    const { store } = storeOnFakePacer()
    expect(selectLiveLoad(store.getState())).toEqual({
      inflight: 0,
      limit: 0,
      partitions: 0,
      only: null,
    })
    store.getState().setPartitions([partition('a', { inflight: 2, limit: 3.9 })])
    expect(selectLiveLoad(store.getState())).toMatchObject({ inflight: 2, limit: 3, only: 'a' })
    store.getState().setPartitions([partition('b', { inflight: 1, limit: 2 })])
    expect(selectLiveLoad(store.getState())).toEqual({
      inflight: 3,
      limit: 5,
      partitions: 2,
      only: null,
    })
  })

  it('keeps pauses newest first, each once; a load shows a pause under way from now', async () => {
    const { store, fake } = storeOnFakePacer()
    store.getState().addPauses([pause('p', 1, 5), pause('p', 3, 9)])
    store.getState().addPauses([pause('p', 3, 9), pause('q', 2, 4)])
    expect(store.getState().pauses.map((p) => [p.partition, p.ts])).toEqual([
      ['p', 3],
      ['q', 2],
      ['p', 1],
    ])
    const until = Date.now() + 60_000
    fake.on('scheduler:get', () =>
      ok([partition('r', { pausedUntil: until }), partition('s', { pausedUntil: null })]),
    )
    await store.getState().loadScheduler()
    const shown = store.getState().pauses.filter((p) => p.partition === 'r')
    expect(shown).toMatchObject([
      { until, reason: `paused until ${new Date(until).toISOString()}` },
    ])
    // Loaded again while the same pause runs: it is not added twice.
    await store.getState().loadScheduler()
    expect(store.getState().pauses.filter((p) => p.partition === 'r')).toHaveLength(1)
    expect(store.getState().pauses.some((p) => p.partition === 's')).toBe(false)
  })

  it('a pause under way at load keeps the reason the partition gave for it, not an older one', async () => {
    const { store, fake } = storeOnFakePacer()
    const until = Date.now() + 60_000
    const iso = new Date(until).toISOString()
    const why = '429 said wait 60000 ms: the announced budget is empty'
    fake.on('scheduler:get', () =>
      ok([
        partition('r', { pausedUntil: until, pauseReason: `paused until ${iso} (${why})` }),
        // Its last reason is of an earlier pause: this one (another worker's) is not explained.
        partition('s', {
          pausedUntil: until,
          pauseReason: 'paused until 2020-01-01T00:00:00.000Z (x)',
        }),
      ]),
    )
    await store.getState().loadScheduler()
    const reasons = Object.fromEntries(store.getState().pauses.map((p) => [p.partition, p.reason]))
    expect(reasons).toEqual({ r: `paused until ${iso} (${why})`, s: `paused until ${iso}` })
  })

  it("the chart shades a partition's pauses inside its window, cut at now", () => {
    const pauses = [
      pause('p', 10_000, 20_000),
      pause('p', 1_000, 4_000),
      pause('q', 10_000, 20_000),
      pause('p', 50_000, 90_000),
    ]
    // Window [5 s, 60 s]: the first pause ended before it, the last one still runs at 60 s.
    expect(pauseBands(pauses, 'p', 5_000, 60_000)).toEqual([
      [10, 20],
      [50, 60],
    ])
    expect(pauseBands(pauses, 'p', 5_000, 8_000)).toEqual([])
  })
})
