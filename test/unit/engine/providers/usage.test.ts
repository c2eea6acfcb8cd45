import { describe, expect, it } from 'vitest'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import { normalizeAnthropicUsage } from '../../../../src/main/engine/providers/anthropic'
import { normalizeOpenAiUsage } from '../../../../src/main/engine/providers/openai'

// Each adapter reads its vendor's usage; one file for both, because the trap is how they differ.
describe('usage normalization', () => {
  it('OpenAI chat: cached tokens are a subset of prompt tokens', () => {
    const u = normalizeOpenAiUsage({
      prompt_tokens: 10_000,
      completion_tokens: 500,
      total_tokens: 10_500,
      prompt_tokens_details: { cached_tokens: 4_000 },
      completion_tokens_details: { reasoning_tokens: 200 },
    })
    expect(u).toEqual({
      inputTokens: 10_000,
      cachedInputTokens: 4_000,
      cacheWriteTokens: 0,
      outputTokens: 500,
    })
  })

  it('OpenAI Responses API: input_tokens already include cached ones', () => {
    const u = normalizeOpenAiUsage({
      input_tokens: 10_000,
      output_tokens: 500,
      input_tokens_details: { cached_tokens: 4_000 },
      output_tokens_details: { reasoning_tokens: 200 },
    })
    expect(u).toEqual({
      inputTokens: 10_000,
      cachedInputTokens: 4_000,
      cacheWriteTokens: 0,
      outputTokens: 500,
    })
  })

  it('Anthropic: cache reads and writes are separate from input_tokens and summed in', () => {
    const u = normalizeAnthropicUsage({
      input_tokens: 1_000,
      cache_read_input_tokens: 20_000,
      cache_creation_input_tokens: 5_000,
      output_tokens: 800,
    })
    expect(u).toEqual({
      inputTokens: 26_000,
      cachedInputTokens: 20_000,
      cacheWriteTokens: 5_000,
      outputTokens: 800,
    })
  })

  it('the two vendors read the same-looking payload differently (the trap)', () => {
    const raw = { input_tokens: 1_000, output_tokens: 10, cache_read_input_tokens: 900 }
    const openai = normalizeOpenAiUsage({ ...raw, input_tokens_details: { cached_tokens: 900 } })!
    expect(openai.inputTokens).toBe(1_000)
    expect(normalizeAnthropicUsage(raw)!.inputTokens).toBe(1_900)
    const prices = new Prices()
    const gpt = prices.priceFor('openai', 'gpt-4o')
    // 100 × 2.5 + 900 × 1.25 + 10 × 10 = 250 + 1,125 + 100
    expect(prices.costMicros(openai, gpt)).toBe(1_475)
  })

  it('a report that cannot be believed is no report: the runner estimates the call, never prices it at 0', () => {
    // Missing, not an object, a count that is negative, a string, an object, fractional, or beyond
    // 2^53; input or output absent.
    const unreadable = [
      undefined,
      null,
      {},
      'x',
      42,
      { prompt_tokens: 'many', completion_tokens: 3 },
      { prompt_tokens: 7 },
      { prompt_tokens: 7, completion_tokens: -1 },
      { prompt_tokens: { n: 7 }, completion_tokens: 3 },
      { prompt_tokens: 7.5, completion_tokens: 3 },
      { prompt_tokens: 2 ** 53, completion_tokens: 3 },
      { prompt_tokens: 7, completion_tokens: 3, prompt_tokens_details: { cached_tokens: -2 } },
    ]
    for (const raw of unreadable) expect(normalizeOpenAiUsage(raw)).toBeUndefined()
    for (const raw of [
      undefined,
      { input_tokens: 7 },
      { output_tokens: 3, input_tokens: -5 },
      { output_tokens: '3', input_tokens: 5 },
      { output_tokens: 3, input_tokens: 5, cache_read_input_tokens: -1 },
      { output_tokens: 3, input_tokens: 2 ** 52, cache_read_input_tokens: 2 ** 52 },
    ]) {
      expect(normalizeAnthropicUsage(raw)).toBeUndefined()
    }
    const zero = { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 }
    // Zero is a count: a call that read and wrote nothing is reported, not unreadable.
    expect(normalizeOpenAiUsage({ prompt_tokens: 0, completion_tokens: 0 })).toEqual(zero)
    expect(
      normalizeOpenAiUsage({ prompt_tokens: 7, completion_tokens: 2, prompt_tokens_details: null }),
    ).toEqual({ ...zero, inputTokens: 7, outputTokens: 2 })
    // A proxy claiming more cached than prompt tokens is clamped, never a negative uncached part.
    expect(
      normalizeOpenAiUsage({
        prompt_tokens: 10,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 50 },
      }),
    ).toMatchObject({ inputTokens: 10, cachedInputTokens: 10 })
  })
})
