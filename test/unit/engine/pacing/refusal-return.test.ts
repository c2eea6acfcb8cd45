// A call above the level served counts as held only once it has been out longer than a refusal
// takes to come back (refusal-return.ts, read by growth-spread.ts): explicit clocks.
import { describe, expect, it } from 'vitest'
import { GrowthSpread } from '../../../../src/main/engine/pacing/growth-spread'
import { RefusalReturn, unconfirmed } from '../../../../src/main/engine/pacing/refusal-return'
import { spreadPair } from '../../../helpers/spread-pair'

/** The growth's spread with the window spread that counts its calls and round trips. */
function growth() {
  const pair = spreadPair((trips) => new GrowthSpread(trips))
  return { ...pair, delayMs: (now: number) => pair.rule.delayMs(now, false) }
}

/**
 * Ten slots of a 1-s round trip served, a call above them at 1875 refused 25 ms after it went; a
 * round trip later one of the ten is answered and refilled, and a call goes above at 2000.
 */
function aboveAt2000(): ReturnType<typeof growth> {
  const g = growth()
  for (let i = 0; i < 10; i++) g.admitted(0)
  for (let i = 0; i < 10; i++) g.settled(1000, 0, 'ok')
  for (let i = 0; i < 10; i++) g.admitted(1000)
  g.admitted(1875)
  g.settled(1900, 1875, 'throttled')
  g.settled(2000, 1000, 'ok')
  g.admitted(2000) // the refill
  expect(g.delayMs(2000)).toBe(0)
  g.admitted(2000) // above the ten served
  expect(g.delayMs(2000)).toBeGreaterThan(0)
  return g
}

describe('RefusalReturn', () => {
  it('is the longest of the last refusals, at most a quarter of a round trip, none before one', () => {
    const r = new RefusalReturn()
    expect(r.ms(1000)).toBe(0)
    r.refused(1025, 1000)
    r.refused(2010, 2000)
    expect(r.ms(1000)).toBe(25)
    expect(r.ms(40)).toBe(10)
    for (let i = 0; i < 8; i++) r.refused(3000 + i, 3000)
    expect(r.ms(1000)).toBe(7)
  })

  it('counts the calls above sent within the return', () => {
    const above = new Map([
      [2000, 2],
      [1970, 1],
    ])
    expect(unconfirmed(above, 2010, 25)).toBe(2)
    expect(unconfirmed(above, 2030, 25)).toBe(0)
  })

  it('a success of an older call does not count a call above sent within a refusal return', () => {
    const g = aboveAt2000()
    // 10 ms later an older call is served with eleven out: the call above may still be refused.
    g.settled(2010, 1000, 'ok')
    g.admitted(2010) // its refill
    expect(g.delayMs(2010)).toBeGreaterThan(0)
  })

  it('counts it once it has been out longer than a refusal takes to come back', () => {
    const g = aboveAt2000()
    g.settled(2030, 1000, 'ok')
    g.admitted(2030)
    expect(g.delayMs(2030)).toBe(0)
  })
})
