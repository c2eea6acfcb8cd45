// What the batch doubles answer and bill: a deterministic function of the request, so a test can
// recompute any answer, and a bill at the batch rate computed per request as the vendors bill it.
import { createHash } from 'node:crypto'

/** List prices the doubles bill, USD per 1M tokens (the batch rate is half of them). */
export interface ListPrice {
  input: number
  output: number
}

export interface DoubleAnswer {
  text: string
  inputTokens: number
  outputTokens: number
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** The answer to one request body (the same body, the same answer, on either vendor). */
export function answerFor(body: unknown): DoubleAnswer {
  const messages = (body as { messages?: unknown }).messages ?? null
  const system = (body as { system?: unknown }).system ?? null
  const text = JSON.stringify({ system, messages })
  const h = digest(text)
  return {
    text: `answer ${h.slice(0, 16)}`,
    inputTokens: Math.max(1, Math.ceil(text.length / 4)),
    outputTokens: 5 + (parseInt(h.slice(16, 20), 16) % 40),
  }
}

/** Whether the vendor errors this line (a deterministic share of them, by custom_id). */
export function erroredLine(customId: string, share: number, seed: number): boolean {
  if (share <= 0) return false
  return parseInt(digest(`${seed}:${customId}`).slice(0, 8), 16) / 0x1_0000_0000 < share
}

/**
 * One request's price at the batch rate in micro-dollars, rounded once half up: the same integer
 * arithmetic a vendor's invoice line uses (rates in micro-dollars per million tokens).
 */
export function batchCostMicros(a: DoubleAnswer, price: ListPrice): number {
  const rate = (usdPerM: number) => BigInt(Math.round(usdPerM * 0.5 * 1e6))
  const scaled =
    BigInt(a.inputTokens) * rate(price.input) + BigInt(a.outputTokens) * rate(price.output)
  return Number((scaled + 500_000n) / 1_000_000n)
}

/** Fisher-Yates with a seeded LCG: the order lines come out in, the same for the same seed. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items]
  let s = seed >>> 0 || 1
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    const j = s % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}
