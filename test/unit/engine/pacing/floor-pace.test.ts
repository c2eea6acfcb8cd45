// The floor's learned pace (floor-pace.ts), on its own: pure, every method takes `now`.
import { describe, expect, it } from 'vitest'
import { FloorPace } from '../../../../src/main/engine/pacing/floor-pace'

describe('FloorPace', () => {
  it('holds nothing until a refusal, then spaces calls at 0.8 of one per round trip', () => {
    const pace = new FloorPace()
    pace.admitted(0)
    pace.succeeded(500, 0)
    expect(pace.perMinute).toBeNull()
    expect(pace.delayMs(500)).toBe(0)
    pace.admitted(500)
    pace.refused(520, 500)
    // srtt 500 ms: 2 calls a second at the floor, 1.6 from now, one every 625 ms.
    expect(pace.perMinute).toBeCloseTo(96, 6)
    expect(pace.delayMs(520)).toBe(605)
    expect(pace.delayMs(1125)).toBe(0)
  })

  it('cuts once per episode: refusals of calls sent before the cut say nothing new', () => {
    const pace = new FloorPace()
    pace.succeeded(1000, 0)
    pace.refused(2000, 1500)
    const after = pace.perMinute
    pace.refused(2100, 1900)
    expect(pace.perMinute).toBe(after)
    pace.refused(3000, 2500)
    expect(pace.perMinute).toBeCloseTo((after ?? 0) * 0.8, 6)
  })

  it('grows slowly right after a cut and faster the longer no refusal comes', () => {
    const pace = new FloorPace()
    pace.succeeded(1000, 0)
    pace.refused(1000, 500)
    const start = pace.perMinute ?? 0
    const steps: number[] = []
    let t = 1000
    for (let i = 0; i < 40; i++) {
      const before = pace.perMinute ?? 0
      pace.succeeded(t + 1000, t)
      t += 1000
      steps.push((pace.perMinute ?? 0) / before)
    }
    expect(steps[0]).toBeLessThan(1.02)
    expect(steps[39]).toBeGreaterThan(steps[0]! + 0.01)
    expect(pace.perMinute).toBeGreaterThan(start * 1.5)
  })
})
