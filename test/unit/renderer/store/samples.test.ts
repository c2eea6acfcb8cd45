import { describe, expect, it } from 'vitest'
import type { PartitionView, SchedulerSample } from '../../../../src/shared/contract'
import { ringFor, SampleRing, seedSamples } from '../../../../src/renderer/src/store/samples'

const sample = (ts: number, limit: number, inflight = 0): SchedulerSample => ({
  partition: 'p',
  ts,
  limit,
  concurrency: Math.floor(limit),
  inflight,
  waiting: 0,
  throttles: 0,
})

const view = (partition: string, limit: number, inflight: number): PartitionView =>
  ({ partition, limit, concurrency: Math.floor(limit), inflight, waiting: 0 }) as PartitionView

describe('SampleRing.since', () => {
  it('carries the last sample before the window in at its left edge', () => {
    const ring = new SampleRing()
    ring.push(sample(1_000, 4))
    ring.push(sample(2_000, 6))
    // Idle since: nothing in the window, yet the line has a value.
    expect(ring.since(10_000)).toMatchObject({ ts: [10_000], limit: [6] })
    ring.push(sample(12_000, 8))
    expect(ring.since(10_000)).toMatchObject({ ts: [10_000, 12_000], limit: [6, 8] })
    expect(ring.since(0)).toMatchObject({ ts: [1_000, 2_000, 12_000] })
  })

  it('keeps times ascending when a seed was stamped after a later-arriving sample', () => {
    const ring = new SampleRing()
    ring.push(sample(5_000, 3), true)
    ring.push(sample(4_900, 2))
    ring.push(sample(5_200, 4))
    expect(ring.since(0)).toMatchObject({ ts: [5_000, 5_200], limit: [3, 4] })
  })
})

describe('seedSamples', () => {
  it('gives an idle partition a first point without counting it as received', () => {
    seedSamples([view('seed:a', 7.5, 2)], 50_000)
    const ring = ringFor('seed:a')
    expect(ring.received).toBe(0)
    expect(ring.since(0)).toMatchObject({ ts: [50_000], limit: [7.5], inflight: [2] })
  })

  it('adds nothing when the engine sent a sample just now, a point after a gap', () => {
    const ring = ringFor('seed:b')
    ring.push({ ...sample(50_000, 3), partition: 'seed:b' })
    seedSamples([view('seed:b', 9, 0)], 50_500)
    expect(ring.size).toBe(1)
    seedSamples([view('seed:b', 9, 0)], 80_000)
    expect(ring.since(0)).toMatchObject({ ts: [50_000, 80_000], limit: [3, 9] })
    expect(ring.received).toBe(1)
  })
})

describe('SampleRing.merge: the database’s history', () => {
  it('goes before live samples that arrived first, in time order, not counted as received', () => {
    const ring = new SampleRing()
    ring.push(sample(50_000, 6, 2))
    ring.merge([sample(10_000, 2, 1), sample(20_000, 4, 3), sample(50_000, 9, 9)])
    expect(ring.since(0)).toMatchObject({
      ts: [10_000, 20_000, 50_000],
      limit: [2, 4, 6],
      inflight: [1, 3, 2],
    })
    expect(ring.received).toBe(1)
    expect(ring.firstTs).toBe(10_000)
    // The last second anything was in flight: the view lists the busiest first by it.
    ring.push(sample(60_000, 6, 0))
    expect(ring.lastBusyTs()).toBe(50_000)
  })
})
