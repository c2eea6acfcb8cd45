// The floor's learned pace finds a rate nobody announces that rose (floor-pace.ts): the Scheduler
// against a provider enforcing its rate per second (a bucket of a second's calls, no headers), whose
// rate rises thirtyfold after a minute at half a call a second. Fake timers for the wake-ups and
// a fake clock for now(), moved together in steps of 10 ms.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { controllerFactory } from '../../../../src/main/engine/pacing/controllers'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { fakeClock } from '../../../helpers/clock'

const T0 = 1_000_000
const RISE_AT = 60_000
const LOW_PER_MIN = 30
const HIGH_PER_MIN = 900
const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

afterEach(() => {
  vi.useRealTimers()
})

/**
 * A bucket of a second's requests (at least one) refilled at the rate of the moment: served, or
 * refused (429).
 */
function secondBucket(now: () => number) {
  let level = 1
  let last = now()
  return (): boolean => {
    const t = now()
    const perMs = (t - T0 < RISE_AT ? LOW_PER_MIN : HIGH_PER_MIN) / 60_000
    level = Math.min(Math.max(1, perMs * 1000), level + perMs * (t - last))
    last = t
    if (level < 1) return false
    level -= 1
    return true
  }
}

describe('the floor’s pace, when a rate nobody announces rises', () => {
  it('serves half the raised rate within twenty seconds of the rise', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const clock = fakeClock(T0)
    const s = new Scheduler({
      clock,
      createController: controllerFactory('adaptive'),
      pacing: { random: () => 0.5 },
    })
    const take = secondBucket(() => clock.now())
    // Successes per second since T0.
    const served: number[] = []
    let stop = false
    const worker = async () => {
      while (!stop) {
        const permit = await s.acquire('p')
        if (stop) {
          permit.release('ok')
          break
        }
        const ok = take()
        await new Promise((resolve) => setTimeout(resolve, ok ? 200 : 50))
        permit.release(ok ? 'ok' : 'throttled')
        if (ok) {
          const second = Math.floor((clock.now() - T0) / 1000)
          served[second] = (served[second] ?? 0) + 1
        }
      }
    }
    const workers = Array.from({ length: 40 }, () => worker())
    for (let t = 0; t < RISE_AT + 40_000; t += 10) {
      clock.advance(10)
      vi.advanceTimersByTime(10)
      await flush()
    }
    stop = true
    // Calls out finish, then the waiters are let go.
    vi.advanceTimersByTime(1000)
    await flush()
    s.close()
    await Promise.allSettled(workers)
    // Before the rise, about the low rate was served (half a call a second).
    const before = served.slice(30, 60).reduce((a, b) => a + (b ?? 0), 0) / 30
    expect(before).toBeGreaterThan(0.3)
    expect(before).toBeLessThanOrEqual(0.55)
    // The first second after the rise serving half the raised rate (7.5 a second).
    const rise = RISE_AT / 1000
    const found = served.findIndex((n, i) => i >= rise && (n ?? 0) >= HIGH_PER_MIN / 120)
    expect(found).toBeGreaterThan(rise)
    // 11 s with the rule, 29 s without it.
    expect(found - rise).toBeLessThanOrEqual(20)
  })
})
