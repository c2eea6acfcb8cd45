// A refusal that a fall of the announced limit explains cuts no share (fall-refusal.ts), on
// explicit clocks (SendPace is pure: every method takes `now`).
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'

const ONE_CALL = costOf({}, 1)
const perMs = (perMinute: number) => perMinute / 60_000

/**
 * 1,200 requests a minute (one call each 50 ms), a refusal narrowed to one call at a time with a
 * window of one call (a quantized limit), then 40 calls at the pace: the share is whole.
 */
function quantized(): SendPace {
  const pace = new SendPace()
  pace.announce('requests', perMs(1200), 0)
  pace.take(0, ONE_CALL)
  pace.refusedUnexplained(0, 100, 50)
  for (let i = 1; i <= 40; i++) pace.take(100 + i * 52, ONE_CALL)
  return pace
}

const rateAt = (pace: SendPace, now: number) => {
  pace.delayMs(now, ONE_CALL)
  return pace.view().perMinute.requests as number
}

describe('SendPace: a refusal a fall of the limit explains', () => {
  it('headers current: a call sent before the fall was read is refused and the share stays whole', () => {
    const pace = quantized()
    // The limit falls to 600 a minute, read at 3,000 ms; the call sent at 2,990 is refused at 3,000.
    pace.announce('requests', perMs(600), 3000)
    pace.refusedUnexplained(2990, 3000, 50)
    expect(rateAt(pace, 3000)).toBeCloseTo(600 * 0.98, 5)
  })

  it('headers one answer late: the cut of the refusal just before the fall was read is undone', () => {
    const pace = quantized()
    pace.refusedUnexplained(2990, 3000, 50)
    expect(rateAt(pace, 3000)).toBeCloseTo(1200 * 0.98 * 0.8, 5)
    // The next answer, 300 ms later, shows the limit that had fallen.
    pace.announce('requests', perMs(600), 3300)
    expect(rateAt(pace, 3300)).toBeCloseTo(600 * 0.98, 5)
  })

  it('a refusal of a call paced at the new limit still cuts, and so does one long before a fall', () => {
    const pace = quantized()
    pace.announce('requests', perMs(600), 3000)
    pace.refusedUnexplained(3100, 3200, 50)
    expect(rateAt(pace, 3200)).toBeCloseTo(600 * 0.98 * 0.8, 5)

    const late = quantized()
    late.refusedUnexplained(2990, 3000, 50)
    late.announce('requests', perMs(600), 6000)
    expect(rateAt(late, 6000)).toBeLessThan(600 * 0.98 * 0.85)
  })

  it('a share still regrowing after a cut (a tenant) is cut at a fall as before', () => {
    const pace = quantized()
    pace.refusedUnexplained(2990, 3000, 50)
    // Two seconds later (no call since) the share is still 0.8: the fall undoes and explains nothing.
    pace.announce('requests', perMs(600), 5000)
    const before = rateAt(pace, 5000)
    expect(before).toBeCloseTo(600 * 0.98 * 0.8, 5)
    pace.refusedUnexplained(4990, 5000, 50)
    expect(rateAt(pace, 5000)).toBeCloseTo(before * 0.8, 5)
  })

  it('a window of several calls, which a fall leaves drained, is cut as before', () => {
    const pace = new SendPace()
    pace.announce('requests', perMs(1200), 0)
    pace.take(0, ONE_CALL)
    // A window of ten seconds.
    pace.refusedUnexplained(0, 100, 10_000)
    for (let i = 1; i <= 40; i++) pace.take(100 + i * 52, ONE_CALL)
    pace.announce('requests', perMs(600), 3000)
    pace.refusedUnexplained(2990, 3000, 10_000)
    expect(rateAt(pace, 3000)).toBeCloseTo(600 * 0.98 * 0.8, 5)
  })
})
