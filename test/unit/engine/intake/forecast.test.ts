import { describe, expect, it } from 'vitest'
import {
  expectedSimOutput,
  forecastBatch,
  forecastTask,
  type ForecastTask,
} from '../../../../src/main/engine/intake/forecast'
import { PRICE_TABLE_VERSION, Prices } from '../../../../src/main/engine/pricing/prices'
import { continueMessage, taskMessages } from '../../../../src/main/engine/providers/prompt'
import { createSimProvider } from '../../../../src/main/engine/providers/sim'
import type { ChatMessage, JsonValue } from '../../../../src/main/engine/core/types'

/**
 * The closed form of a multi-step agent's input, the oracle the forecast is checked against: when
 * every step sends `avgPerStep` new tokens and resends the whole history, step k sends k × avg and
 * the sum is avg × steps × (steps + 1) / 2 (the seed: 1, 5, 10, 20 steps at 1,000 → 1,000 /
 * 15,000 / 55,000 / 210,000). The forecast replays the runner step by step instead: with a prompt
 * of P tokens answered in O ≈ P tokens and a "Continue" turn of C tokens, step k sends
 * P + (k − 1) × (O + C), close to this when O ≈ P ≫ C and far from it for short prompts.
 */
function cumulativeInputTokens(steps: number, avgPerStep = 1000): number {
  return avgPerStep * ((steps * (steps + 1)) / 2)
}

describe('cumulativeInputTokens (the oracle)', () => {
  it('reproduces the seed: 1, 5, 10, 20 steps → 1,000 / 15,000 / 55,000 / 210,000', () => {
    expect([1, 5, 10, 20].map((s) => cumulativeInputTokens(s))).toEqual([
      1_000, 15_000, 55_000, 210_000,
    ])
  })
})

// 4,000 characters ≈ 1,000 tokens per step (prompt.ts estimates 4 characters a token).
const prompt1k = 'x'.repeat(4_000)

/**
 * Tokens the "Continue: step k of n." turns add to a task's input: step k resends the turns of
 * steps 2..k, and each call's estimate rounds up (ceil(chars / 4)).
 */
function continueOverhead(steps: number): number {
  let chars = 0
  let tokens = 0
  for (let k = 2; k <= steps; k++) {
    chars += continueMessage(k, steps).content.length
    tokens += Math.ceil(chars / 4)
  }
  return tokens
}

