// Virtual time for the scheduler bench: @sinonjs/fake-timers replaces the global timers and Date,
// so Pacer's Scheduler, p-queue and Bottleneck all run on the same simulated clock, minutes of
// provider traffic pass in a fraction of a second, and every run gives the same numbers.
import FakeTimers from '@sinonjs/fake-timers'

/** Every run starts at the same instant, so RFC 3339 resets and HTTP-dates are realistic. */
export const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)

/**
 * Runs `body` with the global timers and Date faked from T0, firing timers one by one until the
 * body settles. Throws if the body waits on nothing (a deadlock would otherwise spin forever).
 */
export async function inVirtualTime<T>(body: () => Promise<T>): Promise<T> {
  const clock = FakeTimers.install({
    now: T0,
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    loopLimit: 10_000_000,
  })
  try {
    let settled = false
    const result = body().finally(() => {
      settled = true
    })
    let idle = 0
    while (!settled) {
      if (clock.countTimers() > 0) {
        idle = 0
        await clock.nextAsync()
      } else {
        // Let promise chains that do not involve timers run before deciding nothing is left.
        await new Promise((resolve) => setImmediate(resolve))
        if (++idle > 1000) throw new Error('virtual time: the run waits on nothing')
      }
    }
    return await result
  } finally {
    clock.uninstall()
  }
}

/** Resolves after `ms` of (virtual) time. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))
}
