// Simulated providers with a hidden capacity that changes during the run. Each one keeps the books
// the table needs: what it served and what it allowed, so utilization is measured where the
// capacity lives, not guessed by the contenders.
import type { ProviderResponse } from '../../src/main/engine/core/types'
import { T0 } from './virtual-time'

export interface BenchTask {
  id: number
  inputTokens: number
  outputTokens: number
  /** What a caller can know before sending: the input counted at about four characters a token. */
  estimate: { inputTokens: number; outputTokens: number }
  latencyMs: number
}

/** A value that changes at given offsets from T0: the hidden capacity. */
export interface Phase {
  fromMs: number
  value: number
}

export interface SimulatedProvider {
  call(task: BenchTask): Promise<ProviderResponse>
  /** For the oracle: ms until the provider would accept this task (Infinity: after a completion). */
  oracleDelayMs(task: BenchTask): number
  /** Offsets from T0 where the capacity changes. */
  readonly changes: number[]
  /** Work served / what the provider allowed, closing the books at `end`. */
  utilization(end: number): number
}

function valueAt(phases: Phase[], t: number): number {
  let value = (phases[0] as Phase).value
  for (const p of phases) if (t - T0 >= p.fromMs) value = p.value
  return value
}

/** Calls `step(from, to, value)` for each stretch of [from, to) with one phase value. */
function eachStretch(
  phases: Phase[],
  from: number,
  to: number,
  step: (a: number, b: number, value: number) => void,
): void {
  let a = from
  while (a < to) {
    const next = phases.map((p) => T0 + p.fromMs).find((at) => at > a) ?? Infinity
    const b = Math.min(to, next)
    step(a, b, valueAt(phases, a))
    a = b
  }
}

function later<T>(ms: number, answer: () => T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(answer()), ms))
}

function usageOf(task: BenchTask): ProviderResponse['usage'] {
  return {
    inputTokens: task.inputTokens,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: task.outputTokens,
  }
}

/** Scenario a: a call arriving while `capacity` calls are in flight is refused, with no headers. */
export function concurrencyProvider(
  phases: Phase[],
  random: () => number,
): SimulatedProvider & { inflight(): number; capacityNow(): number } {
  let inflight = 0
  let last = T0
  let served = 0
  let allowed = 0
  const advance = (now: number) => {
    eachStretch(phases, last, now, (a, b, capacity) => {
      served += Math.min(inflight, capacity) * (b - a)
      allowed += capacity * (b - a)
    })
    last = Math.max(last, now)
  }
  return {
    changes: phases.slice(1).map((p) => p.fromMs),
    inflight: () => inflight,
    capacityNow: () => valueAt(phases, Date.now()),
    call(task) {
      const now = Date.now()
      advance(now)
      if (inflight >= valueAt(phases, now)) {
        return later(5 + random() * 25, () => ({
          status: 429,
          headers: {},
          error: 'too many concurrent requests',
        }))
      }
      inflight++
      return later(task.latencyMs, () => {
        advance(Date.now())
        inflight--
        return { status: 200, headers: {}, text: 'ok', usage: usageOf(task) }
      })
    },
    oracleDelayMs: () => (inflight < valueAt(phases, Date.now()) ? 0 : Infinity),
    utilization(end) {
      advance(end)
      return served / allowed
    },
  }
}

/**
 * A bucket refilled continuously up to its limit, a per-minute budget (how both vendors describe
 * theirs). `overflow` is refill lost to a full bucket: allowance nobody used.
 */
class Bucket {
  level: number
  overflow = 0
  #last = T0
  constructor(readonly phases: Phase[]) {
    this.level = valueAt(phases, T0)
  }
  limit(now: number): number {
    return valueAt(this.phases, now)
  }
  advance(now: number): void {
    eachStretch(this.phases, this.#last, now, (a, b, limit) => {
      // A lowered limit takes away what is above it; that was never allowed.
      this.level = Math.min(this.level, limit)
      const refilled = this.level + (limit / 60_000) * (b - a)
      this.overflow += Math.max(0, refilled - limit)
      this.level = Math.min(limit, refilled)
    })
    this.#last = Math.max(this.#last, now)
    this.level = Math.min(this.level, this.limit(now))
  }
  /** Ms until `cost` is in the bucket at today's rate. */
  waitMs(cost: number, now: number): number {
    const limit = this.limit(now)
    return Math.max(0, (Math.min(cost, limit) - this.level) / (limit / 60_000))
  }
  /** Ms until the bucket is full again. */
  fullInMs(now: number): number {
    return this.waitMs(this.limit(now), now)
  }
}

