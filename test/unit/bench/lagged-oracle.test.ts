/**
 * The oracle told the capacity late (bench/scheduler/lagged-oracle.ts): it follows a drawn
 * provider's changes exactly, but a lag after them, and still answers every task once. In
 * virtual time, on the family's provider with a fixed 1 s latency, told 2 round trips (2 s) late.
 */
import { describe, expect, it } from 'vitest'
import type { ProviderDraw } from '../../../bench/scheduler/family'
import { laggedOracle } from '../../../bench/scheduler/lagged-oracle'
import { familyDraw } from '../../helpers/family-draw'
import { recordedRace } from '../../helpers/recorded-race'

/** The oracle told 2 round trips late, raced on a draw, with its calls. */
const race = (over: Partial<ProviderDraw>) =>
  recordedRace(laggedOracle(2), familyDraw({ durationMs: 20_000, ...over }))

/** A change at 5.5 s, off the whole seconds the answers come back at: its lag ends at 7.5 s. */
const steps = (from: number, to: number) => [
  { fromMs: 0, value: from },
  { fromMs: 5500, value: to },
]

describe('the oracle told the capacity 2 round trips late', () => {
  it('holds a cap that rose from 2 to 6 at 5.5 s at 2 until 7.5 s, then fills it at once', async () => {
    const { result, inflight } = await race({ phases: steps(2, 6) })
    for (const at of [5600, 6500, 7400]) expect(inflight.get(at)).toBe(2)
    for (const at of [7600, 8500, 9500]) expect(inflight.get(at)).toBe(6)
    // Its regain of the rise is the lag, 2 round trips, and nothing was refused.
    expect(result.regainRtts).toEqual([2])
    expect(result.throttledShare).toBe(0)
  })

  it('is refused on a cap that fell from 6 to 2 at 5.5 s until 7.5 s only, and answers each task once', async () => {
    const { result, sends, refused } = await race({ phases: steps(6, 2) })
    expect(refused(0, 5500)).toBe(0)
    expect(refused(5500, 7500)).toBeGreaterThan(0)
    // A refusal holds the sends until a call is answered: at most one refused per answer in the
    // lag (two waves of at most 6), where resending at once would be refused every few ms.
    expect(refused(5500, 7500)).toBeLessThanOrEqual(12)
    expect(refused(7500, Infinity)).toBe(0)
    const ok = sends.filter((s) => s.status === 200).map((s) => s.id)
    expect(ok).toHaveLength(new Set(ok).size)
    expect(new Set(ok).size).toBe(100)
    // Slots above the cap are not counted as used: what was allowed was used.
    expect(result.utilization).toBeGreaterThan(0.99)
  })

  it('sends at the old rate for 2 s after a rate limit rose from 60 to 600 a minute at 5.5 s', async () => {
    // A bucket of one call: no burst saved up, so calls go exactly at the rate the view holds.
    const { result, served } = await race({
      binding: 'requests',
      burst: 'single',
      phases: steps(60, 600),
      tasks: 150,
    })
    expect(served(1000, 5000)).toBe(4)
    // One a second for the lag, though the provider took ten.
    expect(served(5500, 7500)).toBeLessThanOrEqual(2)
    expect(served(7500, 9500)).toBeGreaterThanOrEqual(19)
    expect(result.throttledShare).toBe(0)
  })
})
