// The GenAI semantic conventions' values as Pacer derives them from its rows: provider names,
// request attributes from a task's params, the answer's finish reason, USD from micros, and the
// span ids that follow from what a span stands for.
import { createHash } from 'node:crypto'
import type { Attributes } from '@opentelemetry/api'

/** Provider ids as the conventions name them (gen_ai.provider.name's well-known values). */
export function providerName(provider: string): string {
  if (provider === 'sim') return 'pacer.sim'
  if (provider === 'openai-compatible') return 'openai'
  return provider
}

export function requestAttributes(params: string | null): Attributes {
  if (!params) return {}
  let p: unknown
  try {
    p = JSON.parse(params)
  } catch {
    return {}
  }
  if (typeof p !== 'object' || p === null) return {}
  const o = p as Record<string, unknown>
  const out: Attributes = {}
  const max = o['max_tokens'] ?? o['maxTokens'] ?? o['max_output_tokens']
  if (typeof max === 'number') out['gen_ai.request.max_tokens'] = max
  if (typeof o['temperature'] === 'number') out['gen_ai.request.temperature'] = o['temperature']
  if (typeof o['top_p'] === 'number') out['gen_ai.request.top_p'] = o['top_p']
  if (typeof o['seed'] === 'number') out['gen_ai.request.seed'] = o['seed']
  return out
}

export function finishReason(result: string | null): string | null {
  if (!result) return null
  try {
    const r = JSON.parse(result) as { finishReason?: unknown }
    return typeof r.finishReason === 'string' ? r.finishReason : null
  } catch {
    return null
  }
}

export function usd(micros: number): number {
  return micros / 1_000_000
}

export function hex(what: string, length: number): string {
  return createHash('sha256').update(what).digest('hex').slice(0, length)
}
