// Waits longer than one Node timer holds (2^31-1 ms): the fake timers overflow as Node's do (to
// 1 ms), so a wait armed without the cap would end at once here too.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MAX_TIMER_MS, sleep, timerMs } from '../../../../src/main/engine/core/timers'
import { StoreCalls } from '../../../../src/main/engine/pacing/store-calls'

const DAY = 86_400_000

afterEach(() => {
  vi.useRealTimers()
})

describe('timerMs', () => {
  it('keeps a delay Node holds, cuts a longer or infinite one to 2^31-1 ms', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647)
    expect(timerMs(1500)).toBe(1500)
    expect(timerMs(1.2)).toBe(2)
    expect(timerMs(MAX_TIMER_MS)).toBe(MAX_TIMER_MS)
    expect(timerMs(MAX_TIMER_MS + 1)).toBe(MAX_TIMER_MS)
    expect(timerMs(99_999_999_000)).toBe(MAX_TIMER_MS)
    expect(timerMs(Number.POSITIVE_INFINITY)).toBe(MAX_TIMER_MS)
  })

  it('a delay of 0, below 0 or NaN is 1 ms, as Node has it', () => {
    expect(timerMs(0)).toBe(1)
    expect(timerMs(-5)).toBe(1)
    expect(timerMs(Number.NaN)).toBe(1)
  })
})

describe('sleep', () => {
  it('sleeps 40 days in pieces a timer holds, and not a millisecond less', async () => {
    vi.useFakeTimers()
    const delays: number[] = []
    const real = globalThis.setTimeout
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      delays.push(ms)
      return real(fn, ms)
    }) as typeof setTimeout)
    let done = false
    void sleep(40 * DAY).then(() => (done = true))
    await vi.advanceTimersByTimeAsync(40 * DAY - 1)
    expect(done).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(done).toBe(true)
    expect(delays.length).toBe(2)
    expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER_MS)
  })

  it('ends at once with the signal reason when aborted, leaving no timer', async () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    const slept = sleep(30 * DAY, controller.signal)
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1000)
    controller.abort(new Error('stop'))
    await expect(slept).rejects.toThrow('stop')
    expect(vi.getTimerCount()).toBe(0)
  })

  it('an aborted signal rejects before any timer', async () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    await expect(sleep(10, controller.signal)).rejects.toThrow('gone')
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('StoreCalls.armRetry', () => {
  it('a pause a year ahead read from the store wakes after 2^31-1 ms, not at once', () => {
    vi.useFakeTimers()
    const wake = vi.fn()
    const calls = new StoreCalls({
      partition: 'p',
      poll: null,
      wake,
      stale: () => {},
      warn: () => {},
    })
    const now = Date.now()
    calls.armRetry(now + 365 * DAY, now)
    vi.advanceTimersByTime(1000)
    expect(wake).not.toHaveBeenCalled()
    vi.advanceTimersByTime(MAX_TIMER_MS - 1000)
    expect(wake).toHaveBeenCalledTimes(1)
    calls.close()
  })
})
