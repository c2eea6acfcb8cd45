// What others spend, learned from `remaining` between answers: a whole number, so each reading is
// up to a unit off; the errors must cancel, not read as a tenant. Explicit clocks (SendPace is
// pure).
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/rate-budget'

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
