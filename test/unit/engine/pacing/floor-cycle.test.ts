// A cycle down to the floor (floor-cycle.ts): pure, every call takes `now`; and the hook that
// starts the floor's pace from it (PartitionPacing.observeLevel), on a virtual clock.
import { describe, expect, it } from 'vitest'
import { FloorCycle } from '../../../../src/main/engine/pacing/floor-cycle'
import { FloorPace } from '../../../../src/main/engine/pacing/floor-pace'
import {
  PartitionPacing,
  checkPacingOptions,
} from '../../../../src/main/engine/pacing/partition-pacing'

const T0 = 1_000_000

/**
 * One cycle of a rate of about 1.3 calls per round trip read as a cap: from `at`, the limit
 * serves `above` calls at 3 in flight, then a refusal leaves it at the floor, which serves `atFloor`
 * calls until `at + periodMs`. Returns what each observation returned.
 */
function cycle(
  observe: (now: number, level: number, ok: boolean) => number | null,
  at: number,
  { above = 6, atFloor = 4, periodMs = 4000 } = {},
): (number | null)[] {
  const out: (number | null)[] = []
  for (let i = 0; i < above; i++) out.push(observe(at + i * 100, 3, true))
  out.push(observe(at + 1000, 3, false))
  for (let i = 0; i < atFloor; i++) out.push(observe(at + 1100 + i * 500, 1, true))
  out.push(observe(at + periodMs - 1, 1, false))
  return out
}

describe('FloorCycle', () => {
  it('the third fall to the floor within 15 s from a level that served says the rate served', () => {
    const c = new FloorCycle()
    const observe = (now: number, level: number, ok: boolean) => c.observe(now, level, 1, ok)
    // The first fall comes at the first answer that finds the limit at the floor.
    expect(cycle(observe, T0).every((r) => r === null)).toBe(true)
    expect(cycle(observe, T0 + 4000).every((r) => r === null)).toBe(true)
    const third = cycle(observe, T0 + 8000).filter((r) => r !== null)
    // Falls at T0 + 1100 and T0 + 9100: 20 successes between them (10 a cycle), cut to 0.8.
    expect(third).toHaveLength(1)
    expect(third[0]).toBeCloseTo((0.8 * 20) / 8000, 9)
  })

  it("a cap of one's refused probes are no cycle: nothing served above the floor", () => {
    const c = new FloorCycle()
    const observe = (now: number, level: number, ok: boolean) => c.observe(now, level, 1, ok)
    for (let k = 0; k < 10; k++) {
      const got = cycle(observe, T0 + k * 4000, { above: 1 })
      expect(got.every((r) => r === null)).toBe(true)
    }
  })

  it('falls further apart than 15 s are a cap that moved, not a cycle', () => {
    const c = new FloorCycle()
    const observe = (now: number, level: number, ok: boolean) => c.observe(now, level, 1, ok)
    for (let k = 0; k < 5; k++) {
      const got = cycle(observe, T0 + k * 8000, { periodMs: 8000 })
      expect(got.every((r) => r === null)).toBe(true)
    }
  })
})

describe('PartitionPacing.observeLevel', () => {
  it('a cycle to the floor starts the floor pace, which spaces the calls', () => {
    const pacing = new PartitionPacing('p', checkPacingOptions({ random: () => 0.5 }))
    const observe = (now: number, level: number, ok: boolean) => {
      pacing.observeLevel(now, level, 1, ok ? 'ok' : 'throttled')
      return null
    }
    for (let k = 0; k < 3; k++) cycle(observe, T0 + k * 4000)
    expect(pacing.floorPacing).toBe(true)
    pacing.admit(T0 + 12_000)
    // 0.8 x 20 calls in 8 s: one call every 500 ms.
    expect(pacing.delayMs(T0 + 12_000)).toBe(500)
  })

  it('not with pauses off', () => {
    const off = new PartitionPacing('p', checkPacingOptions({ pause: false }))
    const observe = (now: number, level: number, ok: boolean) => {
      off.observeLevel(now, level, 1, ok ? 'ok' : 'throttled')
      return null
    }
    for (let k = 0; k < 3; k++) cycle(observe, T0 + k * 4000)
    expect(off.floorPacing).toBe(false)
  })
})

/**
 * Calls every 250 ms, each answered 500 ms after it went, until the pace ends (checked to end):
 * the pace it had last.
 */
function lastPaceBeforeItEnds(pace: FloorPace, from: number): number {
  let t = from
  let last = pace.perMinute ?? 0
  for (let i = 0; i < 2000 && pace.perMinute !== null; i++) {
    last = pace.perMinute
    t += 250
    pace.admitted(t)
    pace.succeeded(t + 500, t)
  }
  expect(pace.perMinute).toBeNull()
  return last
}

describe('FloorPace above one call per round trip', () => {
  it('started at two calls per round trip, it holds until it allows three', () => {
    const pace = new FloorPace()
    pace.admitted(T0)
    pace.succeeded(T0 + 500, T0)
    // srtt 500 ms: two calls per round trip.
    pace.start(T0 + 500, 2 / 500)
    pace.admitted(T0 + 500)
    pace.succeeded(T0 + 1000, T0 + 500)
    expect(pace.perMinute).not.toBeNull()
    const last = lastPaceBeforeItEnds(pace, T0 + 500)
    // It ended growing past three calls per round trip (360 a minute at 500 ms).
    expect(last).toBeGreaterThan(300)
    expect(last).toBeLessThan(360)
  })

  it('started by a refusal at the floor, it holds up to 64 calls per round trip', () => {
    const pace = new FloorPace()
    pace.admitted(T0)
    pace.succeeded(T0 + 500, T0)
    pace.refused(T0 + 600, T0 + 500)
    const last = lastPaceBeforeItEnds(pace, T0 + 600)
    // 7,680 a minute is 64 calls per 500-ms round trip (a call and a half, 180, ended it before:
    // the concurrency limit then sent in one instant what a rate's bucket refuses).
    expect(last).toBeGreaterThan(7680 / 2)
    expect(last).toBeLessThan(7680)
  })
})

describe('FloorCycle, once it started the pace', () => {
  it('two falls within a minute of the start start it again', () => {
    const c = new FloorCycle()
    const observe = (now: number, level: number, ok: boolean) => c.observe(now, level, 1, ok)
    for (let k = 0; k < 3; k++) cycle(observe, T0 + k * 4000)
    // The pace ended; 30 s later the limit cycles again.
    expect(cycle(observe, T0 + 40_000).every((r) => r === null)).toBe(true)
    const again = cycle(observe, T0 + 44_000).filter((r) => r !== null)
    expect(again).toHaveLength(1)
    expect(again[0]).toBeCloseTo((0.8 * 10) / 4000, 9)
    // A minute after that start, three falls again.
    for (let k = 0; k < 2; k++) {
      expect(cycle(observe, T0 + 110_000 + k * 4000).every((r) => r === null)).toBe(true)
    }
    expect(cycle(observe, T0 + 118_000).some((r) => r !== null)).toBe(true)
  })
})
