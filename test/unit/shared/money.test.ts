import { describe, expect, it } from 'vitest'
import { formatUsd, microsToUsd, microsToUsdString, usdToMicros } from '../../../src/shared/money'

describe('money', () => {
  it('formatUsd shows 2 to 6 decimals and unpriced for null', () => {
    expect(formatUsd(null)).toBe('unpriced')
    expect(formatUsd(0)).toBe('$0.00')
    expect(formatUsd(1_500_000)).toBe('$1.50')
    expect(formatUsd(1_234_567)).toBe('$1.234567')
    expect(formatUsd(3_000)).toBe('$0.003')
    expect(formatUsd(15)).toBe('$0.000015')
    expect(formatUsd(1_234_567_890_000)).toBe('$1,234,567.89')
    expect(formatUsd(-500_000)).toBe('-$0.50')
  })

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

  it("formatUsd's 'exact' style is the default", () => {
    expect(formatUsd(1_234_567, 'exact')).toBe(formatUsd(1_234_567))
  })

  it("formatUsd 'glance' shows cents from $1, 4 decimals below, and a floor under 100 micro-dollars", () => {
    expect(formatUsd(null, 'glance')).toBe('unpriced')
    expect(formatUsd(undefined, 'glance')).toBe('unpriced')
    expect(formatUsd(0, 'glance')).toBe('$0.00')
    expect(formatUsd(99, 'glance')).toBe('<$0.0001')
    expect(formatUsd(-50, 'glance')).toBe('-<$0.0001')
    expect(formatUsd(100, 'glance')).toBe('$0.0001')
    expect(formatUsd(3_550, 'glance')).toBe('$0.0036')
    expect(formatUsd(-500_000, 'glance')).toBe('-$0.5000')
    expect(formatUsd(1_000_000, 'glance')).toBe('$1.00')
    expect(formatUsd(1_234_567_890, 'glance')).toBe('$1,234.57')
    expect(formatUsd(-1_500_000, 'glance')).toBe('-$1.50')
  })
})
