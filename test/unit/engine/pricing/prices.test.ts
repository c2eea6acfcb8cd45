import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  PRICE_TABLE_VERSION,
  Prices,
  providerFamily,
} from '../../../../src/main/engine/pricing/prices'
import { normalizeAnthropicUsage } from '../../../../src/main/engine/providers/anthropic'
import type { Usage } from '../../../../src/main/engine/core/types'

const usage = (inputTokens: number, outputTokens: number, cached = 0, write = 0): Usage => ({
  inputTokens,
  cachedInputTokens: cached,
  cacheWriteTokens: write,
  outputTokens,
})

describe('Prices.costMicros', () => {
  const prices = new Prices()

  it('prices gpt-4o with cached input as a subset of input (hand-computed)', () => {
    // 6,000 uncached × $2.50 + 4,000 cached × $1.25 + 500 out × $10 = 15,000 + 5,000 + 5,000 µ$
    const cost = prices.costMicros(usage(10_000, 500, 4_000), prices.priceFor('openai', 'gpt-4o'))
    expect(cost).toBe(25_000)
  })

  it('prices Anthropic cache reads and writes at their own rates (hand-computed)', () => {
    const u = normalizeAnthropicUsage({
      input_tokens: 1_000,
      cache_read_input_tokens: 20_000,
      cache_creation_input_tokens: 5_000,
      output_tokens: 800,
    })!
    // 1,000 × $3 + 20,000 × $0.30 + 5,000 × $3.75 + 800 × $15 = 3,000 + 6,000 + 18,750 + 12,000
    const cost = prices.costMicros(u, prices.priceFor('anthropic', 'claude-sonnet-4-5'))
    expect(cost).toBe(39_750)
  })

  it('rounds once at the end, not per term', () => {
    const nano = prices.priceFor('openai', 'gpt-4.1-nano')
    // 5 uncached × $0.10 = 0.5 µ$ and 20 cached × $0.025 = 0.5 µ$: 1 µ$ in total. Rounding each term
    // half-up would give 2, flooring each would give 0.
    expect(prices.costMicros(usage(25, 0, 20), nano)).toBe(1)
    // 3 × $0.10 + 1 × $0.40 = 0.7 µ$ → 1 (per-term rounding: 0 + 0 = 0)
    expect(prices.costMicros(usage(3, 1), nano)).toBe(1)
    // Half rounds up: 10 × $0.15 = 1.5 µ$ → 2
    expect(prices.costMicros(usage(10, 0), prices.priceFor('openai', 'gpt-4o-mini'))).toBe(2)
  })

  it('is exact for large usages', () => {
    const opus = prices.priceFor('anthropic', 'claude-opus-4')
    expect(prices.costMicros(usage(0, 1_000_000), opus)).toBe(75_000_000)
    // 2^40 tokens at $0.075: the product passes 2^53 before the division.
    const mini = prices.priceFor('openai', 'gpt-4o-mini')
    const cost = prices.costMicros(usage(2 ** 40, 0, 2 ** 40), mini)
    expect(cost).toBe(Number((2n ** 40n * 75_000n + 500_000n) / 1_000_000n))
  })

  it('matches an independent integer formula (property)', () => {
    const nano = prices.priceFor('openai', 'gpt-4.1-nano')
    fc.assert(
      fc.property(fc.nat(1e12), fc.nat(1e12), (inp, out) => {
        // $0.10 in, $0.40 out: cost = (in + 4·out) / 10 µ$, rounded half up.
        expect(prices.costMicros(usage(inp, out), nano)).toBe(Math.floor((inp + 4 * out + 5) / 10))
      }),
    )
  })

  it('returns null for an unpriced model, even for zero tokens: never 0', () => {
    expect(prices.costMicros(usage(1_000, 100), null)).toBeNull()
    expect(prices.costMicros(usage(0, 0), null)).toBeNull()
  })

  it('prices the simulated model like a mid model so the demo shows dollars', () => {
    // The seed's 20-step task: 210,000 input tokens × $3 = $0.63
    expect(prices.costMicros(usage(210_000, 0), prices.priceFor('sim', 'sim-small'))).toBe(630_000)
  })

  it('rejects usage that is not normalized instead of inventing a number', () => {
    const p = prices.priceFor('openai', 'gpt-4o')
    expect(() => prices.costMicros(usage(100, 0, 150), p)).toThrow(RangeError)
    expect(() => prices.costMicros(usage(100, 0, 60, 60), p)).toThrow(/inputTokens/)
    expect(() => prices.costMicros(usage(1.5, 0), p)).toThrow(/usage.inputTokens/)
    expect(() => prices.costMicros(usage(10, -1), p)).toThrow(/usage.outputTokens/)
  })

  it('accepts a caller-built price and validates it', () => {
    expect(
      prices.costMicros(usage(1_000, 1_000), {
        input: 1,
        cachedInput: 1,
        cacheWrite: 1,
        output: 2,
      }),
    ).toBe(3_000)
    expect(() =>
      prices.costMicros(usage(1, 1), { input: -1, cachedInput: 1, cacheWrite: 1, output: 2 }),
    ).toThrow(/price\.input/)
  })
})

