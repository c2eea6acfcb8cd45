import { describe, expect, it } from 'vitest'
import {
  cumulativeInputTokens,
  forecastBatch,
  type ForecastTask,
} from '../../src/main/engine/forecast'
import { PRICE_TABLE_VERSION, Prices } from '../../src/main/engine/prices'

describe('cumulativeInputTokens', () => {
  it('reproduces the seed: 1, 5, 10, 20 steps → 1,000 / 15,000 / 55,000 / 210,000', () => {
    expect([1, 5, 10, 20].map((s) => cumulativeInputTokens(s))).toEqual([
      1_000, 15_000, 55_000, 210_000,
    ])
  })

  it('scales with the per-step average and is exact', () => {
    expect(cumulativeInputTokens(0)).toBe(0)
    expect(cumulativeInputTokens(3, 7)).toBe(42)
    expect(cumulativeInputTokens(100, 1)).toBe(5_050)
    expect(cumulativeInputTokens(10_000, 12_345)).toBe(12_345 * 50_005_000)
  })

  it('rejects steps and averages that are not non-negative integers', () => {
    expect(() => cumulativeInputTokens(-1)).toThrow(/steps.*-1/)
    expect(() => cumulativeInputTokens(2.5)).toThrow(TypeError)
    expect(() => cumulativeInputTokens(2, -3)).toThrow(/avgPerStep/)
  })
})

// 4,000 characters ≈ 1,000 tokens per step (prompt.ts estimates 4 characters a token).
const prompt1k = 'x'.repeat(4_000)
const task = (over: Partial<ForecastTask> = {}): ForecastTask => ({
  type: 'summarize',
  payload: { prompt: prompt1k },
  steps: 10,
  provider: 'sim',
  model: 'sim-small',
  fp: 'fpA',
  ...over,
})

describe('forecastBatch', () => {
  const prices = new Prices()

  it('forecasts one multi-step task (hand-computed on sim-small at $3 / $15)', () => {
    const f = forecastBatch([task()], prices)
    // input 1,000 × 55 = 55,000; output 10 steps × 1,000 (the sim answers about a prompt's length)
    expect(f.total).toEqual({
      tasks: 1,
      distinctTasks: 1,
      duplicates: 0,
      calls: 10,
      inputTokens: 55_000,
      outputTokens: 10_000,
      costMicros: 55_000 * 3 + 10_000 * 15,
      unpricedTasks: 0,
      savedByDedupMicros: 0,
    })
    expect(f.priceVersion).toBe(PRICE_TABLE_VERSION)
    expect(f.dedup).toBe(true)
  })

  it('reproduces the seed growth for a 20-step task', () => {
    const f = forecastBatch([task({ steps: 20 })], prices, { outputTokensPerStep: 0 })
    expect(f.total.inputTokens).toBe(210_000)
    expect(f.total.costMicros).toBe(630_000)
  })

  it('counts identical fingerprints once and prices what dedup saves', () => {
    const tasks = [
      task(),
      task(),
      task(),
      task({ fp: 'fpB', steps: 1, payload: { prompt: prompt1k.toUpperCase() } }),
    ]
    const one = 55_000 * 3 + 10_000 * 15 // 315,000
    const single = 1_000 * 3 + 1_000 * 15 // 18,000
    const on = forecastBatch(tasks, prices)
    expect(on.total).toMatchObject({
      tasks: 4,
      distinctTasks: 2,
      duplicates: 2,
      calls: 11,
      inputTokens: 56_000,
      costMicros: one + single,
      savedByDedupMicros: 2 * one,
    })
    // Audit mode: every duplicate runs; the saving is what turning dedup on would bring.
    const off = forecastBatch(tasks, prices, { dedup: false })
    expect(off.dedup).toBe(false)
    expect(off.total).toMatchObject({
      tasks: 4,
      distinctTasks: 2,
      duplicates: 2,
      calls: 31,
      costMicros: 3 * one + single,
      savedByDedupMicros: 2 * one,
    })
  })

  it('rolls up per type, most expensive first, consistent with the total', () => {
    const tasks = [
      task({ type: 'classify', fp: 'c1', steps: 1 }),
      task({ type: 'research', fp: 'r1', steps: 5 }),
      task({ type: 'research', fp: 'r1', steps: 5 }),
      task({ type: 'classify', fp: 'c2', steps: 1 }),
    ]
    const f = forecastBatch(tasks, prices)
    expect(f.byType.map((t) => [t.type, t.tasks, t.distinctTasks, t.duplicates])).toEqual([
      ['research', 2, 1, 1],
      ['classify', 2, 2, 0],
    ])
    for (const key of ['tasks', 'calls', 'inputTokens', 'outputTokens', 'costMicros'] as const) {
      expect(f.total[key]).toBe(f.byType.reduce((s, t) => s + (t[key] ?? 0), 0))
    }
  })

  it('reports unpriced tasks instead of pricing them at 0', () => {
    const f = forecastBatch(
      [
        task({ type: 'known', fp: 'k' }),
        task({ type: 'mixed', fp: 'm1', steps: 1 }),
        task({ type: 'mixed', fp: 'm2', model: 'mystery-1' }),
        task({ type: 'unknown', fp: 'u', model: 'mystery-1' }),
        task({ type: 'unknown', fp: 'u', model: 'mystery-1' }),
      ],
      prices,
    )
    const byType = Object.fromEntries(f.byType.map((t) => [t.type, t]))
    expect(byType['known']).toMatchObject({ costMicros: 315_000, unpricedTasks: 0 })
    expect(byType['mixed']).toMatchObject({ costMicros: 18_000, unpricedTasks: 1 })
    // The duplicate of an unpriced task is reused (not run, not unpriced) and its saving unknown.
    expect(byType['unknown']).toMatchObject({
      costMicros: null,
      unpricedTasks: 1,
      duplicates: 1,
      savedByDedupMicros: 0,
      inputTokens: 55_000,
    })
    expect(f.total).toMatchObject({ costMicros: 333_000, unpricedTasks: 2 })
    expect(f.byType.at(-1)?.type).toBe('unknown')
  })

  it('uses a fixed output per step when given, and an empty batch costs nothing', () => {
    const f = forecastBatch([task()], prices, { outputTokensPerStep: 50 })
    expect(f.total.outputTokens).toBe(500)
    expect(f.total.costMicros).toBe(55_000 * 3 + 500 * 15)
    expect(forecastBatch([], prices).total).toMatchObject({ tasks: 0, costMicros: 0 })
  })

  it('estimates per-step input from the messages the runner will send', () => {
    const f = forecastBatch(
      [task({ steps: 1, payload: { system: 'y'.repeat(400), prompt: 'z'.repeat(400) } })],
      prices,
      { outputTokensPerStep: 0 },
    )
    expect(f.total.inputTokens).toBe(200)
  })

  it('rejects bad steps and options, naming the task', () => {
    expect(() => forecastBatch([task(), task({ steps: -1 })], prices)).toThrow(/tasks\[1\]\.steps/)
    expect(() => forecastBatch([task()], prices, { outputTokensPerStep: 0.5 })).toThrow(
      /outputTokensPerStep/,
    )
  })
})
