/**
 * The pacing rules on providers they were not tuned for, each on the fake clock: the real
 * Scheduler (adaptive controller, pace, pauses) drives a simulated provider of the bench's family
 * as the runner does, in virtual time. Each rule is also checked against the behaviour it replaced,
 * so the test fails if the rule stops doing its work.
 */
import { describe, expect, it } from 'vitest'
import type { ProviderDraw } from '../../../../bench/scheduler/family'
import { raceDraw } from '../../../../bench/scheduler/family-race'
import { CONTENDERS, PACER_PAUSING } from '../../../../bench/scheduler/contenders'
import { familyDraw } from '../../../helpers/family-draw'

const PACER = CONTENDERS.find((c) => c.name.startsWith('Pacer (adaptive'))!
const SEED = CONTENDERS.find((c) => c.name.startsWith('seed'))!

/** A cap of 8 behind half-second calls, after a 20 s warm-up, unless a test says otherwise. */
function draw(over: Partial<ProviderDraw>): ProviderDraw {
  return familyDraw({
    seed: 3,
    warmupMs: 20_000,
    phases: [{ fromMs: 0, value: 8 }],
    latency: { kind: 'fixed', medianMs: 500 },
    tasks: 1500,
    ...over,
  })
}

describe('pacing on the fake clock', () => {
  it('regains a capacity that triples right after a fall within 20 round trips, refusing less than the seed', async () => {
    const d = draw({
      phases: [
        { fromMs: 0, value: 6 },
        { fromMs: 15_000, value: 2 },
        { fromMs: 30_000, value: 6 },
      ],
      durationMs: 60_000,
    })
    const pacer = await raceDraw(d, PACER)
    const seed = await raceDraw(d, SEED)
    expect(pacer.regainRtts).toHaveLength(1)
    expect(pacer.regainRtts[0]).toBeLessThanOrEqual(20)
    // The seed grows back without memory and pays for it in refusals.
    expect(pacer.throttledShare).toBeLessThan(0.03)
    expect(seed.throttledShare).toBeGreaterThan(pacer.throttledShare)
  })

  it('paces a per-minute limit enforced per second with at most 1 % refused', async () => {
    for (const headers of ['openai', 'anthropic'] as const) {
      const d = draw({
        binding: 'requests',
        phases: [
          { fromMs: 0, value: 600 },
          { fromMs: 30_000, value: 300 },
          { fromMs: 60_000, value: 900 },
        ],
        durationMs: 90_000,
        burst: 'second',
        headers,
        refusal: { status: 429, retry: 'exact' },
        tasks: 1400,
      })
      const pacer = await raceDraw(d, PACER)
      expect(pacer.throttledShare).toBeLessThanOrEqual(0.01)
      expect(pacer.utilization).toBeGreaterThan(0.9)
    }
  })

  it('a lone refusal with retry-after among successes does not stall the partition', async () => {
    // A cap of 8, each refusal saying "retry-after: 1" while the other 7 calls keep succeeding.
    const d = draw({ latency: { kind: 'fixed', medianMs: 300 }, tasks: 2500 })
    const lone = await raceDraw(d, PACER)
    const pausing = await raceDraw(d, PACER_PAUSING)
    expect(lone.utilization).toBeGreaterThan(0.9)
    // Pausing the whole partition for each probe's refusal leaves slots idle for seconds.
    expect(lone.utilization).toBeGreaterThan(pausing.utilization + 0.02)
  })

  it('a slow quantized limit with a tenant the headers hide: the learned share regrows per call, refusing at most 4 %', async () => {
    // 36 then 30 requests a minute, one at a time (quantized), a tenant taking 12 % that
    // `remaining` shows one answer late (draw #100038 of the family). Regrown per second, the
    // share was back at the rate refused within five calls: 7 % refused.
    const d = draw({
      warmupMs: 30_000,
      binding: 'requests',
      phases: [
        { fromMs: 0, value: 36 },
        { fromMs: 4392, value: 30 },
      ],
      durationMs: 83_281,
      burst: 'single',
      headers: 'anthropic',
      lag: true,
      tenant: [{ fromMs: 0, value: 0.12 }],
      refusal: { status: 529, retry: 'none' },
      latency: { kind: 'lognormal', medianMs: 206 },
      tasks: 200,
    })
    const pacer = await raceDraw(d, PACER)
    expect(pacer.throttledShare).toBeLessThanOrEqual(0.04)
    expect(pacer.utilization).toBeGreaterThan(0.75)
  })
})