describe('Prices.priceFor', () => {
  const prices = new Prices()

  it('knows every bundled model', () => {
    const models: [string, string][] = [
      ['sim', 'sim-small'],
      ...[
        'gpt-4o',
        'gpt-4o-mini',
        'gpt-4.1',
        'gpt-4.1-mini',
        'gpt-4.1-nano',
        'o3',
        'o4-mini',
        'gpt-5',
        'gpt-5-mini',
      ].map((m): [string, string] => ['openai', m]),
      ...[
        'claude-opus-4',
        'claude-sonnet-4',
        'claude-3-5-haiku',
        'claude-haiku-4-5',
        'claude-sonnet-4-5',
      ].map((m): [string, string] => ['anthropic', m]),
    ]
    for (const [provider, model] of models) {
      const p = prices.priceFor(provider, model)
      expect(p, `${provider}/${model}`).not.toBeNull()
      expect(p!.input).toBeGreaterThan(0)
      expect(p!.output).toBeGreaterThan(p!.input)
      expect(p!.cachedInput).toBeLessThan(p!.input)
    }
    expect(prices.priceFor('sim', 'sim-small')).toMatchObject({ input: 3, output: 15 })
  })

  it('resolves dated snapshots to their model by longest prefix', () => {
    expect(prices.priceFor('openai', 'gpt-4o-2024-08-06')).toEqual(
      prices.priceFor('openai', 'gpt-4o'),
    )
    // 'gpt-4o' is also a prefix: the longer key wins.
    expect(prices.priceFor('openai', 'gpt-4o-mini-2024-07-18')).toEqual(
      prices.priceFor('openai', 'gpt-4o-mini'),
    )
    expect(prices.priceFor('anthropic', 'claude-sonnet-4-5-20250929')).toEqual(
      prices.priceFor('anthropic', 'claude-sonnet-4-5'),
    )
    expect(prices.priceFor('anthropic', 'claude-3-5-haiku-20241022')?.input).toBe(0.8)
    expect(prices.priceFor('anthropic', 'claude-haiku-4-5-20251001')?.input).toBe(1)
    expect(prices.priceFor('anthropic', 'claude-3-5-haiku-latest')?.input).toBe(0.8)
    expect(prices.priceFor('openai', 'GPT-4o')).toEqual(prices.priceFor('openai', 'gpt-4o'))
  })

  it('does not let a variant inherit its base model price', () => {
    // o3-pro and gpt-5-pro have entries of their own now; variants without one stay unpriced.
    expect(prices.priceFor('openai', 'o3-deep-research')).toBeNull()
    expect(prices.priceFor('openai', 'gpt-4o-audio-preview')).toBeNull()
    expect(prices.priceFor('openai', 'gpt-5-codex')).toBeNull()
    expect(prices.priceFor('openai', 'gpt-5.3')).toBeNull()
    expect(prices.priceFor('openai', 'o3-pro')?.input).toBe(20)
    expect(prices.priceFor('openai', 'gpt-5-pro')?.output).toBe(120)
    expect(prices.priceFor('anthropic', 'claude-opus-4-5-20251101')?.input).toBe(5)
    expect(prices.priceFor('anthropic', 'claude-opus-4-20250514')?.input).toBe(15)
  })

  it('returns null for unknown models and providers', () => {
    expect(prices.priceFor('openai', 'llama-3-70b')).toBeNull()
    expect(prices.priceFor('mistral', 'gpt-4o')).toBeNull()
    expect(prices.priceFor('sim', 'claude-opus-4')).toBeNull()
  })

  it('maps provider ids to price families', () => {
    expect(providerFamily('openai-compatible')).toBe('openai')
    expect(providerFamily('OpenAI:work')).toBe('openai')
    expect(providerFamily('anthropic')).toBe('anthropic')
    expect(providerFamily('openairouter')).toBe('openairouter')
    expect(prices.priceFor('openai-compatible', 'gpt-4o')).toEqual(
      prices.priceFor('openai', 'gpt-4o'),
    )
  })
})

