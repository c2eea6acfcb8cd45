import { describe, expect, it } from 'vitest'
import { SeedAimd } from '../../../../src/main/engine/pacing/aimd'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { controllerFactory } from '../../../../src/main/engine/pacing/controllers'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { SEED_AIMD } from '../../../../src/main/engine/core/types'

describe('controllerFactory', () => {
  it('builds the named controller with the partition and params it is given', () => {
    const seed = controllerFactory('seed')('p', { ...SEED_AIMD, initial: 3 })
    const adaptive = controllerFactory('adaptive')('q', { ...SEED_AIMD, initial: 5 })
    expect(seed).toBeInstanceOf(SeedAimd)
    expect(adaptive).toBeInstanceOf(AdaptiveController)
    expect([seed.partition, seed.limit, adaptive.partition, adaptive.limit]).toEqual([
      'p',
      3,
      'q',
      5,
    ])
  })

  it('plugs into the Scheduler, and names an unknown kind in its TypeError', async () => {
    const s = new Scheduler({
      createController: controllerFactory('adaptive'),
      params: { initial: 4 },
    })
    const permits = await Promise.all([1, 2, 3, 4].map(() => s.acquire('p')))
    for (const p of permits.slice(0, 2)) p.release('throttled')
    for (const p of permits.slice(2)) p.release('ok')
    // One cut for the burst, where the seed would have cut twice.
    expect(s.snapshot()[0]?.limit).toBe(2)
    expect(() => controllerFactory('fast' as never)).toThrow(/`controller`.*seed, adaptive.*`fast`/)
  })
})
