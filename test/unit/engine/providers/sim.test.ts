import { describe, expect, it, vi } from 'vitest'
import {
  classify,
  parseDuration,
  retryDelayMs,
} from '../../../../src/main/engine/providers/classify'
import { continueMessage, estimateTokens } from '../../../../src/main/engine/providers/prompt'
import { SIM_DEFAULT_MODEL, createSimProvider } from '../../../../src/main/engine/providers/sim'
import type { ChatMessage, ProviderResponse } from '../../../../src/main/engine/core/types'
import { fakeClock as newFakeClock } from '../../../helpers/clock'

const fakeClock = (start = 1_000_000) => newFakeClock(start)

const FAST = { latencyScale: 0.01 }
const user = (content: string): ChatMessage[] => [{ role: 'user', content }]

describe('sim provider', () => {
  it('is the sim provider with a default model', () => {
    expect(createSimProvider().id).toBe('sim')
    expect(SIM_DEFAULT_MODEL).toBe('sim-small')
  })

  it('answers the same text and usage for the same seed, model and messages', async () => {
    const request = { model: SIM_DEFAULT_MODEL, messages: user('Summarize the ledger design.') }
    const a = await createSimProvider(FAST).call(request)
    const b = await createSimProvider(FAST).call(request)
    const again = await createSimProvider(FAST).call({
      ...request,
      messages: [...request.messages],
    })
    expect(a.status).toBe(200)
    expect(a.text).toBeTruthy()
    expect(b).toMatchObject({ text: a.text, usage: a.usage })
    expect(again.text).toBe(a.text)

    const otherSeed = await createSimProvider({ ...FAST, seed: 7 }).call(request)
    const otherModel = await createSimProvider(FAST).call({ ...request, model: 'sim-large' })
    const otherPrompt = await createSimProvider(FAST).call({ ...request, messages: user('Other.') })
    expect(otherSeed.text).not.toBe(a.text)
    expect(otherModel.text).not.toBe(a.text)
    expect(otherPrompt.text).not.toBe(a.text)
  })

  it('counts tokens as about chars/4 and answers about as long as it was asked', async () => {
    const sim = createSimProvider(FAST)
    const messages: ChatMessage[] = [
      { role: 'system', content: 's'.repeat(400) },
      { role: 'user', content: 'u'.repeat(4000) },
    ]
    const res = await sim.call({ model: SIM_DEFAULT_MODEL, messages })
    const usage = res.usage
    expect(usage).toBeDefined()
    expect(usage?.inputTokens).toBe(1100)
    expect(usage?.inputTokens).toBe(estimateTokens(messages))
    expect(usage?.cachedInputTokens).toBe(0)
    expect(usage?.cacheWriteTokens).toBe(0)
    expect(usage?.outputTokens).toBeGreaterThanOrEqual(800)
    expect(usage?.outputTokens).toBeLessThanOrEqual(1200)
    expect(res.text?.length).toBe((usage?.outputTokens ?? 0) * 4)
    expect(estimateTokens([{ role: 'assistant', content: res.text ?? '' }])).toBe(
      usage?.outputTokens,
    )
    expect(res.text).toMatch(/^[A-Z][a-z]+ [a-z]/)
  })

  it('clamps output tokens to [16, maxOutputTokens ?? 4096]', async () => {
    const sim = createSimProvider(FAST)
    const tiny = await sim.call({ model: 'm', messages: user('Hi') })
    expect(tiny.usage?.outputTokens).toBe(16)
    const huge = await sim.call({ model: 'm', messages: user('x'.repeat(40_000)) })
    expect(huge.usage?.outputTokens).toBe(4096)
    const capped = await sim.call({
      model: 'm',
      messages: user('x'.repeat(4000)),
      maxOutputTokens: 100,
    })
    expect(capped.usage?.outputTokens).toBe(100)
    expect(capped.text).toHaveLength(400)
  })

  it('throttles a call beyond its hidden capacity, with headers retryDelayMs can read', async () => {
    const sim = createSimProvider({ ...FAST, capacity: 6 })
    const calls = Array.from({ length: 7 }, (_, i) =>
      sim.call({ model: SIM_DEFAULT_MODEL, messages: user(`task ${i}`) }),
    )
    const answers = await Promise.all(calls)
    const throttled = answers.filter((r) => r.status === 429)
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 429])
    const res = throttled[0] as ProviderResponse
    expect(res).toBe(answers[6])
    expect(classify(res, 5)).toBe('throttled')
    // Too many at once, not out of budget: the six accepted calls are all the window counted.
    expect(res.headers['x-ratelimit-remaining-requests']).toBe('9994')
    expect(res.headers['x-ratelimit-limit-requests']).toBe('10000')
    expect(res.headers['retry-after']).toMatch(/^\d+$/)
    expect(Number(res.headers['retry-after-ms'])).toBeGreaterThan(0)
    expect(parseDuration(res.headers['x-ratelimit-reset-requests'] ?? '')).toBeGreaterThan(0)
    const wait = retryDelayMs(res.headers, Date.now())
    expect(wait).toBe(Number(res.headers['retry-after-ms']))
    expect(res.error).toMatch(/Rate limit reached for sim-small.*try again in/)
    expect(res.usage).toBeUndefined()

    // Once the six are done there is room again.
    const after = await sim.call({ model: SIM_DEFAULT_MODEL, messages: user('task 7') })
    expect(after.status).toBe(200)
  })

  it('an abort rejects with an AbortError and frees the capacity slot', async () => {
    const sim = createSimProvider({ ...FAST, capacity: 1 })
    const ctrl = new AbortController()
    const first = sim.call({ model: 'm', messages: user('long job'), signal: ctrl.signal })
    const blocked = sim.call({ model: 'm', messages: user('second') })
    const reason = new Error('operator cancelled')
    ctrl.abort(reason)
    const third = sim.call({ model: 'm', messages: user('third') })
    await expect(first).rejects.toMatchObject({ name: 'AbortError', cause: reason })
    expect((await blocked).status).toBe(429)
    expect((await third).status).toBe(200)
  })

  it('rejects at once on an already aborted signal, and aborts a pending 429 too', async () => {
    const sim = createSimProvider({ ...FAST, capacity: 1 })
    await expect(
      sim.call({ model: 'm', messages: user('x'), signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ name: 'AbortError' })
    const held = sim.call({ model: 'm', messages: user('a') })
    const ctrl = new AbortController()
    const throttled = sim.call({ model: 'm', messages: user('b'), signal: ctrl.signal })
    ctrl.abort()
    await expect(throttled).rejects.toMatchObject({ name: 'AbortError' })
    expect((await held).status).toBe(200)
  })

  it('shows the seed quadratic growth when a multi-step task resends its history', async () => {
    const sim = createSimProvider(FAST)
    const prompt = 'p'.repeat(2000) // 500 tokens
    const messages: ChatMessage[] = user(prompt)
    const inputs: number[] = []
    for (let step = 1; step <= 5; step++) {
      const res = await sim.call({ model: SIM_DEFAULT_MODEL, messages: [...messages] })
      expect(res.status).toBe(200)
      inputs.push(res.usage?.inputTokens ?? 0)
      messages.push({ role: 'assistant', content: res.text ?? '' }, continueMessage(step + 1, 5))
    }
    const first = inputs[0] as number
    expect(first).toBe(500)
    inputs.forEach((input, i) => {
      // Step k resends k-1 answers of 0.8..1.2 x the prompt plus short "Continue" turns.
      expect(input).toBeGreaterThanOrEqual(first * (1 + 0.8 * i))
      expect(input).toBeLessThanOrEqual(first * (1 + 1.2 * i) + 10 * i)
    })
    const total = inputs.reduce((a, b) => a + b, 0)
    // Seed: avg * steps * (steps + 1) / 2 = 15 x the prompt for 5 steps.
    expect(total / first).toBeGreaterThan(15 * 0.8)
    expect(total / first).toBeLessThan(15 * 1.2)
  })

  it('answers errorRate of calls with 500, reproducibly, and lets a retry succeed', async () => {
    const prompts = Array.from({ length: 200 }, (_, i) => `distinct task ${i}`)
    const run = async () => {
      const sim = createSimProvider({ ...FAST, errorRate: 0.3, capacity: 1000 })
      const answers = await Promise.all(
        prompts.map((p) => sim.call({ model: 'm', messages: user(p) })),
      )
      return answers.map((r) => r.status)
    }
    const statuses = await run()
    const failures = statuses.filter((s) => s === 500).length
    expect(failures).toBeGreaterThan(40)
    expect(failures).toBeLessThan(80)
    expect(statuses.every((s) => s === 200 || s === 500)).toBe(true)
    expect(await run()).toEqual(statuses)

    const sim = createSimProvider({ ...FAST, errorRate: 0.5 })
    const failing = prompts.find((_, i) => statuses[i] === 500) as string
    const attempts: number[] = []
    for (let i = 0; i < 30 && attempts.at(-1) !== 200; i++) {
      const res = await sim.call({ model: 'm', messages: user(failing) })
      if (res.status === 500) {
        expect(res.error).toMatch(/server had an error/)
        expect(classify(res, 5)).toBe('error')
      }
      attempts.push(res.status)
    }
    expect(attempts.at(-1)).toBe(200)

    const always = createSimProvider({ ...FAST, errorRate: 1 })
    expect((await always.call({ model: 'm', messages: user('x') })).status).toBe(500)
    const never = createSimProvider({ ...FAST, capacity: 1000 })
    const ok = await Promise.all(
      prompts.slice(0, 50).map((p) => never.call({ model: 'm', messages: user(p) })),
    )
    expect(ok.every((r) => r.status === 200)).toBe(true)
  })

  it('reports and enforces the request budget over a rolling minute of clock time', async () => {
    const clock = fakeClock()
    const sim = createSimProvider({ ...FAST, requestsPerMinute: 3, clock })
    const statuses: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await sim.call({ model: 'm', messages: user(`r${i}`) })
      statuses.push(`${res.status}:${res.headers['x-ratelimit-remaining-requests']}`)
      clock.advance(1000)
    }
    expect(statuses).toEqual(['200:2', '200:1', '200:0'])
    const over = await sim.call({ model: 'm', messages: user('r3') })
    expect(over.status).toBe(429)
    // The first call leaves the window 60 s after it was made; 3 s have passed.
    expect(retryDelayMs(over.headers, clock.now())).toBe(57_000)
    clock.advance(57_000)
    const again = await sim.call({ model: 'm', messages: user('r4') })
    expect(again.status).toBe(200)
    expect(again.headers['x-ratelimit-remaining-requests']).toBe('0')
  })

  it('with requestsPerMinute 0 has no budget: no 429 and no budget headers, however many calls', async () => {
    const clock = fakeClock()
    const sim = createSimProvider({ ...FAST, requestsPerMinute: 0, capacity: 1_000, clock })
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => sim.call({ model: 'm', messages: user(`u${i}`) })),
    )
    expect(answers.every((r) => r.status === 200)).toBe(true)
    expect(answers.some((r) => 'x-ratelimit-limit-requests' in r.headers)).toBe(false)
    // The same calls under a budget of 100 a minute: most are refused.
    const budgeted = createSimProvider({ ...FAST, requestsPerMinute: 100, capacity: 1_000, clock })
    const refused = await Promise.all(
      Array.from({ length: 300 }, (_, i) => budgeted.call({ model: 'm', messages: user(`b${i}`) })),
    )
    expect(refused.filter((r) => r.status === 429)).toHaveLength(200)
  })

  it('keeps the default budget far above the near-limit threshold', async () => {
    const sim = createSimProvider(FAST)
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => sim.call({ model: 'm', messages: user(`q${i}`) })),
    )
    for (const res of answers) expect(classify(res, 5)).toBe('ok')
  })

  it('takes (60 ms + 0.02 ms per input token + up to 40 ms jitter) x latencyScale', async () => {
    // On fake timers: the latency is what the provider waits for, not what a busy machine adds.
    vi.useFakeTimers()
    try {
      for (const latencyScale of [1, 3]) {
        const sim = createSimProvider({ latencyScale })
        let answered = false
        // 5000 input tokens: +100 ms
        const call = sim.call({ model: 'm', messages: user('x'.repeat(20_000)) }).then((res) => {
          answered = true
          return res
        })
        await vi.advanceTimersByTimeAsync(160 * latencyScale - 1)
        expect(answered).toBe(false)
        await vi.advanceTimersByTimeAsync(40 * latencyScale + 1)
        expect(answered).toBe(true)
        expect((await call).status).toBe(200)
      }
    } finally {
      vi.useRealTimers()
    }
  })

  it('answers an invalid request with 400', async () => {
    const sim = createSimProvider(FAST)
    expect((await sim.call({ model: 'm', messages: [] })).status).toBe(400)
    const bad = await sim.call({ model: 'm', messages: user('x'), maxOutputTokens: 0 })
    expect(bad).toMatchObject({ status: 400, error: expect.stringMatching(/max_tokens/) })
  })

  it.each([
    [{ capacity: 0 }, /`capacity`.*`0`/],
    [{ capacity: 2.5 }, /`capacity`.*`2.5`/],
    [{ latencyScale: -1 }, /`latencyScale`.*`-1`/],
    // 0 is no limit (--sim-rpm 0); a negative or fractional budget is a mistake.
    [{ requestsPerMinute: -1 }, /`requestsPerMinute`.*`-1`/],
    [{ requestsPerMinute: 2.5 }, /`requestsPerMinute`.*`2.5`/],
    [{ errorRate: 1.5 }, /`errorRate`.*`1.5`/],
    [{ errorRate: Number.NaN }, /`errorRate`.*`NaN`/],
    [{ seed: 'x' }, /`seed`.*`x`/],
    [{ clock: {} }, /`clock`/],
  ])('rejects options %o with a TypeError naming the field', (options, message) => {
    expect(() => createSimProvider(options as never)).toThrow(TypeError)
    expect(() => createSimProvider(options as never)).toThrow(message)
  })
})
