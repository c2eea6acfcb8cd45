// What others spend, learned from `remaining` between answers: a whole number, so each reading is
// up to a unit off; the errors must cancel, not read as a tenant. Explicit clocks (SendPace is
// pure).
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'
import { seededRandom } from '../../../helpers/random'

const ONE_CALL = costOf({}, 1)
const LIMIT = 124

/**
 * Calls at the rate that is ours, 400 or 570 ms apart, against a provider bucket that refills at
 * LIMIT a minute, of which a tenant spends `tenantShare`; every answer reports `remaining` as a
 * whole number. Returns the pace's rate a minute after `calls` calls.
 */
function paceAfter(calls: number, tenantShare: number): number {
  const pace = new SendPace()
  const ratePerMs = LIMIT / 60_000
  pace.announce('requests', ratePerMs, 0)
  let level = 60
  let now = 0
  let spent = 0
  for (let i = 0; i < calls; i++) {
    const gap = i % 3 === 0 ? 570 : 400
    level += ratePerMs * gap * (1 - tenantShare)
    now += gap
    level -= 1
    spent += 1
    pace.take(now, ONE_CALL)
    pace.observe('requests', now, Math.floor(level), LIMIT, spent)
    // Keep the bucket below 90 % whatever the pace: what others spend is measurable there.
    level = Math.min(level, 80)
  }
  pace.delayMs(now, ONE_CALL)
  return pace.view().perMinute.requests as number
}

describe('SendPace: what others spend, from whole-number readings', () => {
  it('reads no tenant where there is none (#200063: 5-10 % of the rate lost to rounding)', () => {
    expect(paceAfter(300, 0)).toBeGreaterThan(LIMIT * 0.97)
  })

  it('still learns a tenant that spends 30 % of the rate', () => {
    const rate = paceAfter(300, 0.3)
    expect(rate).toBeGreaterThan(LIMIT * 0.6)
    expect(rate).toBeLessThan(LIMIT * 0.8)
  })
})

describe('SendPace: what others spend, on tokens', () => {
  /**
   * Calls of 1,000 tokens a mean at 60,000 a minute, each read with a `remaining` a call's size
   * off either way (a call counted late or early), at random: the rate after `calls`.
   */
  function tokenPaceAfter(calls: number, tenantShare: number): number {
    const pace = new SendPace()
    const limit = 60_000
    const ratePerMs = limit / 60_000
    pace.announce('tokens', ratePerMs, 0)
    const random = seededRandom(7)
    let level = 30_000
    let now = 0
    let spent = 0
    for (let i = 0; i < calls; i++) {
      const size = i % 2 === 0 ? 500 : 1500
      const gap = size / ratePerMs / (1 - tenantShare)
      now += gap
      level += ratePerMs * gap * (1 - tenantShare) - size
      spent += size
      pace.take(now, { ...costOf({}, 1), tokens: size })
      const off = random() < 0.5 ? 1000 : -1000
      pace.observe('tokens', now, Math.floor(level + off), limit, spent)
    }
    pace.delayMs(now, { ...costOf({}, 1), tokens: 1000 })
    return pace.view().perMinute.tokens as number
  }

  it('reads no tenant where there is none, however calls are counted late or early', () => {
    // Over one call's refill an estimate is as much as the whole rate off; held at 0 or more, the
    // average kept the half of its errors above 0, and the pace ran a fifth under the rate.
    expect(tokenPaceAfter(400, 0)).toBeGreaterThan(60_000 * 0.9)
  })

  it('reads over at least two mean calls of refill', () => {
    const pace = new SendPace()
    pace.announce('tokens', 1, 0)
    pace.take(0, { ...costOf({}, 1), tokens: 1000 })
    const rate = () => {
      pace.delayMs(10_000, { ...costOf({}, 1), tokens: 1 })
      return pace.view().perMinute.tokens as number
    }
    const full = rate()
    pace.observe('tokens', 0, 20_000, 60_000, 0)
    // 1.5 s: a call and a half of refill; `remaining` says others spent half of it. Too short.
    pace.observe('tokens', 1500, 20_750, 60_000, 0)
    expect(rate()).toBe(full)
    // 2.5 s from the first reading: read.
    pace.observe('tokens', 2500, 21_250, 60_000, 0)
    expect(rate()).toBeLessThan(full * 0.9)
  })

  it('still learns a tenant that spends 30 % of the rate', () => {
    const rate = tokenPaceAfter(400, 0.3)
    expect(rate).toBeGreaterThan(60_000 * 0.55)
    expect(rate).toBeLessThan(60_000 * 0.8)
  })
})

describe('SendPace: a bucket near full is an estimate of what others spend', () => {
  it('counts readings of a bucket a short window keeps near full (#100004: room never lent)', () => {
    const pace = new SendPace()
    const limit = 60_000
    pace.announce('tokens', limit / 60_000, 0)
    let spent = 0
    for (let i = 1; i <= 10; i++) {
      pace.take(i * 3000, { ...ONE_CALL, tokens: 1000 })
      spent += 1000
      // Spent at less than the refill: the minute's bucket stays near full.
      pace.observe('tokens', i * 3000, limit - 1000, limit, spent)
    }
    expect(pace.othersSamples('tokens')).toBeGreaterThanOrEqual(5)
  })
})

describe("SendPace: the other workers' sends are not a tenant's", () => {
  /**
   * Three workers on one announced bucket of 124 a minute that starts with 80 left: ours sends a
   * call every `gapMs` (±15 %) and each of the two others one meanwhile. `remaining` counts
   * everyone; what we spent counts ours only. The pace's rate a minute after `calls` calls.
   */
  function workerPaceAfter(calls: number, gapMs: number): number {
    const pace = new SendPace()
    const ratePerMs = LIMIT / 60_000
    pace.announce('requests', ratePerMs, 0)
    pace.adopt(undefined, 0, 3)
    let level = 80
    let now = 0
    let spent = 0
    for (let i = 0; i < calls; i++) {
      const gap = gapMs * (i % 3 === 0 ? 1.15 : 0.925)
      now += gap
      level = Math.min(100, Math.max(1, level + ratePerMs * gap - 3))
      spent += 1
      pace.take(now, ONE_CALL)
      pace.observe('requests', now, Math.floor(level), LIMIT, spent)
    }
    pace.delayMs(now, ONE_CALL)
    return pace.view().perMinute.requests as number
  }

  it('two other workers spending the burst leave this one its share of the rate, not a twentieth', () => {
    // Three calls every 480 ms: three times the rate, the burst spent down. Read as a tenant's,
    // the other two's sends left ours 5 % of the rate.
    expect(workerPaceAfter(30, 480)).toBeGreaterThan((LIMIT / 3) * 0.5)
  })

  it('at their fair share, each worker paces a third of the rate', () => {
    // Three calls every 1,452 ms: the rate, a third each.
    const rate = workerPaceAfter(60, 1452)
    expect(rate).toBeGreaterThan((LIMIT / 3) * 0.9)
    expect(rate).toBeLessThanOrEqual(LIMIT / 3 + 1e-9)
  })
})
