// The Scheduler's samples for the live chart, and close().
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { SchedulerSample } from '../../../../src/main/engine/pacing/scheduler'
import { Scheduler, SchedulerClosedError } from '../../../../src/main/engine/pacing/scheduler'
import { fakeClock, state } from './scheduler-helpers'

afterEach(() => {
  vi.useRealTimers()
})

describe('Scheduler samples and close', () => {
  it('emits samples every interval while active, one idle sample, then stops', async () => {
    vi.useFakeTimers()
    const clock = fakeClock(0)
    const s = new Scheduler({ clock, sampleIntervalMs: 100 })
    const samples: SchedulerSample[] = []
    s.on('sample', (x) => samples.push(x))
    vi.advanceTimersByTime(500)
    expect(samples).toEqual([])

    const permit = await s.acquire('p')
    clock.advance(100)
    vi.advanceTimersByTime(100)
    clock.advance(100)
    vi.advanceTimersByTime(100)
    expect(samples.map((x) => x.ts)).toEqual([100, 200])
    expect(samples[0]?.partitions).toMatchObject([{ partition: 'p', inflight: 1, waiting: 0 }])

    permit.release('throttled')
    clock.advance(100)
    vi.advanceTimersByTime(100)
    expect(samples).toHaveLength(3)
    expect(samples[2]?.partitions).toMatchObject([{ inflight: 0, throttles: 1 }])
    vi.advanceTimersByTime(1000)
    expect(samples).toHaveLength(3)

    await s.acquire('p')
    vi.advanceTimersByTime(100)
    expect(samples).toHaveLength(4)
    s.close()
    vi.advanceTimersByTime(1000)
    expect(samples).toHaveLength(4)
  })

  it("the sampling timer does not keep the process alive (unref'd)", async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const before = timeouts()
    const s = new Scheduler({ sampleIntervalMs: 50 })
    const permit = await s.acquire('p')
    expect(timeouts()).toBe(before)
    permit.release('ok')
    s.close()
  })

  it('close() rejects waiters, stops admitting, and lets held permits release', async () => {
    const s = new Scheduler({ clock: fakeClock(), params: { initial: 1 } })
    const held = await s.acquire('p')
    const waiting = s.acquire('p', new AbortController().signal)
    s.close()
    await expect(waiting).rejects.toBeInstanceOf(SchedulerClosedError)
    await expect(s.acquire('p')).rejects.toBeInstanceOf(SchedulerClosedError)
    expect(state(s, 'p')).toMatchObject({ waiting: 0, inflight: 1 })
    held.release('ok')
    expect(state(s, 'p').inflight).toBe(0)
    s.close()
  })
})
