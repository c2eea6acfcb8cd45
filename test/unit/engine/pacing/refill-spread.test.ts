// The window answered after a refusal refills spread until a call sent after the refusal is served
// (refill-spread.ts): explicit clocks, a window answered in one instant as a steady latency does.
import { describe, expect, it } from 'vitest'
import { RefillSpread } from '../../../../src/main/engine/pacing/refill-spread'
import { spreadPair } from '../../../helpers/spread-pair'

/** The refill spread with the window spread that counts its calls and round trips. */
function refills() {
  const pair = spreadPair((trips) => new RefillSpread(trips))
  return {
    ...pair,
    delayMs: (now: number) => pair.rule.delayMs(now),
    spreading: (now: number) => pair.rule.spreading(now),
  }
}

/** Sends as the scheduler would: `n` calls at `now` or as soon after as the rule lets them. */
function send(r: ReturnType<typeof refills>, now: number, n: number): number[] {
  const sentAt: number[] = []
  while (sentAt.length < n) {
    const wait = r.delayMs(now)
    if (wait > 0) {
      now += wait
      continue
    }
    r.admitted(now)
    sentAt.push(now)
  }
  return sentAt
}

/**
 * A steady round trip of 1 s: ten calls at 0, refilled at 1000 with one more (a growth), the
 * refused one answered at 1020 with 11 out (the level 10, the spread from 1020 + 750).
 */
function refusedAt1020(): ReturnType<typeof refills> {
  const r = refills()
  send(r, 0, 10)
  for (let i = 0; i < 10; i++) r.settled(1000, 0, 'ok')
  expect(send(r, 1000, 11).every((t) => t === 1000)).toBe(true)
  r.settled(1020, 1000, 'throttled')
  return r
}

describe('RefillSpread', () => {
  it('spreads the refills of the window answered after a refusal, one per 1/(2 x level) round trip', () => {
    const r = refusedAt1020()
    // The window sent with the refused call comes back in one instant a round trip later.
    for (let i = 0; i < 10; i++) r.settled(2000, 1000, 'ok')
    const sentAt = send(r, 2000, 10)
    expect(sentAt[0]).toBe(2000)
    expect(sentAt[1]).toBe(2050)
    expect(sentAt[9]).toBe(2450)
    expect(r.spreading(2000)).toBe(true)
  })

  it("refills the answers of the refusal's own instant at once", () => {
    const r = refills()
    send(r, 0, 10)
    send(r, 20, 10)
    for (let i = 0; i < 10; i++) r.settled(1000, 0, 'ok')
    send(r, 1000, 10)
    // A cap refusing one call as the calls under it are served: those refill what was served.
    r.settled(1020, 1000, 'throttled')
    for (let i = 0; i < 10; i++) r.settled(1020, 20, 'ok')
    expect(send(r, 1020, 10).every((t) => t === 1020)).toBe(true)
    expect(r.spreading(1020)).toBe(false)
  })

  it('refills at once again from the first success of a call sent after the refusal', () => {
    const r = refusedAt1020()
    r.settled(2000, 1000, 'ok')
    const [first] = send(r, 2000, 1)
    expect(r.delayMs(2000)).toBeGreaterThan(0)
    r.settled(3000, first as number, 'ok')
    expect(r.delayMs(3000)).toBe(0)
    expect(send(r, 3000, 5).every((t) => t === 3000)).toBe(true)
  })

  it("keeps the first refusal's level for its siblings sent before it", () => {
    const r = refusedAt1020()
    // Nine siblings refused in the same burst: the gap stays 1000/20 ms, not 1000/2.
    for (let i = 0; i < 9; i++) r.settled(1021, 1000, 'throttled')
    const sentAt = send(r, 2000, 3)
    expect(sentAt[2]! - sentAt[1]!).toBe(50)
  })
})
