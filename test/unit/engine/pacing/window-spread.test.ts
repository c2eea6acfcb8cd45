// A window's calls spread over half a round trip while the window enforced is not known
// (window-spread.ts). Explicit clocks.
import { describe, expect, it } from 'vitest'
import { WindowSpread } from '../../../../src/main/engine/pacing/window-spread'

describe('WindowSpread', () => {
  it('holds nothing before a round trip is known, nor once the window is', () => {
    const spread = new WindowSpread()
    for (let i = 0; i < 10; i++) spread.admitted(0, true)
    expect(spread.delayMs(0, true)).toBe(0)
    for (let i = 0; i < 10; i++) spread.settled(1000, 0, true)
    for (let i = 0; i < 10; i++) spread.admitted(1000, false)
    expect(spread.delayMs(1000, false)).toBe(0)
  })

  it('sends a window answered in one instant over half a round trip, two at a time at most', () => {
    const spread = new WindowSpread()
    // 32 calls answered after a second: the next window of 64 goes over about half a second.
    for (let i = 0; i < 32; i++) spread.admitted(0, true)
    for (let i = 0; i < 32; i++) spread.settled(1000, 0, true)
    let now = 1000
    const sentAt: number[] = []
    while (sentAt.length < 64) {
      const wait = spread.delayMs(now, true)
      if (wait > 0) {
        now += wait
        continue
      }
      spread.admitted(now, true)
      sentAt.push(now)
    }
    expect(sentAt.filter((t) => t === 1000).length).toBeLessThanOrEqual(2)
    const last = sentAt[sentAt.length - 1] as number
    expect(last - 1000).toBeGreaterThan(400)
    expect(last - 1000).toBeLessThan(1000)
  })

  it('a refused call does not count as a round trip', () => {
    const spread = new WindowSpread()
    spread.admitted(0, true)
    spread.settled(20, 0, false)
    spread.admitted(20, true)
    spread.admitted(20, true)
    spread.admitted(20, true)
    expect(spread.delayMs(20, true)).toBe(0)
  })

  it('lets a fast provider window go within a millisecond: no wait under one', () => {
    const spread = new WindowSpread()
    // 48 calls answered 1 ms after they went: a window of 48 spreads over half a millisecond.
    for (let i = 0; i < 48; i++) spread.admitted(0, true)
    for (let i = 0; i < 48; i++) spread.settled(1, 0, true)
    let sent = 0
    while (spread.delayMs(1, true) === 0 && sent < 200) {
      spread.admitted(1, true)
      sent++
    }
    // Twice the window per round trip goes in that millisecond (a timer would make each wait one).
    expect(sent).toBeGreaterThanOrEqual(48)
  })

  it('does not spread a provider that answers within the clock millisecond, one call at a time', () => {
    const spread = new WindowSpread()
    // Calls admitted one at a time (a shared store's round trip each), each answered within the
    // millisecond it went: the window reads one call, the round trip the clock's one ms.
    let waited = 0
    for (let i = 0; i < 50; i++) {
      const now = Math.floor(i / 10)
      if (spread.delayMs(now, true) > 0) waited++
      spread.admitted(now, true)
      spread.settled(now, now, true)
    }
    // Spread at half a round trip per window of one, 46 of the 50 calls waited a millisecond.
    expect(waited).toBe(0)
  })
})
