// The desktop notification of a spend cap's thresholds: told once per cap, period and threshold
// (as the Budgets banner shows them), never for what was crossed before the app opened, and
// through Electron's Notification (the one mock: no Electron binary here).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { SpendCapView } from '../../../src/shared/contract'

const shown: { title: string; body: string }[] = []
let supported = true
vi.mock('electron', () => ({
  Notification: class {
    static isSupported = () => supported
    constructor(readonly options: { title: string; body: string }) {}
    show() {
      shown.push(this.options)
    }
  },
}))

import {
  CapNotices,
  watchBudgetNotifications,
} from '../../../src/main/desktop/budget-notifications'

const cap = (over: Partial<SpendCapView> = {}): SpendCapView => ({
  id: 1,
  taskType: null,
  provider: null,
  model: null,
  period: 'day',
  zone: 'UTC',
  periodKey: '2026-12-02',
  scope: 'all spend',
  capMicros: 20_000_000,
  spentMicros: 10_500_000,
  inDoubtMicros: 0,
  reservedMicros: 0,
  leftMicros: 9_500_000,
  percent: 52,
  warnedPercent: 50,
  ...over,
})

beforeEach(() => {
  shown.length = 0
  supported = true
})
afterEach(() => {
  vi.useRealTimers()
})

describe('CapNotices', () => {
  it('tells each new threshold once per cap and period, nothing of what the first read found', () => {
    const n = new CapNotices()
    expect(n.next([cap()])).toEqual([])
    expect(n.next([cap()])).toEqual([])
    const [eighty] = n.next([cap({ warnedPercent: 80, spentMicros: 16_010_000 })])
    expect(eighty).toEqual({
      title: 'Pacer: 80% of a spend cap',
      body: '80% of the $20.0000 cap on all spend for 2026-12-02 (UTC) reached: $16.0100 spent',
    })
    expect(n.next([cap({ warnedPercent: 80 })])).toEqual([])
    // A second cap, a new day, a changed amount: each starts its thresholds again.
    expect(n.next([cap({ warnedPercent: 80 }), cap({ id: 2, warnedPercent: 50 })])).toHaveLength(1)
    expect(n.next([cap({ periodKey: '2026-12-03', warnedPercent: 50 })])).toHaveLength(1)
    expect(n.next([cap({ periodKey: '2026-12-03', capMicros: 30_000_000 })])).toHaveLength(1)
    const [held] = n.next([
      cap({ periodKey: '2026-12-03', capMicros: 30_000_000, warnedPercent: 100 }),
    ])
    expect(held!.body).toMatch(/^100% of the \$30\.0000 cap .*; work it covers is held/)
  })
})

describe('watchBudgetNotifications', () => {
  it('reads the caps on a timer and shows one Electron notification per new threshold', async () => {
    vi.useFakeTimers()
    let caps = [cap()]
    const list = vi.fn(() => Promise.resolve(caps))
    const stop = watchBudgetNotifications(list, 1000)
    await vi.advanceTimersByTimeAsync(0)
    expect(list).toHaveBeenCalledTimes(1)
    expect(shown).toEqual([])
    caps = [cap({ warnedPercent: 80 })]
    await vi.advanceTimersByTimeAsync(1000)
    await vi.advanceTimersByTimeAsync(1000)
    expect(shown.map((s) => s.title)).toEqual(['Pacer: 80% of a spend cap'])
    // No notifications on this system: nothing is shown, nothing throws.
    supported = false
    caps = [cap({ warnedPercent: 100 })]
    await vi.advanceTimersByTimeAsync(1000)
    expect(shown).toHaveLength(1)
    stop()
    const reads = list.mock.calls.length
    await vi.advanceTimersByTimeAsync(5000)
    expect(list).toHaveBeenCalledTimes(reads)
  })
})
