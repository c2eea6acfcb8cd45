/**
 * The live leg's comparisons (bench/pacing-live/stats.ts): the difference of two medians over a
 * dozen short draws swung by fifteen points between two runs of the same code, where the mean of
 * the draws' differences, each draw against its own twin, did not. Figures of 2026-12-07's runs.
 */
import { describe, expect, it } from 'vitest'
import { median, pairedMean } from '../../../bench/pacing-live/stats'

// Three processes, utilization (%), in the twelfth round's two runs, and their virtual twin.
const RUN_1 = [48.1, 97.4, 96.5, 88.1, 71.2, 64.5, 52.3, 81.0, 52.7, 56.1, 92.6, 17.2]
const RUN_2 = [57.8, 97.4, 94.6, 88.1, 71.1, 87.8, 78.5, 89.3, 69.6, 51.4, 91.2, 15.0]
const TWIN = [51.0, 99.8, 97.6, 89.1, 73.4, 78.2, 65.0, 87.7, 63.3, 47.5, 93.7, 17.3]

describe("the live leg's comparisons", () => {
  it('the medians part by more than 5 in both runs, in opposite directions', () => {
    expect(median(RUN_1) - median(TWIN)).toBeCloseTo(-7.95, 2)
    expect(median(RUN_2) - median(TWIN)).toBeCloseTo(7.35, 2)
    expect(median([3, 1, 2])).toBe(2)
    expect(median([])).toBeNaN()
  })

  it("the mean of the draws' differences stays within 5, with its standard error", () => {
    const one = pairedMean(RUN_1, TWIN)
    const two = pairedMean(RUN_2, TWIN)
    expect(one.n).toBe(12)
    expect(one.mean).toBeCloseTo(-3.82, 2)
    expect(two.mean).toBeCloseTo(2.35, 2)
    // The spread of the differences over the root of their count.
    expect(one.se).toBeGreaterThan(1.5)
    expect(one.se).toBeLessThan(2.5)
    expect(Math.abs(one.mean)).toBeLessThan(5)
    expect(Math.abs(two.mean)).toBeLessThan(5)
  })

  it('skips a draw with no figure, and gives no spread for a single pair', () => {
    expect(pairedMean([1, NaN, 5], [0, 2, 2])).toEqual({ mean: 2, se: 1, n: 2 })
    const single = pairedMean([4], [1])
    expect(single.mean).toBe(3)
    expect(single.se).toBeNaN()
    expect(pairedMean([], []).mean).toBeNaN()
  })
})
