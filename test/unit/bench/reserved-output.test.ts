// A token budget that reserves a call's max_tokens when it admits the call (OpenAI counts it
// against the minute; Anthropic and Azure reserve it and give back the unused part at the end):
// Pacer's pace charges the same (rate-budget.ts), not the output answers used so far.
import { describe, expect, it } from 'vitest'
import { RateBudget } from '../../../src/main/engine/pacing/rate-budget'
import { drawProvider } from '../../../bench/scheduler/family'

describe('a budget that reserves max_tokens', () => {
  it('the pace takes the call at its max_tokens, as the provider does', () => {
    const budget = new RateBudget()
    const estimate = { inputTokens: 1000, outputTokens: 600 }
    const first = budget.reserve(0, estimate)
    expect(first.cost.tokens).toBe(1600)
    budget.settle(1000, first, {
      refused: false,
      usage: { inputTokens: 1000, outputTokens: 100 },
    })
    // Answers of 100 tokens do not make the next call cheaper for the pace: the provider
    // reserves 600 for it again.
    const second = budget.reserve(1000, estimate)
    expect(second.cost.tokens).toBe(1600)
    expect(second.cost['output-tokens']).toBe(600)
  })

  it('a drawn provider that reserves and refunds is used to the full (#1000035)', async () => {
    const { CONTENDERS } = await import('../../../bench/scheduler/contenders')
    const { raceDraw } = await import('../../../bench/scheduler/family-race')
    // 851,001 > 535,175 tokens a minute, Anthropic headers, answers 1.8 s growing with load; each
    // call reserves its 600 tokens of max_tokens and gets back what it did not use.
    const draw = drawProvider(1_000_035)
    expect(draw.charge).toBe('reserve-refund')
    const pacer = CONTENDERS.find((c) => c.name === 'Pacer (adaptive + budget)')!
    const result = await raceDraw(draw, pacer)
    // 0.960 used; 0.475 while the pace took the output answers used (~325 of 600 tokens).
    expect(result.utilization).toBeGreaterThan(0.9)
    expect(result.throttledShare).toBeLessThan(0.01)
  })
})