type Style = 'openai' | 'anthropic'

/** Go-style duration as OpenAI sends it (`120ms`, `59.880s`). */
function duration(ms: number): string {
  const whole = Math.ceil(ms)
  return whole < 1000 ? `${whole}ms` : `${(whole / 1000).toFixed(3)}s`
}

/** RFC 3339 at whole seconds, rounded up, as Anthropic sends it. */
function instant(at: number): string {
  return new Date(Math.ceil(at / 1000) * 1000).toISOString().replace('.000Z', 'Z')
}

function budgetHeaders(style: Style, buckets: [string, Bucket][], now: number) {
  const headers: Record<string, string> = {}
  for (const [dim, bucket] of buckets) {
    const limit = String(bucket.limit(now))
    const remaining = String(Math.max(0, Math.floor(bucket.level)))
    if (style === 'openai') {
      headers[`x-ratelimit-limit-${dim}`] = limit
      headers[`x-ratelimit-remaining-${dim}`] = remaining
      headers[`x-ratelimit-reset-${dim}`] = duration(bucket.fullInMs(now))
    } else {
      headers[`anthropic-ratelimit-${dim}-limit`] = limit
      headers[`anthropic-ratelimit-${dim}-remaining`] = remaining
      headers[`anthropic-ratelimit-${dim}-reset`] = instant(now + bucket.fullInMs(now))
    }
  }
  return headers
}

/**
 * Scenarios b and c: a per-minute budget announced in the answers' headers, enforced with 429s
 * and a retry-after. `binding` is the budget that changes (requests in b, input tokens in c); the
 * others are announced too but never run out.
 */
export function budgetProvider(options: {
  style: Style
  binding: 'requests' | 'input-tokens'
  phases: Phase[]
  others: Record<string, number>
  random: () => number
}): SimulatedProvider {
  const { style, binding, phases, others, random } = options
  const main = new Bucket(phases)
  const rest = Object.entries(others).map(([d, l]): [string, Bucket] => [
    d,
    new Bucket([{ fromMs: 0, value: l }]),
  ])
  const all: [string, Bucket][] = [[binding, main], ...rest]
  const costOf = (task: BenchTask, dim: string): number =>
    dim === 'requests'
      ? 1
      : dim === 'input-tokens'
        ? task.inputTokens
        : dim === 'output-tokens'
          ? 0 // counted when the answer is complete
          : task.inputTokens + task.outputTokens
  let served = 0
  const headersNow = (now: number) => {
    const h = budgetHeaders(style, all, now)
    if (style === 'anthropic') {
      // `tokens-*` repeats the most restrictive token budget: here the input one.
      for (const part of ['limit', 'remaining', 'reset']) {
        h[`anthropic-ratelimit-tokens-${part}`] = h[`anthropic-ratelimit-input-tokens-${part}`]!
      }
    }
    return h
  }
  return {
    changes: phases.slice(1).map((p) => p.fromMs),
    call(task) {
      const now = Date.now()
      for (const [, b] of all) b.advance(now)
      const refused = all.find(([dim, b]) => b.level < costOf(task, dim))
      if (refused) {
        const waitMs = Math.max(...all.map(([dim, b]) => b.waitMs(costOf(task, dim), now)))
        const headers = headersNow(now)
        headers['retry-after'] = String(Math.max(1, Math.ceil(waitMs / 1000)))
        if (style === 'openai') headers['retry-after-ms'] = String(Math.max(1, Math.ceil(waitMs)))
        return later(5 + random() * 25, () => ({ status: 429, headers, error: 'rate limited' }))
      }
      for (const [dim, b] of all) b.level -= costOf(task, dim)
      served += costOf(task, binding)
      const headers = headersNow(now)
      return later(task.latencyMs, () => {
        const output = all.find(([dim]) => dim === 'output-tokens')?.[1]
        if (output) {
          output.advance(Date.now())
          output.level -= task.outputTokens
        }
        return { status: 200, headers, text: 'ok', usage: usageOf(task) }
      })
    },
    oracleDelayMs(task) {
      const now = Date.now()
      for (const [, b] of all) b.advance(now)
      return Math.ceil(Math.max(...all.map(([dim, b]) => b.waitMs(costOf(task, dim), now))))
    },
    utilization(end) {
      main.advance(end)
      return served / (served + main.overflow + main.level)
    },
  }
}
