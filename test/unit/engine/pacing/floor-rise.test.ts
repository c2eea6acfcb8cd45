// The floor's learned pace finds a rate nobody announces that rose (floor-pace.ts): the Scheduler
// against a provider enforcing its rate per second (a bucket of a second's calls, no headers), whose
// rate rises thirtyfold after a minute at half a call a second; and against one enforcing it per
// call (a bucket of a single call), a call a second rising sixteenfold, answers in a second. Fake
// timers for the wake-ups and a fake clock for now(), moved together in steps of 10 ms.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { controllerFactory } from '../../../../src/main/engine/pacing/controllers'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { fakeClock } from '../../../helpers/clock'

const T0 = 1_000_000
const RISE_AT = 60_000
const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

afterEach(() => {
  vi.useRealTimers()
})

interface Rise {
  lowPerMin: number
  highPerMin: number
  /** What the bucket holds: `burstMs` of its refill, a single call at least. */
  burstMs: number
  answerMs: number
}

/** A bucket refilled at the rate of the moment: served, or refused (429). */
function bucket(now: () => number, r: Rise) {
  let level = 1
  let last = now()
  return (): boolean => {
    const t = now()
    const perMs = (t - T0 < RISE_AT ? r.lowPerMin : r.highPerMin) / 60_000
    level = Math.min(Math.max(1, perMs * r.burstMs), level + perMs * (t - last))
    last = t
    if (level < 1) return false
    level -= 1
    return true
  }
}

/**
 * The Scheduler, 40 workers, against the bucket for 40 s past the rise: the rate served before
 * it (a second, on average over the 30 s before), and the seconds from the rise to the first that
 * served half the raised rate.
 */
async function race(r: Rise): Promise<{ before: number; found: number }> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const clock = fakeClock(T0)
  const s = new Scheduler({
    clock,
    createController: controllerFactory('adaptive'),
    pacing: { random: () => 0.5 },
  })
  const take = bucket(() => clock.now(), r)
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
      await new Promise((resolve) => setTimeout(resolve, ok ? r.answerMs : 50))
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
  vi.advanceTimersByTime(5000)
  await flush()
  s.close()
  await Promise.allSettled(workers)
  const before = served.slice(30, 60).reduce((a, b) => a + (b ?? 0), 0) / 30
  const rise = RISE_AT / 1000
  const found = served.findIndex((n, i) => i >= rise && (n ?? 0) >= r.highPerMin / 120)
  return { before, found: found === -1 ? Infinity : found - rise }
}

describe('the floor’s pace, when a rate nobody announces rises', () => {
  it('per second: serves half the raised rate within twenty seconds of the rise', async () => {
    const { before, found } = await race({
      lowPerMin: 30,
      highPerMin: 900,
      burstMs: 1000,
      answerMs: 200,
    })
    // Before the rise, about the low rate was served (half a call a second).
    expect(before).toBeGreaterThan(0.3)
    expect(before).toBeLessThanOrEqual(0.55)
    // 11 s with the rule, 29 s without it.
    expect(found).toBeGreaterThan(0)
    expect(found).toBeLessThanOrEqual(20)
  })

  it('per call: a pace past a call and a half per round trip holds, and finds the rise', async () => {
    // Two thirds of a call a second, answers in a second: refused at one call out, so the floor's
    // pace holds; then 16 calls a second, in a bucket of a single call. A pace that ended at a
    // call and a half per round trip left the limit to send calls in one instant, each pair
    // refused and cut by half: half the raised rate was never served in the 40 s.
    const { before, found } = await race({
      lowPerMin: 40,
      highPerMin: 960,
      burstMs: 0,
      answerMs: 1000,
    })
    expect(before).toBeGreaterThan(0.4)
    expect(before).toBeLessThanOrEqual(0.7)
    // 35 s with the pace held to 64 calls per round trip; never (within 40 s) without.
    expect(found).toBeGreaterThan(0)
    expect(found).toBeLessThan(40)
  })
})
