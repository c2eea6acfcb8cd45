import { describe, expect, it } from 'vitest'
import { backoffMs, busyWaitMs } from '../../../../src/main/engine/runner/retry'

describe("the runner's waits", () => {
  it('backs off a throttle or timeout from 250 ms doubling to 30 s, half of it random, in whole ms', () => {
    expect([0, 1, 2, 3, 6, 7, 40].map((n) => backoffMs(n, () => 0))).toEqual([
      125, 250, 500, 1000, 8000, 15_000, 15_000,
    ])
    expect([0, 1, 7].map((n) => backoffMs(n, () => 0.999))).toEqual([249, 499, 29_985])
    for (let i = 0; i < 50; i++) {
      const ms = backoffMs(3)
      expect(Number.isInteger(ms) && ms >= 1000 && ms < 2000).toBe(true)
    }
  })

  it('waits out a busy database 500 ms after the first try, doubling to 8 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(busyWaitMs)).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000])
  })
})
