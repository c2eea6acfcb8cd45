import { describe, expect, it } from 'vitest'
import { microsToUsd, microsToUsdString, usdToMicros } from '../../../src/shared/money'

describe('money', () => {
  it('microsToUsdString is exact with 6 decimals', () => {
    expect(microsToUsdString(1)).toBe('0.000001')
    expect(microsToUsdString(630_000)).toBe('0.630000')
    expect(microsToUsdString(9_007_199_254_740_991)).toBe('9007199254.740991')
    expect(microsToUsdString(-1)).toBe('-0.000001')
    expect(() => microsToUsdString(0.5)).toThrow(RangeError)
  })

  it('microsToUsd converts at the edge, null staying null', () => {
    expect(microsToUsd(1_500_000)).toBe(1.5)
    expect(microsToUsd(0)).toBe(0)
    expect(microsToUsd(null)).toBeNull()
    expect(microsToUsdString(null)).toBeNull()
  })

  it('usdToMicros rounds back to whole micro-dollars', () => {
    expect(usdToMicros(0.0000015)).toBe(2)
    expect(usdToMicros(1.234567)).toBe(1_234_567)
    expect(usdToMicros(microsToUsd(987_654_321))).toBe(987_654_321)
  })
})
