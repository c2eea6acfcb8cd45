import { describe, expect, it } from 'vitest'
import { backoff } from '../../../../src/main/engine/core/backoff'

/** A random that hands out `values` in turn and counts its calls. */
function scripted(...values: number[]) {
  let calls = 0
  const random = () => values[calls++ % values.length] ?? 0
  return {
    random,
    get calls() {
      return calls
    },
  }
}

describe('backoff', () => {
  it('doubles from initialMs up to maxMs, by attempt number', () => {
    const b = backoff({ initialMs: 1000, maxMs: 30_000 })
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => b.delay(n))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ])
  })

  it('hands out the same waits one after another with next(), and starts over on reset()', () => {
    const b = backoff({ initialMs: 250, maxMs: 5000 })
    expect(Array.from({ length: 7 }, () => b.next())).toEqual([
      250, 500, 1000, 2000, 4000, 5000, 5000,
    ])
    b.reset()
    expect([b.next(), b.next()]).toEqual([250, 500])
  })

  it('delay() does not advance next()', () => {
    const b = backoff({ initialMs: 10, maxMs: 1000 })
    expect(b.delay(3)).toBe(80)
    expect(b.next()).toBe(10)
  })

  it('grows by another factor', () => {
    const b = backoff({ initialMs: 100, maxMs: 10_000, factor: 3 })
    expect([0, 1, 2, 3, 4, 5].map((n) => b.delay(n))).toEqual([100, 300, 900, 2700, 8100, 10_000])
  })

  it('stays at maxMs however many attempts, without overflowing to Infinity or NaN', () => {
    expect(backoff({ initialMs: 250, maxMs: 30_000 }).delay(5000)).toBe(30_000)
    expect(backoff({ initialMs: 0, maxMs: 0 }).delay(5000)).toBe(0)
    expect(backoff({ initialMs: 0, maxMs: 1000 }).delay(5000)).toBe(0)
    expect(backoff({ initialMs: 1, maxMs: Infinity }).delay(2000)).toBe(Infinity)
    const never = backoff({ initialMs: Infinity, maxMs: Infinity, jitter: 1, random: () => 0 })
    expect(never.next()).toBe(Infinity)
  })

  it('factor 1 is a constant wait', () => {
    const b = backoff({ initialMs: 40, maxMs: 40, factor: 1 })
    expect([b.next(), b.next(), b.next()]).toEqual([40, 40, 40])
  })

  describe('jitter', () => {
    it('equal jitter (0.5): half of the wait fixed, the other half random', () => {
      const r = scripted(0, 0.5, 0.999)
      const b = backoff({ initialMs: 1000, maxMs: 30_000, jitter: 0.5, random: r.random })
      expect([b.delay(0), b.delay(0), b.delay(0)]).toEqual([500, 750, 999.5])
      // The cap holds the jittered wait too: at most maxMs.
      expect(b.delay(10)).toBe(15_000)
      expect(b.delay(10)).toBe(22_500)
      expect(b.delay(10)).toBeLessThan(30_000)
    })

    it('full jitter (1): anywhere from 0 up to the wait', () => {
      const b = backoff({ initialMs: 800, maxMs: 800, jitter: 1, random: scripted(0, 0.25).random })
      expect([b.next(), b.next()]).toEqual([0, 200])
    })

    it('is the same arithmetic as cap / 2 + random() * (cap / 2), to the last bit', () => {
      const values = [0.123456789, 0.987654321, 1 / 3, 0.7071067811865476]
      for (const v of values) {
        for (const attempt of [0, 1, 2, 3, 7, 20]) {
          const cap = Math.min(30_000, 250 * 2 ** attempt)
          const b = backoff({ initialMs: 250, maxMs: 30_000, jitter: 0.5, random: () => v })
          expect(b.delay(attempt)).toBe(cap / 2 + v * (cap / 2))
        }
      }
    })

    it('draws no random number when there is no jitter', () => {
      const r = scripted(0.5)
      const b = backoff({ initialMs: 10, maxMs: 100, random: r.random })
      b.next()
      b.delay(4)
      expect(r.calls).toBe(0)
    })

    it('uses Math.random by default, within the jitter band', () => {
      const b = backoff({ initialMs: 1000, maxMs: 1000, jitter: 0.5 })
      for (let i = 0; i < 100; i++) {
        const ms = b.delay(0)
        expect(ms).toBeGreaterThanOrEqual(500)
        expect(ms).toBeLessThan(1000)
      }
    })
  })

  it('rejects bad options with a TypeError naming the option and the value', () => {
    expect(() => backoff({ initialMs: -1, maxMs: 10 })).toThrow(/`initialMs`.*got `-1`/)
    expect(() => backoff({ initialMs: NaN, maxMs: 10 })).toThrow(/`initialMs`.*got `NaN`/)
    expect(() => backoff({ initialMs: 100, maxMs: 10 })).toThrow(/`maxMs`.*>= initialMs.*got `10`/)
    expect(() => backoff({ initialMs: 1, maxMs: 10, factor: 0.5 })).toThrow(/`factor`.*`0.5`/)
    expect(() => backoff({ initialMs: 1, maxMs: 10, jitter: 1.5 })).toThrow(/`jitter`.*`1.5`/)
    expect(() => backoff({ initialMs: 1, maxMs: 10, jitter: -0.1 })).toThrow(/`jitter`/)
    expect(() =>
      backoff({ initialMs: 1, maxMs: 10, random: 0 as unknown as () => number }),
    ).toThrow(TypeError)
  })

  it('rejects an attempt number that is not an integer >= 0', () => {
    const b = backoff({ initialMs: 1, maxMs: 10 })
    expect(() => b.delay(-1)).toThrow(/`attempt`.*got `-1`/)
    expect(() => b.delay(1.5)).toThrow(/`attempt`.*got `1.5`/)
  })
})