describe('Prices.resolve: aliases and dated snapshots', () => {
  const prices = new Prices()
  const resolved = (provider: string, model: string) => {
    const m = prices.resolve(provider, model)
    return m && { key: m.key, via: m.via, input: m.price.input, output: m.price.output }
  }

  it('resolves each alias to the entry it names, with that price', () => {
    const cases: [string, string, string, number, number][] = [
      ['anthropic', 'claude-3-5-sonnet-latest', 'claude-3-5-sonnet', 3, 15],
      ['anthropic', 'claude-3-5-haiku-latest', 'claude-3-5-haiku', 0.8, 4],
      ['anthropic', 'claude-3-7-sonnet-latest', 'claude-3-7-sonnet', 3, 15],
      ['anthropic', 'claude-3-opus-latest', 'claude-3-opus', 15, 75],
      ['anthropic', 'claude-opus-4-0', 'claude-opus-4', 15, 75],
      ['anthropic', 'claude-sonnet-4-0', 'claude-sonnet-4', 3, 15],
      ['openai', 'gpt-5-chat-latest', 'gpt-5', 1.25, 10],
      ['openai', 'gpt-5.1-chat-latest', 'gpt-5.1', 1.25, 10],
      ['openai', 'gpt-5.2-chat-latest', 'gpt-5.2', 1.75, 14],
    ]
    for (const [provider, alias, key, input, output] of cases) {
      expect(resolved(provider, alias), alias).toEqual({ key, via: 'alias', input, output })
    }
    // Every alias of the table names an entry that exists.
    for (const [family, alias, key] of prices.aliases()) {
      expect(prices.resolve(family, key)?.via, `${alias} -> ${key}`).toBe('exact')
    }
  })

  it('gives a dated snapshot with its own price its own entry, winning over the prefix rule', () => {
    expect(resolved('openai', 'gpt-4o-2024-05-13')).toEqual({
      key: 'gpt-4o-2024-05-13',
      via: 'exact',
      input: 5,
      output: 15,
    })
    expect(prices.priceFor('openai', 'gpt-4o-2024-05-13')?.cachedInput).toBe(5)
    expect(resolved('openai', 'gpt-4o-2024-08-06')).toEqual({
      key: 'gpt-4o',
      via: 'snapshot',
      input: 2.5,
      output: 10,
    })
    expect(resolved('openai', 'chatgpt-4o-latest')).toMatchObject({ key: 'chatgpt-4o-latest' })
    expect(resolved('anthropic', 'claude-opus-4-5-20251101')).toMatchObject({
      key: 'claude-opus-4-5',
      via: 'snapshot',
      input: 5,
    })
    expect(resolved('anthropic', 'claude-opus-4-1-20250805')).toMatchObject({ input: 15 })
    expect(resolved('openai', 'gpt-5.1-2025-11-13')).toMatchObject({ key: 'gpt-5.1', input: 1.25 })
  })

  it('leaves unknown ids and unknown aliases unpriced', () => {
    expect(prices.resolve('anthropic', 'claude-sonnet-4-5-latest')).toBeNull()
    expect(prices.resolve('openai', 'gpt-4o-latest')).toBeNull()
    expect(prices.resolve('openai', 'gpt-7')).toBeNull()
    expect(prices.resolve('anthropic', 'claude-opus-4-5-preview')).toBeNull()
    expect(prices.resolve('openai', 'claude-3-5-sonnet-latest')).toBeNull()
  })

  it('dates and sources every bundled entry, and says which were verified', () => {
    const rows = prices.list()
    expect(rows.length).toBeGreaterThan(30)
    for (const r of rows) {
      expect(r.checked, r.key).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(r.source, r.key).toBeTruthy()
      expect(typeof r.verified).toBe('boolean')
      if (r.family !== 'sim') expect(r.source, r.key).toMatch(/^https:\/\//)
    }
    const opus = rows.find((r) => r.key === 'claude-opus-4-5')!
    expect(opus).toMatchObject({ verified: true, checked: PRICE_TABLE_VERSION })
    expect(opus.source).toBe('https://platform.claude.com/docs/en/about-claude/pricing')
    expect(rows.find((r) => r.key === 'gpt-5.1')).toMatchObject({ verified: false })
  })

  it('lets an override win over an alias and reports it as an override', () => {
    const p = new Prices({ 'anthropic/claude-3-5-sonnet-latest': { input: 9, output: 9 } })
    expect(p.resolve('anthropic', 'claude-3-5-sonnet-latest')).toMatchObject({
      via: 'exact',
      origin: 'override',
      checked: null,
      price: { input: 9 },
    })
    expect(p.list().at(-1)).toMatchObject({ key: 'claude-3-5-sonnet-latest', origin: 'override' })
  })
})

describe('Prices overrides', () => {
  it('override a bundled price and mark the version', () => {
    const prices = new Prices({ 'openai/gpt-4o': { input: 5, output: 20 } })
    expect(prices.priceFor('openai', 'gpt-4o-2024-08-06')).toEqual({
      input: 5,
      cachedInput: 5,
      cacheWrite: 5,
      output: 20,
    })
    expect(prices.version).toMatch(new RegExp(`^${PRICE_TABLE_VERSION}\\+overrides\\.[0-9a-f]{8}$`))
    expect(prices.priceFor('openai', 'gpt-4o-mini')?.input).toBe(0.15)
    prices.setOverrides({})
    expect(prices.version).toBe(PRICE_TABLE_VERSION)
    expect(prices.priceFor('openai', 'gpt-4o')?.input).toBe(2.5)
  })

  it('give different override sets different versions', () => {
    const a = new Prices({ 'x/m': { input: 1, output: 2 } }).version
    const b = new Prices({ 'x/m': { input: 1, output: 3 } }).version
    expect(a).not.toBe(b)
    expect(new Prices({ 'x/m': { input: 1, output: 2 } }).version).toBe(a)
  })

  it('price custom models, with or without a provider', () => {
    const prices = new Prices({
      'my-vllm/llama-3-70b': { input: 0.5, cachedInput: 0.1, cacheWrite: 0.5, output: 1 },
      'house-model': { input: 1, output: 2 },
    })
    expect(prices.priceFor('my-vllm', 'llama-3-70b')?.cachedInput).toBe(0.1)
    expect(prices.priceFor('other', 'llama-3-70b')).toBeNull()
    expect(prices.priceFor('anything', 'house-model')?.output).toBe(2)
    expect(prices.priceFor('openai', 'house-model')?.output).toBe(2)
  })

  it('never capture a longer bundled model through a shorter override key', () => {
    const prices = new Prices({ 'anthropic/claude-sonnet-4': { input: 100, output: 100 } })
    expect(prices.priceFor('anthropic', 'claude-sonnet-4-20250514')?.input).toBe(100)
    expect(prices.priceFor('anthropic', 'claude-sonnet-4-5-20250929')?.input).toBe(3)
  })

  it('are validated: the error names the model, the field and the value', () => {
    const prices = new Prices({ 'openai/gpt-4o': { input: 5, output: 20 } })
    const bad = (o: unknown): (() => void) => {
      return () => prices.setOverrides(o as Record<string, { input: number; output: number }>)
    }
    expect(bad({ 'gpt-4o': { input: -1, output: 2 } })).toThrow(TypeError)
    expect(bad({ 'gpt-4o': { input: -1, output: 2 } })).toThrow(/'gpt-4o'\.input.*got -1/)
    expect(bad({ 'gpt-4o': { input: 1 } })).toThrow(/'gpt-4o'\.output/)
    expect(bad({ 'gpt-4o': { input: 1, output: '2' } })).toThrow(/'gpt-4o'\.output.*got "2"/)
    expect(bad({ 'gpt-4o': { input: 1, output: Number.NaN } })).toThrow(/'gpt-4o'\.output/)
    expect(bad({ 'gpt-4o': { input: 1, output: 2, inptu: 3 } })).toThrow(/'gpt-4o'.*inptu/)
    expect(bad({ 'gpt-4o': { input: 0.0000001, output: 2 } })).toThrow(
      /'gpt-4o'\.input.*6 decimals/,
    )
    expect(bad({ 'a/b/c': { input: 1, output: 2 } })).toThrow(/'a\/b\/c'/)
    // A rejected set leaves the previous overrides in force.
    expect(prices.priceFor('openai', 'gpt-4o')?.input).toBe(5)
  })
})
