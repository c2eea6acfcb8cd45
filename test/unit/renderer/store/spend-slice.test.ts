import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { CommandResult, Reply, TypeRollupView } from '../../../../src/shared/contract'
import { SPEND_RANGES, sinceFor } from '../../../../src/renderer/src/store/spend-slice'
import { until } from '../../../helpers/until'
import { deferred, fail, ok, storeOnFakePacer } from './fake-pacer'

const NOW = 1_700_000_000_000
const totals = (runs: number) => ({ taskType: 'total', runs }) as TypeRollupView
const rollup = (runs: number): CommandResult<'ledger:rollup'> => ({
  byType: [],
  totals: totals(runs),
})

beforeEach(() => {
  // Only the date is fake: the range's since is exact, the waits below are real.
  vi.useFakeTimers({ now: NOW, toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('sinceFor', () => {
  it('goes back each range from now, and not at all for All', () => {
    expect(sinceFor('15m', NOW)).toBe(NOW - 15 * 60_000)
    expect(sinceFor('7d', NOW)).toBe(NOW - 7 * 24 * 3_600_000)
    expect(sinceFor('all', NOW)).toBeUndefined()
    expect(SPEND_RANGES.map((r) => r.id)).toEqual(['15m', '1h', '24h', '7d', 'all'])
  })
})

describe('spend slice', () => {
  it('refreshes the rollup and the chart for the range, and exports with the same since', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('ledger:rollup', () => ok(rollup(3)))
    fake.on('ledger:over-time', () => ok([]))
    fake.on('ledger:export', () => ok({ path: '/tmp/x.csv', rows: 3 }))
    await store.getState().refreshSpend()
    const since = NOW - 3_600_000
    expect(fake.inputs('ledger:rollup')).toEqual([{ since }])
    expect(fake.inputs('ledger:over-time')).toEqual([{ since, bucketMs: 60_000 }])
    expect(store.getState()).toMatchObject({
      spendSince: since,
      spendLoading: false,
      spendStale: false,
      spendError: null,
      rollup: rollup(3),
      // A time range is not all-time: the header's totals stay as they were.
      ledgerTotals: null,
    })
    vi.setSystemTime(NOW + 60_000)
    await store.getState().exportLedger('events')
    expect(fake.inputs('ledger:export')).toEqual([{ kind: 'events', since }])
  })

  it('takes the all-time rollup as the header totals', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('ledger:rollup', () => ok(rollup(9)))
    fake.on('ledger:over-time', () => ok([]))
    store.getState().setSpendRange('all')
    await until(() => store.getState().spendLoading === false)
    expect(fake.inputs('ledger:rollup')).toEqual([{}])
    expect(fake.inputs('ledger:over-time')).toEqual([{ bucketMs: 3_600_000 }])
    expect(store.getState().ledgerTotals).toEqual(totals(9))
  })

  it('drops a slower answer to an older range', async () => {
    const { store, fake } = storeOnFakePacer()
    const slow = deferred<Reply<CommandResult<'ledger:rollup'>>>()
    fake.on('ledger:rollup', () => slow.promise)
    fake.on('ledger:over-time', () => ok([]))
    const first = store.getState().refreshSpend()
    fake.on('ledger:rollup', () => ok(rollup(2)))
    store.getState().setSpendRange('24h')
    slow.resolve(ok(rollup(1)))
    await first
    await until(() => store.getState().rollup !== null)
    expect(store.getState().rollup).toEqual(rollup(2))
    expect(store.getState().spendSince).toBe(NOW - 24 * 3_600_000)
  })

  it('shows the first error and keeps what did load', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('ledger:rollup', () => ok(rollup(4)))
    fake.on('ledger:over-time', () => fail('bad_bucket'))
    await store.getState().refreshSpend()
    expect(store.getState()).toMatchObject({
      rollup: rollup(4),
      spendError: { code: 'bad_bucket' },
    })
  })

  it('marks itself stale once, and takes live totals', () => {
    const { store } = storeOnFakePacer()
    store.setState({ spendStale: false })
    store.getState().markSpendStale()
    expect(store.getState().spendStale).toBe(true)
    store.getState().setLedgerTotals(totals(5))
    expect(store.getState().ledgerTotals).toEqual(totals(5))
  })
})
