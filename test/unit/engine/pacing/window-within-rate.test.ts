// The window's spread stands aside when the announced rate takes the whole window within a
// millisecond even enforced call by call (window-spread.ts withinRate): a budget of a billion a
// minute cannot be overrun by a burst, and spreading its calls only cost wake-ups (bench:overhead's
// shared SQLite row: a deferred hand-over is one more transaction). A rate that could be overrun
// is still spread. Fake timers for the wake-ups and a fake clock for now(), moved together 1 ms
// at a time; 48 slots, every call answered 400 ms after it went.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { controllerFactory } from '../../../../src/main/engine/pacing/controllers'
import { Scheduler, type Permit } from '../../../../src/main/engine/pacing/scheduler'
import { fakeClock } from '../../../helpers/clock'

const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

afterEach(() => {
  vi.useRealTimers()
})

const budget = (perMinute: number) => ({
  'x-ratelimit-limit-requests': String(perMinute),
  'x-ratelimit-remaining-requests': String(perMinute - 1),
  'x-ratelimit-reset-requests': '1ms',
})

/** The most calls admitted in one millisecond after the first window was answered. */
async function mostInOneMs(headers: Record<string, string>): Promise<number> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const clock = fakeClock()
  const s = new Scheduler({
    clock,
    createController: controllerFactory('adaptive'),
    pacing: { random: () => 0.5 },
    params: { min: 48, max: 48, initial: 48 },
  })
  const held: Permit[] = []
  const sentPerMs = new Map<number, number>()
  const want = () =>
    void s.acquire('p').then(
      (p) => {
        held.push(p)
        sentPerMs.set(p.sentAt, (sentPerMs.get(p.sentAt) ?? 0) + 1)
      },
      () => undefined,
    )
  for (let i = 0; i < 96; i++) want()
  for (let t = 0; t < 1000; t++) {
    await flush()
    clock.advance(1)
    vi.advanceTimersByTime(1)
    await flush()
    const due = held.filter((p) => p.sentAt + 400 <= clock.now())
    for (const permit of due) {
      held.splice(held.indexOf(permit), 1)
      permit.release('ok', { headers })
      want()
    }
  }
  await flush()
  s.close()
  const [first, ...after] = [...sentPerMs.values()]
  expect(first).toBe(48)
  return Math.max(...after)
}

describe('the window spread and a rate no burst can overrun', () => {
  it('a billion requests a minute: each answered window goes again in the same millisecond', async () => {
    expect(await mostInOneMs(budget(1_000_000_000))).toBe(48)
  })

  it('600,000 requests a minute (10 a ms, under the window): the window still goes spread', async () => {
    expect(await mostInOneMs(budget(600_000))).toBeLessThan(24)
  })
})
