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
    // Up to a quarter past the rate refused (60 a minute): past it, the pace doubles (below).
    for (let i = 0; i < 200 && (pace.perMinute ?? 0) * 1.01 <= 75; i++) {
      const before = pace.perMinute ?? 0
      pace.succeeded(t + 1000, t + 1)
      t += 1000
      steps.push((pace.perMinute ?? 0) / before)
    }
    expect(pace.perMinute).not.toBeNull()
    expect(steps.length).toBeGreaterThan(20)
    expect(steps.length).toBeLessThan(200)
    expect(steps[0]).toBeLessThan(1.02)
    expect(steps.at(-1)).toBeGreaterThan(steps[0]! + 0.01)
    expect(pace.perMinute).toBeGreaterThan(start * 1.5)
  })
})

describe('FloorPace: a rate that rose', () => {
  // 30 calls a minute (unless said), cut from 40 at t = 0; answers in 200 ms (64 calls a round
  // trip, where the pace ends, is 19,200 a minute).
  const cut = (refusedPerMinute: number | null, perMinute = 30) => {
    const pace = new FloorPace()
    pace.adopt({
      ratePerMs: perMinute / 60_000,
      refusedPerMs: refusedPerMinute === null ? null : refusedPerMinute / 60_000,
      cutAt: 0,
      sinceCut: 0,
      lastOkAt: null,
      workers: {},
    })
    return pace
  }
  /** A success every `everyMs` from `from` until `to`, each answered 200 ms after its send. */
  const succeed = (pace: FloorPace, from: number, to: number, everyMs: number) => {
    for (let t = from; t <= to; t += everyMs) pace.succeeded(t, t - 200)
  }

  it('below the rate refused by a quarter, grows by a few % a success', () => {
    const pace = cut(40)
    succeed(pace, 2000, 2000, 2000)
    const first = pace.perMinute ?? 0
    succeed(pace, 4000, 4000, 2000)
    expect((pace.perMinute ?? 0) / first).toBeGreaterThan(1.01)
    expect((pace.perMinute ?? 0) / first).toBeLessThan(1.1)
    // Above the rate refused but within the quarter (45 a minute against 40): still slow.
    const band = cut(40, 45)
    succeed(band, 2000, 2000, 2000)
    const before = band.perMinute ?? 0
    succeed(band, 3000, 5000, 1000)
    expect((band.perMinute ?? 0) / before).toBeGreaterThan(1.01)
    expect((band.perMinute ?? 0) / before).toBeLessThan(1.2)
  })

  it('past it with none refused, doubles every two seconds of successes', () => {
    const pace = cut(40)
    let t = 2000
    for (let i = 0; i < 100 && (pace.perMinute ?? 0) <= 50; i++) {
      pace.succeeded(t, t - 200)
      t += 2000
    }
    expect(pace.perMinute).not.toBeNull()
    // Slow up to the quarter past the rate refused: 30 -> 50 a minute took several successes.
    expect(t).toBeGreaterThan(8000)
    const past = pace.perMinute ?? 0
    // Four seconds of successes, one every 500 ms from the last: four times the rate.
    succeed(pace, t - 1500, t + 2000, 500)
    expect((pace.perMinute ?? 0) / past).toBeGreaterThan(3.9)
    expect((pace.perMinute ?? 0) / past).toBeLessThan(4.5)
    // Past a call and a half a round trip (450 a minute), where it ended before, it holds and
    // doubles on, until it allows 64 (19,200 a minute).
    succeed(pace, t + 2250, t + 4500, 250)
    expect(pace.perMinute ?? 0).toBeGreaterThan(450)
    let last = 0
    for (let i = 0, at = t + 4750; i < 400 && pace.perMinute !== null; i++, at += 250) {
      last = pace.perMinute
      pace.succeeded(at, at - 200)
    }
    expect(pace.perMinute).toBeNull()
    expect(last).toBeGreaterThan(19_200 / 2)
    expect(last).toBeLessThan(19_200)
  })

  it('the rate refused is the partition’s: another worker continues from it', () => {
    const a = cut(40)
    succeed(a, 2000, 2000, 2000)
    const b = new FloorPace('b')
    b.adopt(a.learned(2000))
    expect(a.learned(2000).refusedPerMs).toBeCloseTo(40 / 60_000, 12)
    // Below a quarter past it, both grow slowly, the same.
    a.succeeded(2500, 2300)
    b.succeeded(2500, 2300)
    expect(b.perMinute).toBeCloseTo(a.perMinute ?? 0, 9)
    expect((b.perMinute ?? 0) / 30).toBeLessThan(1.3)
  })

  it('a pace a cycle started has no rate refused: it doubles from its first success', () => {
    const pace = cut(null)
    succeed(pace, 2000, 2000, 2000)
    const first = pace.perMinute ?? 0
    succeed(pace, 2500, 6000, 500)
    expect((pace.perMinute ?? 0) / first).toBeGreaterThan(3.9)
    const started = new FloorPace()
    started.succeeded(200, 0)
    started.refused(300, 100)
    expect(started.learned(300).refusedPerMs).not.toBeNull()
    started.start(400, 30 / 60_000)
    expect(started.learned(400).refusedPerMs).toBeNull()
  })

  it('a pace started again long after one ended counts no idle time as successes', () => {
    const pace = new FloorPace()
    pace.succeeded(1000, 0)
    pace.refused(1100, 500)
    // Successes every 200 ms until the pace ends (at 64 calls a round trip).
    let t = 1100
    for (let i = 0; i < 500 && pace.perMinute !== null; i++) {
      t += 200
      pace.succeeded(t + 1000, t)
    }
    expect(pace.perMinute).toBeNull()
    // Five minutes later a cycle starts it again; its first success, half a second later, counts
    // that half second (x1.19), not ten round trips of 1 s since the last success (x32: the pace
    // would end at once).
    const restart = t + 300_000
    pace.start(restart, 30 / 60_000)
    pace.succeeded(restart + 500, restart + 1)
    expect(pace.perMinute ?? 0).toBeGreaterThan(30 * 1.15)
    expect(pace.perMinute ?? 0).toBeLessThan(30 * 1.25)
  })

  it('a success after idle time doubles the pace once at most', () => {
    const pace = cut(null)
    pace.succeeded(2000, 1000)
    const first = pace.perMinute ?? 0
    // Answers in 1 s, the next success 20 s later: ten round trips' gap (x32 were they ten
    // seconds of successes: the pace would end), one doubling.
    pace.succeeded(22_000, 21_000)
    expect((pace.perMinute ?? 0) / first).toBeLessThanOrEqual(2.001)
    expect((pace.perMinute ?? 0) / first).toBeGreaterThan(1.9)
  })

  it('a record from before the rule (no rate refused, a cut) waits for a quarter past its rate', () => {
    const pace = new FloorPace()
    pace.adopt({
      ratePerMs: 30 / 60_000,
      cutAt: 0,
      sinceCut: 0,
      lastOkAt: null,
      workers: {},
    })
    succeed(pace, 2000, 2000, 2000)
    const first = pace.perMinute ?? 0
    succeed(pace, 2500, 6000, 500)
    expect((pace.perMinute ?? 0) / first).toBeLessThan(1.2)
    expect(pace.learned(6000).refusedPerMs).toBeCloseTo(30 / 60_000, 12)
  })
})