// Hand-computed for a 1,000-token prompt on the sim, which answers ~1,000 tokens per step: step k
// sends 1,000 + (k − 1) × 1,000 plus the continue turns, so the input is the seed's growth plus
// continueOverhead (10 steps: 55,000 + 262). Cost on sim-small at $3 / $15 per 1M.
const TEN_STEPS = {
  inputTokens: 55_262,
  outputTokens: 10_000,
  costMicros: 55_262 * 3 + 10_000 * 15,
}
const ONE_STEP = { inputTokens: 1_000, outputTokens: 1_000, costMicros: 1_000 * 3 + 1_000 * 15 }
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
    expect(continueOverhead(10)).toBe(262)
    expect(f.total).toEqual({
      taskType: 'total',
      tasks: 1,
      distinctTasks: 1,
      duplicates: 0,
      reused: 0,
      calls: 10,
      ...TEN_STEPS,
      unpricedTasks: 0,
      savedByDedupMicros: 0,
    })
    expect(f.priceVersion).toBe(PRICE_TABLE_VERSION)
    expect(f.dedup).toBe(true)
    expect(f.assumedOutputTokens).toBeNull()
    expect(f.models).toEqual([
      { provider: 'sim', model: 'sim-small', tasks: 1, price: { input: 3, output: 15 } },
    ])
  })

  it('prices the same calls at the vendors’ batch rate when asked (the import dialog’s choice)', () => {
    const openai = (fp: string) => task({ fp, steps: 1, provider: 'openai', model: 'gpt-4o-mini' })
    const tasks = [openai('a'), openai('b'), openai('a'), task({ fp: 'sim' })]
    const live = forecastBatch(tasks, prices, { outputTokensPerStep: 1000 })
    expect('batchCostMicros' in live.total).toBe(false)
    const f = forecastBatch(tasks, prices, { outputTokensPerStep: 1000, batchRates: true })
    const gpt = prices.priceFor('openai', 'gpt-4o-mini')!
    const batch = prices.batchPriceFor('openai', 'gpt-4o-mini')!
    expect(batch.input).toBeCloseTo(gpt.input / 2, 9)
    // The duplicate is not called; the sim task has no batch rate and is the unknown part.
    const usage = { inputTokens: f.total.inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0 }
    const simTask = forecastTask(task({ fp: 'sim' }), { outputTokensPerStep: 1000 })
    const openaiInput = usage.inputTokens - simTask.inputTokens
    expect(f.total.batchCostMicros).toBe(
      prices.costMicros({ ...usage, inputTokens: openaiInput, outputTokens: 2000 }, batch),
    )
    expect(f.total.costMicros).toBe(live.total.costMicros)
    // Only sim tasks: nothing can be priced at a batch rate.
    expect(forecastBatch([task()], prices, { batchRates: true }).total.batchCostMicros).toBeNull()
  })

  it('counts a task whose answer is stored as reused at $0, its duplicates too, unless audit', () => {
    const tasks = [task(), task({ fp: 'fpB', steps: 1 }), task(), task({ fp: 'fpB', steps: 1 })]
    const asked: string[] = []
    const stored = (fp: string) => {
      asked.push(fp)
      return fp === 'fpA'
    }
    const f = forecastBatch(tasks, prices, { stored })
    // Asked once per distinct fingerprint, with the whole fingerprint.
    expect(asked).toEqual(['fpA', 'fpB'])
    expect(f.total).toMatchObject({
      tasks: 4,
      distinctTasks: 2,
      duplicates: 2,
      reused: 2,
      calls: 1,
      costMicros: ONE_STEP.costMicros,
      savedByDedupMicros: 2 * TEN_STEPS.costMicros + ONE_STEP.costMicros,
    })
    const all = forecastBatch(tasks, prices, { stored: () => true })
    expect(all.total).toMatchObject({ reused: 4, calls: 0, inputTokens: 0, costMicros: 0 })
    // Audit mode runs every task: stored answers are not even asked about.
    const audit = forecastBatch(tasks, prices, { dedup: false, stored: () => true })
    expect(audit.total).toMatchObject({ reused: 0, calls: 22 })
  })

  it('grows like the seed (avg × s(s+1)/2) when the answer is as long as the prompt', () => {
    const input = [1, 5, 10, 20].map((s) => forecastBatch([task({ steps: s })], prices).total)
    expect(input.map((t) => t.inputTokens)).toEqual([1_000, 15_056, 55_262, 211_112])
    ;[1, 5, 10, 20].forEach((s, i) => {
      // The exact difference from the closed form is the continue turns: under 1 % here.
      expect(input[i]!.inputTokens - cumulativeInputTokens(s, 1_000)).toBe(continueOverhead(s))
      expect(input[i]!.outputTokens).toBe(s * 1_000)
    })
  })

  it('counts identical fingerprints once and prices what dedup saves', () => {
    const tasks = [
      task(),
      task(),
      task(),
      task({ fp: 'fpB', steps: 1, payload: { prompt: prompt1k.toUpperCase() } }),
    ]
    const one = TEN_STEPS.costMicros // 315,786
    const single = ONE_STEP.costMicros // 18,000
    const on = forecastBatch(tasks, prices)
    expect(on.total).toMatchObject({
      tasks: 4,
      distinctTasks: 2,
      duplicates: 2,
      calls: 11,
      inputTokens: 56_262,
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
    expect(f.byType.map((t) => [t.taskType, t.tasks, t.distinctTasks, t.duplicates])).toEqual([
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
    const byType = Object.fromEntries(f.byType.map((t) => [t.taskType, t]))
    expect(byType['known']).toMatchObject({ costMicros: 315_786, unpricedTasks: 0 })
    expect(byType['mixed']).toMatchObject({ costMicros: 18_000, unpricedTasks: 1 })
    // The duplicate of an unpriced task is reused (not run, not unpriced) and its saving unknown.
    expect(byType['unknown']).toMatchObject({
      costMicros: null,
      unpricedTasks: 1,
      duplicates: 1,
      savedByDedupMicros: 0,
      inputTokens: 55_262,
    })
    expect(f.total).toMatchObject({ costMicros: 333_786, unpricedTasks: 2 })
    expect(f.byType.at(-1)?.taskType).toBe('unknown')
  })

  it('uses a fixed output per step when given, and an empty batch costs nothing', () => {
    const f = forecastBatch([task()], prices, { outputTokensPerStep: 50 })
    expect(f.total.outputTokens).toBe(500)
    // Step k resends 1,000 + (k − 1) × 50 answer tokens: 10,000 + 50 × 45, plus the continue turns.
    expect(f.total.inputTokens).toBe(12_250 + 262)
    expect(f.total.costMicros).toBe(12_512 * 3 + 500 * 15)
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

describe('forecastTask', () => {
  it('models short prompts on the sim: answers of at least 16 tokens, resent each step', () => {
    // "hi there" = 8 chars = 2 tokens; the sim answers clamp(2 × [0.8, 1.2], 16, 4096) = 16 tokens
    // (64 chars). Step 2 sends 8 + 64 + 22 ("Continue: step 2 of 3.") = 94 chars = 24 tokens, step 3
    // 94 + 64 + 22 = 180 chars = 45 tokens; the old P × s(s+1)/2 said 12 in and 6 out.
    expect(
      forecastTask({ type: 't', payload: { prompt: 'hi there' }, steps: 3, provider: 'sim' }),
    ).toEqual({ calls: 3, inputTokens: 2 + 24 + 45, outputTokens: 48 })
    // Elsewhere the answer defaults to the prompt's size: 2 tokens (8 chars) per step, so step 2
    // sends 8 + 8 + 22 = 38 chars (10 tokens) and step 3 68 chars (17 tokens).
    expect(
      forecastTask({ type: 't', payload: { prompt: 'hi there' }, steps: 3, provider: 'openai' }),
    ).toEqual({ calls: 3, inputTokens: 2 + 10 + 17, outputTokens: 6 })
    expect(
      forecastTask(
        { type: 't', payload: { prompt: 'hi there' }, steps: 3, provider: 'sim' },
        { outputTokensPerStep: 2 },
      ),
    ).toEqual({ calls: 3, inputTokens: 29, outputTokens: 6 })
  })

  it('sizes the sim answer on the longest user message, not the system prompt', () => {
    const payload = { system: 'y'.repeat(4_000), prompt: 'z'.repeat(400) }
    expect(forecastTask({ type: 't', payload, steps: 1, provider: 'sim' })).toEqual({
      calls: 1,
      inputTokens: 1_100,
      outputTokens: 100,
    })
    expect(forecastTask({ type: 't', payload, steps: 1, provider: 'anthropic' })).toMatchObject({
      outputTokens: 1_100,
    })
    expect(forecastTask({ type: 't', payload, steps: 0, provider: 'sim' })).toEqual({
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
    })
  })

  it('expects the clamped sim answer near both bounds', () => {
    expect([1, 13, 20, 1_000, 5_120].map(expectedSimOutput)).toEqual([16, 16, 20, 1_000, 4_096])
    // 16 × [0.8, 1.2]: half the range is lifted to 16: (16 × 3.2 + (19.2² − 16²) / 2) / 6.4.
    expect(expectedSimOutput(16)).toBeCloseTo(16.8, 10)
    // 4,096 × [0.8, 1.2]: half the range is cut to 4,096, the other half averages 0.9 × 4,096.
    expect(expectedSimOutput(4_096)).toBeCloseTo(0.95 * 4_096, 6)
  })

  it('matches the sim provider driven like the runner (input to rounding, output ±5 %)', async () => {
    const sim = createSimProvider({ latencyScale: 0 })
    /** runner.ts #execute: step 1 = taskMessages; then the answer and a continue turn. */
    async function run(type: string, payload: JsonValue, steps: number) {
      const messages: ChatMessage[] = taskMessages(type, payload)
      let text = ''
      let inputTokens = 0
      let outputTokens = 0
      for (let step = 1; step <= steps; step++) {
        if (step > 1) {
          messages.push({ role: 'assistant', content: text })
          messages.push(continueMessage(step, steps))
        }
        const r = await sim.call({ model: 'sim-small', messages: [...messages] })
        if (r.status !== 200 || !r.usage) throw new Error(`sim answered ${r.status}`)
        inputTokens += r.usage.inputTokens
        outputTokens += r.usage.outputTokens
        text = r.text ?? ''
      }
      return { inputTokens, outputTokens }
    }
    const words = (n: number, seed: number) =>
      Array.from({ length: n }, (_, i) => ['alpha', 'beta', 'gamma', 'delta'][(i * seed) % 4]).join(
        ' ',
      )
    const kinds: { name: string; steps: number; payloads: JsonValue[] }[] = [
      {
        name: '3-word prompts',
        steps: 1,
        payloads: range(40, (i) => ({ prompt: `${words(2, i)} ${i}` })),
      },
      {
        name: '3-word agents',
        steps: 10,
        payloads: range(10, (i) => ({ prompt: `${words(2, i)} ${i}` })),
      },
      {
        name: '50-word agents',
        steps: 10,
        payloads: range(10, (i) => ({ prompt: `${i} ${words(50, i)}` })),
      },
      {
        name: 'chat messages',
        steps: 5,
        payloads: range(10, (i) => ({
          messages: [
            { role: 'system', content: 'Be terse. '.repeat(i + 1) },
            { role: 'user', content: words(5 + i * 7, 3) },
            { role: 'assistant', content: 'ok' },
            { role: 'user', content: `go ${i}` },
          ],
        })),
      },
      {
        name: 'raw payloads',
        steps: 3,
        payloads: range(10, (i) => ({ rows: [i, i * 2], tag: words(i, 1) })),
      },
      {
        name: 'near 4,096',
        steps: 3,
        payloads: range(6, (i) => ({ prompt: `${i}${'x'.repeat(15_000 + i * 500)}` })),
      },
    ]
    for (const { name, steps, payloads } of kinds) {
      const actual = { inputTokens: 0, outputTokens: 0 }
      const forecast = { inputTokens: 0, outputTokens: 0 }
      for (const payload of payloads) {
        const a = await run(name, payload, steps)
        const f = forecastTask({ type: name, payload, steps, provider: 'sim' })
        actual.inputTokens += a.inputTokens
        actual.outputTokens += a.outputTokens
        forecast.inputTokens += f.inputTokens
        forecast.outputTokens += f.outputTokens
      }
      const error = (k: keyof typeof actual) => Math.abs(forecast[k] / actual[k] - 1)
      // Input differs only by rounding; output by the sim's per-call factor in [0.8, 1.2].
      expect(error('inputTokens'), `${name} input`).toBeLessThan(0.01)
      expect(error('outputTokens'), `${name} output`).toBeLessThan(0.05)
    }
  })
})

function range<T>(n: number, f: (i: number) => T): T[] {
  return Array.from({ length: n }, (_, i) => f(i))
}
