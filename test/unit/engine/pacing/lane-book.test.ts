// A lane of tokens one call at a time settles an answer by replaying the calls since (lane-book.ts):
// a refund or a debt is what a lane charged the real cost would hold now, not the difference put
// back a round trip late. On explicit clocks (SendPace is pure: every method takes `now`).
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'

const tokens = (n: number) => ({ ...costOf({}, 1), tokens: n })

/**
 * 60,000 tokens a minute (0.98 a ms one call at a time), narrowed to one call at a time, with a
 * mean call of 1000 tokens (the lane holds 700); its lane full at the returned time.
 */
function narrowedLane(): { pace: SendPace; t0: number } {
  const pace = new SendPace()
  pace.announce('tokens', 1, 0)
  pace.refusedUnexplained(1, 2)
  for (let i = 0; i < 20; i++) {
    const at = 10 + i * 2000
    pace.take(at, tokens(1000))
    pace.refund(at + 1, 'tokens', 0, at)
  }
  return { pace, t0: 50_000 }
}

describe('LaneBook: an answer replays the lane', () => {
  it('a charge too high gives back nothing the cap took meanwhile', () => {
    const { pace, t0 } = narrowedLane()
    // A is charged 1000 and costs 600: the lane, charged 600, was full again 612 ms later, and
    // full when B went (t0 + 1100, 700 tokens): A's 400 were lost at the cap, as in the
    // provider's bucket of about a call.
    pace.take(t0, tokens(1000))
    pace.take(t0 + 1100, tokens(700))
    pace.refund(t0 + 1200, 'tokens', 400, t0)
    // 100 ms of refill since B (98 tokens): a call of 400 waits for the rest, not at once (the
    // 400 put back on top of 98 would have sent it into a bucket holding 98).
    expect(pace.delayMs(t0 + 1200, tokens(400))).toBe(Math.ceil((400 - 98) / 0.98))
  })

  it('a charge too low is a debt less what the lane lost at its cap since', () => {
    const { pace, t0 } = narrowedLane()
    // A is charged 1000 and costs 1300: the lane, charged 1300, was full again at t0 + 1327 and
    // full when B went at t0 + 1500: the debt was paid by the refill the cap would have lost.
    pace.take(t0, tokens(1000))
    pace.take(t0 + 1500, tokens(700))
    pace.refund(t0 + 1600, 'tokens', -300, t0)
    // 98 tokens since B, not 98 less the 300 of debt.
    expect(pace.delayMs(t0 + 1600, tokens(98))).toBe(0)
    expect(pace.delayMs(t0 + 1600, tokens(196))).toBe(Math.ceil(98 / 0.98))
  })

  it('a call whose answer is known before the lane filled gives back all of it', () => {
    const { pace, t0 } = narrowedLane()
    // A is charged 1000 and costs 600; its answer comes before the lane was full again.
    pace.take(t0, tokens(1000))
    pace.refund(t0 + 200, 'tokens', 400, t0)
    // -300 + 196 of refill + 400: 296, as a lane charged 600 would hold.
    expect(pace.delayMs(t0 + 200, tokens(296))).toBe(0)
    expect(pace.delayMs(t0 + 200, tokens(394))).toBe(Math.ceil(98 / 0.98))
  })
})

describe('LaneBook: what it does not hold stays the lane level', () => {
  it('a debt of a call the book does not hold is not undone by the next replay', () => {
    const { pace, t0 } = narrowedLane()
    pace.take(t0, tokens(1000))
    // A call sent before the spell one call at a time answers 600 over its charge: a debt.
    pace.refund(t0 + 100, 'tokens', -600, 1)
    pace.refund(t0 + 200, 'tokens', 0, t0)
    // 700 - 1000 + 196 of refill - 600: -704, so a call of 700 waits for 1,404 tokens.
    expect(pace.delayMs(t0 + 200, tokens(700))).toBe(Math.ceil(1404 / 0.98))
  })

  it('a spell in the announced window between two one call at a time forgets what the first kept', () => {
    const { pace, t0 } = narrowedLane()
    pace.take(t0, tokens(1000))
    // The workers' learned pace is gone: back to the announced window, where a large call leaves
    // a debt of some 30,000 tokens; then a refusal narrows it again.
    pace.adopt(undefined, t0 + 10)
    pace.take(t0 + 20, tokens(30_000))
    pace.refusedUnexplained(t0 + 30, t0 + 40)
    pace.take(t0 + 50, tokens(700))
    pace.refund(t0 + 60, 'tokens', 0, t0 + 50)
    // The debt stands: replayed from the first spell's call, the lane was at its cap.
    expect(pace.delayMs(t0 + 60, tokens(700))).toBeGreaterThan(30_000)
  })
})
