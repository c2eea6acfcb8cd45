// The Scheduler feeds the controller the announced rate: with a budget announced, the limit grows
// past the default ceiling of 64 to what the rate needs in flight (rate x round trip, x1.5).
// Fake timers for the wake-ups and a fake clock for now(), moved together, 5 ms at a time; each
// call answered 2 s after it went (a window's calls go spread over half a round trip until a
// refusal shows the window enforced: window-spread.ts).
import { afterEach, describe, expect, it, vi } from 'vitest'
import { controllerFactory } from '../../../../src/main/engine/pacing/controllers'
import { Scheduler, type Permit } from '../../../../src/main/engine/pacing/scheduler'
import { fakeClock } from '../../../helpers/clock'

const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

afterEach(() => {
  vi.useRealTimers()
})

/**
 * 2 s calls for 24 s, every slot used, each answered with `headers` 2 s after it went (as a
 * provider answers them: one by one, as they were sent): the limit it reaches.
 */
async function limitAfter(headers: Record<string, string> | undefined): Promise<number> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const clock = fakeClock()
  const s = new Scheduler({
    clock,
    createController: controllerFactory('adaptive'),
    pacing: { random: () => 0.5 },
    params: { initial: 4 },
  })
  const held: Permit[] = []
  const want = () =>
    void s.acquire('p').then(
      (p) => held.push(p),
      () => undefined,
    )
  for (let i = 0; i < 600; i++) want()
  const STEP = 5
  for (let t = 0; t < 24_000; t += STEP) {
    await flush()
    clock.advance(STEP)
    vi.advanceTimersByTime(STEP)
    await flush()
    const due = held.filter((p) => p.sentAt + 2_000 <= clock.now())
    for (const permit of due) {
      held.splice(held.indexOf(permit), 1)
      permit.release('ok', headers && { headers })
      want()
    }
  }
  await flush()
  const limit = s.snapshot()[0]?.concurrency ?? 0
  s.close()
  return limit
}

describe('the announced rate raises the ceiling', () => {
  it('6,000 requests a minute answered in 2 s: past 64, towards the 200 the rate needs', async () => {
    const headers = {
      'x-ratelimit-limit-requests': '6000',
      'x-ratelimit-remaining-requests': '5000',
      'x-ratelimit-reset-requests': '10s',
    }
    // The budget paces the calls at the rate: the limit grows while it is used, up to 300 (x1.5
    // the 200 in flight the rate needs over the round trip measured: answers come at 5 ms steps).
    const limit = await limitAfter(headers)
    expect(limit).toBeGreaterThan(150)
    expect(limit).toBeLessThanOrEqual(302)
  })

  it('nothing announced: the ceiling of 64 holds', async () => {
    expect(await limitAfter(undefined)).toBe(64)
  })
})
