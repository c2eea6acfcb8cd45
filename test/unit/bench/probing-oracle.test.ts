/**
 * The oracle that finds rises by probing (bench/scheduler/probing-oracle.ts): told every fall at
 * once, a rise only when one call past the cap it knows is taken, a probe every callsPerProbe /
 * cap round trips. In virtual time, on the family's provider with a fixed 1 s latency.
 */
import { describe, expect, it } from 'vitest'
import type { FamilyProvider, ProviderDraw } from '../../../bench/scheduler/family'
import { raceDraw } from '../../../bench/scheduler/family-race'
import { probingOracle } from '../../../bench/scheduler/probing-oracle'
import { T0 } from '../../../bench/scheduler/virtual-time'
import { familyDraw } from '../../helpers/family-draw'

/** Every call by when it was sent (ms from T0), and calls in flight at the provider every 100 ms. */
async function race(callsPerProbe: number, over: Partial<ProviderDraw>) {
  const oracle = probingOracle(callsPerProbe)
  const sends: { at: number; id: number; status: number }[] = []
  const inflight = new Map<number, number>()
  const result = await raceDraw(familyDraw({ durationMs: 20_000, ...over }), {
    ...oracle,
    drive: (run) => {
      const provider = run.provider as FamilyProvider
      const timer = setInterval(() => inflight.set(Date.now() - T0, provider.inflight()), 100)
      const call = run.call.bind(run)
      return oracle
        .drive({
          ...run,
          call: (task) => {
            const at = Date.now() - T0
            return call(task).then((answer) => {
              sends.push({ at, id: task.id, status: answer.status })
              return answer
            })
          },
        })
        .finally(() => clearInterval(timer))
    },
  })
  const refusedAt = sends.filter((s) => s.status !== 200).map((s) => s.at)
  const ok = sends.filter((s) => s.status === 200).map((s) => s.id)
  return { result, inflight, refusedAt, ok }
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
