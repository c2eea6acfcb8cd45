/**
 * The oracle that finds rises by probing (bench/scheduler/probing-oracle.ts): told every fall at
 * once, a rise only when one call past the cap it knows is taken, a probe every callsPerProbe /
 * cap round trips. In virtual time, on the family's provider with a fixed 1 s latency.
 */
import { describe, expect, it } from 'vitest'
import type { ProviderDraw } from '../../../bench/scheduler/family'
import { probingOracle } from '../../../bench/scheduler/probing-oracle'
import { familyDraw } from '../../helpers/family-draw'
import { recordedRace } from '../../helpers/recorded-race'

/** The oracle raced on a draw, with its calls: refused ones by when they went, served ones by task. */
async function race(callsPerProbe: number, over: Partial<ProviderDraw>, backoff = false) {
  const oracle = probingOracle(callsPerProbe, backoff)
  const raced = await recordedRace(oracle, familyDraw({ durationMs: 20_000, ...over }))
  const refusedAt = raced.sends.filter((s) => s.status !== 200).map((s) => s.at)
  const ok = raced.sends.filter((s) => s.status === 200).map((s) => s.id)
  return { ...raced, refusedAt, ok }
}

/** A change at 5.5 s, off the whole seconds the answers come back at. */
const steps = (from: number, to: number) => [
  { fromMs: 0, value: from },
  { fromMs: 5500, value: to },
]

describe('the oracle that probes for rises', () => {
  it('finds a cap that rose from 2 to 6 at 5.5 s only at its next probe, at 8 s, then fills it', async () => {
    // A probe per 8 calls at a cap of 2: every 4 round trips, at 4 s (refused) and 8 s (taken).
    const { result, inflight, refusedAt, ok } = await race(8, { phases: steps(2, 6) })
    expect(refusedAt.filter((at) => at < 5500)).toEqual([4000])
    for (const at of [5600, 6500, 7900]) expect(inflight.get(at)).toBe(2)
    for (const at of [8500, 9500]) expect(inflight.get(at)).toBe(6)
    expect(result.regainRtts).toEqual([2.5])
    expect(ok).toHaveLength(100)
    expect(new Set(ok).size).toBe(100)
  })

  it('is told a fall at once: a cap from 6 to 2 refuses none of its calls', async () => {
    // Probes too rare to come in the draw: nothing but the fall could be refused.
    const { result, refusedAt, inflight } = await race(1000, { phases: steps(6, 2) })
    expect(refusedAt).toEqual([])
    expect(inflight.get(4500)).toBe(6)
    expect(inflight.get(7000)).toBe(2)
    expect(result.utilization).toBeGreaterThan(0.99)
  })

  it('backing off, probes a round trip after a fall, and finds a rise right after it', async () => {
    // 4 slots, 2 from 5.5 s, 6 from 6.2 s; a probe per 1,000 calls would wait 250 round trips.
    const phases = [
      { fromMs: 0, value: 4 },
      { fromMs: 5500, value: 2 },
      { fromMs: 6200, value: 6 },
    ]
    const spaced = await race(1000, { phases })
    expect(spaced.inflight.get(8000)).toBe(2)
    expect(spaced.refusedAt).toEqual([])
    // Backing off: probes at 1, 3 s (refused: 4 slots), then a round trip after the fall, 6.5 s.
    const backing = await race(1000, { phases }, true)
    expect(backing.refusedAt.filter((at) => at < 6500)).toEqual([1000, 3000])
    expect(backing.inflight.get(6400)).toBe(2)
    expect(backing.inflight.get(6600)).toBe(6)
    // Taken, the probe starts the waits over: 1, 2, then 4 round trips after it, each refused.
    expect(backing.refusedAt.filter((at) => at >= 6500 && at < 14_000)).toEqual([
      7500, 9500, 13_500,
    ])
  })

  it('spends about one refusal per callsPerProbe calls on a cap that never rises', async () => {
    // A cap of 4, a probe per 20 calls: every 5 round trips, each refused; 4 calls a round trip.
    const { result } = await race(20, {
      phases: [{ fromMs: 0, value: 4 }],
      durationMs: 100_000,
      tasks: 400,
    })
    expect(result.throttledShare).toBeGreaterThan(0.8 / 21)
    expect(result.throttledShare).toBeLessThan(1.2 / 21)
    expect(result.utilization).toBeGreaterThan(0.99)
  })
})

describe('the oracle that probes for a rate nobody announces', () => {
  // A requests bucket of a second's worth, no headers, 60 then 600 a minute (or the reverse).
  const rate = (from: number, to: number) => ({
    binding: 'requests' as const,
    burst: 'second' as const,
    headers: 'none' as const,
    phases: steps(from, to),
    tasks: 150,
  })

  it('finds a rate that rose from 60 to 600 a minute only at its next probe, then sends at it', async () => {
    // A probe per 4 calls: the call after every fourth goes at once (at 3 s, refused), and the
    // rise at 5.5 s is found by the one at 7 s, not before.
    const { refusedAt, served, ok } = await race(4, rate(60, 600))
    expect(refusedAt.filter((at) => at < 5500)).toEqual([3000])
    expect(served(0, 5500)).toBe(6)
    expect(served(5500, 7000)).toBe(1)
    // Taken, the probe tells it the rate: the bucket's ten calls go in that instant.
    expect(served(7000, 7001)).toBeGreaterThanOrEqual(10)
    expect(served(8000, 10_000)).toBeGreaterThanOrEqual(18)
    expect(new Set(ok).size).toBe(150)
    expect(ok).toHaveLength(150)
  })

  it('is told a rate that fell from 600 to 60 a minute at once: none of its calls refused', async () => {
    const { result, refusedAt, served } = await race(1000, rate(600, 60))
    expect(refusedAt).toEqual([])
    expect(served(1000, 5000)).toBeGreaterThanOrEqual(38)
    expect(served(7000, 10_000)).toBeLessThanOrEqual(3)
    expect(result.utilization).toBeGreaterThan(0.99)
  })
})
