import { describe, expect, it } from 'vitest'
import {
  formatClock,
  formatDateTime,
  formatDuration,
  formatInt,
  formatNumber,
  formatPercent,
  formatTokens,
  formatUsd,
  formatUsdPerM,
  formatUsdValue,
} from '../../../src/shared/format'

describe('one format per kind of number', () => {
  it('money: always 4 decimals, so amounts side by side agree digit for digit', () => {
    // The pairs: $0.3754 beside $1.08, an axis at $0.5000 beside $1.00, 4 vs 6 decimals.
    expect(formatUsd(375_400)).toBe('$0.3754')
    expect(formatUsd(1_080_000)).toBe('$1.0800')
    expect(formatUsdValue(0.5)).toBe('$0.5000')
    expect(formatUsdValue(1)).toBe('$1.0000')
    expect(formatUsd(12_300)).toBe('$0.0123')
    expect(formatUsd(12_345)).toBe('$0.0123')
    for (const micros of [375_400, 1_080_000, 12_345, 1_234_567_890, 3_550]) {
      expect(formatUsd(micros).split('.')[1]).toHaveLength(4)
    }
    expect(formatUsd(0)).toBe('$0.0000')
    expect(formatUsd(1_234_567_890_000)).toBe('$1,234,567.8900')
    expect(formatUsd(-500_000)).toBe('-$0.5000')
  })

  it('money: rounds half away from zero on whole micro-dollars; a tiny amount is not $0', () => {
    expect(formatUsd(3_550)).toBe('$0.0036')
    expect(formatUsd(3_549)).toBe('$0.0035')
    expect(formatUsd(-3_550)).toBe('-$0.0036')
    expect(formatUsd(50)).toBe('$0.0001')
    expect(formatUsd(49)).toBe('<$0.0001')
    expect(formatUsd(1)).toBe('<$0.0001')
    expect(formatUsd(-1)).toBe('-<$0.0001')
    expect(formatUsdValue(0.0000015)).toBe('<$0.0001')
  })

  it('money: unpriced is a word, never $0', () => {
    expect(formatUsd(null)).toBe('unpriced')
    expect(formatUsd(undefined)).toBe('unpriced')
  })

  it('prices per 1M tokens: the decimals the price table gives, at least cents', () => {
    expect(formatUsdPerM(3)).toBe('$3.00')
    expect(formatUsdPerM(0.075)).toBe('$0.075')
    expect(formatUsdPerM(0.000001)).toBe('$0.000001')
  })

  it('tokens and counts: whole numbers with separators, a total like its rows', () => {
    expect(formatTokens(213_812)).toBe('213,812')
    expect(formatTokens(42_981)).toBe('42,981')
    expect(formatTokens(12_000_000)).toBe('12,000,000')
    expect(formatInt(1_234.6)).toBe('1,235')
    expect(formatNumber(2.345, 2)).toBe('2.35')
    expect(formatNumber(2, 1)).toBe('2')
  })

  it('times of day: the 24-hour clock, with or without the day', () => {
    const afternoon = new Date(2026, 11, 2, 14, 5, 9).getTime()
    expect(formatClock(afternoon)).toMatch(/14.05.09/)
    expect(formatClock(afternoon)).not.toMatch(/PM|AM|pm|am/)
    expect(formatDateTime(afternoon)).toMatch(/14.05/)
    expect(formatDateTime(afternoon)).not.toMatch(/PM|AM|pm|am/)
    expect(formatClock(new Date(2026, 0, 1, 0, 0, 0).getTime())).toMatch(/^00.00.00$/)
  })

  it('durations: ms, s, min, h', () => {
    expect(formatDuration(340)).toBe('340 ms')
    expect(formatDuration(1_240)).toBe('1.2 s')
    expect(formatDuration(180_000)).toBe('3 min')
    expect(formatDuration(5_400_000)).toBe('1.5 h')
  })

  it('percentages: whole percent rounded down, 100% only when done', () => {
    expect(formatPercent(19, 100)).toBe('19%')
    expect(formatPercent(1_999, 2_000)).toBe('99%')
    expect(formatPercent(2_000, 2_000)).toBe('100%')
    expect(formatPercent(0, 0)).toBe('0%')
  })
})
