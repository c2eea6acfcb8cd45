// The pace's learned share of an announced rate, on explicit clocks (SendPace is pure: every
// method takes `now`).
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'

const ONE_CALL = costOf({}, 1)

/** A pace announced at `perMinute` requests, narrowed to one call at a time, then cut once. */
function cutPace(perMinute: number): SendPace {
  const pace = new SendPace()
  pace.announce('requests', perMinute / 60_000, 0)
  // The first unexplained refusal narrows the burst to one call; the second cuts the share.
  pace.refusedUnexplained(1, 2)
  pace.refusedUnexplained(3, 4)
  return pace
}

const rateAt = (pace: SendPace, now: number) => {
  pace.delayMs(now, ONE_CALL)
  return pace.view().perMinute.requests as number
}

describe('SendPace: the share a refusal cut regrows', () => {
  it('per call on a slow rate: seconds without calls do not bring back the rate that was refused', () => {
    const pace = cutPace(30)
    const cut = rateAt(pace, 4)
    expect(cut).toBeCloseTo(30 * 0.98 * 0.8, 5)
    // Ten seconds later, no call sent: by time alone it would be back at the full rate.
    expect(rateAt(pace, 10_004)).toBeCloseTo(cut, 5)
    // Five calls, one every two seconds: half a cut's worth regrown, not all of it.
    for (let i = 1; i <= 5; i++) pace.take(4 + i * 2000, ONE_CALL)
    const half = rateAt(pace, 10_004)
    expect(half).toBeGreaterThan(cut * 1.1)
    expect(half).toBeLessThan(cut * 1.13)
    // Ten calls: the whole cut regrown.
    for (let i = 6; i <= 10; i++) pace.take(4 + i * 2000, ONE_CALL)
    expect(rateAt(pace, 20_004)).toBeCloseTo(30 * 0.98, 5)
  })

  it('per second on a fast rate: many calls in a moment do not bring it back at once', () => {
    const pace = cutPace(3000)
    const cut = rateAt(pace, 4)
    for (let i = 1; i <= 50; i++) pace.take(4 + i * 20, ONE_CALL)
    // One second, fifty calls: x1.025, as time allows, not x1.25^5.
    expect(rateAt(pace, 1004)).toBeCloseTo(cut * 1.025, 3)
  })
})

describe('SendPace: one call at a time on tokens', () => {
  it('after a pause holds less than a mean call: two small calls do not go in one instant', () => {
    const pace = new SendPace()
    // 60,000 tokens a minute: one a ms; narrowed to one call at a time.
    pace.announce('tokens', 1, 0)
    pace.refusedUnexplained(1, 2)
    const mean = { ...costOf({}, 1), tokens: 1000 }
    for (let i = 0; i < 20; i++) pace.take(10 + i * 2000, mean)
    // A minute idle, then two calls of half the mean. Holding a whole mean call, both went at
    // once; holding 700 tokens, the second waits for its 500 less the 200 left (at 0.98 a ms).
    const half = { ...mean, tokens: 500 }
    const later = 200_000
    expect(pace.delayMs(later, half)).toBe(0)
    pace.take(later, half)
    const wait = pace.delayMs(later, half)
    expect(wait).toBeGreaterThan(290)
    expect(wait).toBeLessThan(320)
    // A call larger than what is held goes once it is full, and leaves a debt the next one pays.
    pace.take(later + wait, half)
    expect(pace.delayMs(later + wait + 10_000, mean)).toBe(0)
    pace.take(later + wait + 10_000, mean)
    expect(pace.delayMs(later + wait + 10_000, mean)).toBeGreaterThan(990)
  })
})

describe('SendPace: the window a refusal showed', () => {
  it('keeps the window where the first refusal came, narrows it, and shares it', () => {
    const pace = new SendPace()
    pace.announce('requests', 600 / 60_000, 0)
    expect(pace.windowMs).toBe(60_000)
    // Refused where the announced bucket was ten seconds short: one call at a time, and the window
    // enforced is ten seconds.
    pace.refusedUnexplained(1, 2, 10_000)
    expect(pace.burstMs).toBe(0)
    expect(pace.windowMs).toBe(10_000)
    // A later episode refused at 8 s: the window is no more than that (and the share is cut).
    pace.refusedUnexplained(3, 4, 8_000)
    expect(pace.windowMs).toBe(8_000)
    // A refusal at a longer one does not widen it.
    pace.refusedUnexplained(5, 6, 9_000)
    expect(pace.windowMs).toBe(8_000)
    const other = new SendPace()
    other.adopt(pace.learned(), 6)
    expect(other.windowMs).toBe(8_000)
    expect(other.learned()).toEqual(pace.learned())
  })

  it('holds no less than the room the headers show, never above its burst, never lowered', () => {
    const pace = new SendPace()
    pace.announce('requests', 60 / 60_000, 0)
    // The announced minute: room lent lifts the level, up to the burst (60 calls) and no more.
    for (let i = 0; i < 60; i++) pace.take(0, ONE_CALL)
    expect(pace.delayMs(0, ONE_CALL)).toBeGreaterThan(0)
    pace.raise('requests', 50, 0)
    expect(pace.delayMs(0, { ...ONE_CALL, requests: 50 })).toBe(0)
    pace.raise('requests', 500, 0)
    expect(pace.delayMs(0, { ...ONE_CALL, requests: 60 })).toBe(0)
    for (let i = 0; i < 60; i++) pace.take(0, ONE_CALL)
    expect(pace.delayMs(0, ONE_CALL)).toBeGreaterThan(0)
    pace.refusedUnexplained(1, 2, 10_000)
    for (let i = 0; i < 3; i++) pace.take(1000 + i, ONE_CALL)
    expect(pace.delayMs(1003, ONE_CALL)).toBeGreaterThan(1000)
    // One call at a time, the headers show room for three calls: they may go now.
    pace.raise('requests', 3, 1003)
    expect(pace.delayMs(1003, ONE_CALL)).toBe(0)
    pace.take(1003, ONE_CALL)
    pace.take(1003, ONE_CALL)
    pace.take(1003, ONE_CALL)
    // A smaller room lowers nothing: the pace's own debt stands.
    pace.raise('requests', -5, 1003)
    expect(pace.delayMs(1003, ONE_CALL)).toBeGreaterThan(1000)
  })

  it('the share that is ours: what others leave, less the cuts', () => {
    const pace = new SendPace()
    pace.announce('requests', 60 / 60_000, 0)
    expect(pace.ourShare('requests', 0)).toBe(1)
    pace.refusedUnexplained(1, 2)
    pace.refusedUnexplained(3, 4)
    expect(pace.ourShare('requests', 4)).toBeCloseTo(0.8, 6)
  })
})
