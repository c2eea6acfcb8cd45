// The GenAI semantic conventions' values as Pacer derives them from its rows: provider names,
// request attributes from a task's params, the answer's finish reason, USD from micros, and the
// span ids that follow from what a span stands for.
import { createHash } from 'node:crypto'
import type { Attributes } from '@opentelemetry/api'
import type { GenAiCall } from './pipeline'

/** Provider ids as the conventions name them (gen_ai.provider.name's well-known values). */
export function providerName(provider: string): string {
  if (provider === 'sim') return 'pacer.sim'
  if (provider === 'openai-compatible') return 'openai'
  return provider
}

/** A ledger row's outcome and status, as a call's `error.type` needs them. */
interface CallOutcome {
  outcome: string
  status: number | null
}

/** A failed call's `error.type`: `timeout`, else its HTTP status (or its outcome). */
export function callErrorType(r: CallOutcome): string | undefined {
  if (r.outcome === 'timeout') return 'timeout'
  if (r.outcome === 'throttled' || r.outcome === 'error') return String(r.status ?? r.outcome)
  return undefined
}

/**
 * A provider call as the GenAI client metrics record it: the attributes they share, its tokens
 * (input including cached, as on the span), its latency in seconds.
 */
export function metricCall(
  r: CallOutcome & {
    provider: string
    model: string
    inputTokens: number
    outputTokens: number
    latencyMs: number | null
  },
  errorType = callErrorType(r),
): GenAiCall {
  return {
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': providerName(r.provider),
      'gen_ai.request.model': r.model,
      'gen_ai.response.model': r.model,
    },
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    seconds: r.latencyMs === null ? null : r.latencyMs / 1000,
    errorType,
  }
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

/**
 * A task's prompt and answer as the conventions' opt-in `gen_ai.input.messages` and
 * `gen_ai.output.messages` (JSON strings), every secret replaced by `[redacted]`.
 */
export function contentAttributes(
  t: { payload: string | null; result: string | null },
  secrets: readonly string[],
): Attributes {
  const out: Attributes = {}
  const prompt = promptOf(t.payload)
  if (prompt !== null) {
    out['gen_ai.input.messages'] = redactSecrets(
      JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
      secrets,
    )
  }
  const answer = answerOf(t.result)
  if (answer !== null) {
    out['gen_ai.output.messages'] = redactSecrets(
      JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: answer }] }]),
      secrets,
    )
  }
  return out
}

/**
 * `text` with each secret (8 characters or more: a toy key like 'x' would mangle words) and its
 * JSON-escaped form replaced by `[redacted]`, as provider errors are redacted.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) {
    if (secret.length < 8) continue
    out = out.split(secret).join('[redacted]')
    const escaped = JSON.stringify(secret).slice(1, -1)
    if (escaped !== secret) out = out.split(escaped).join('[redacted]')
  }
  return out
}

function promptOf(payload: string | null): string | null {
  if (payload === null) return null
  let p: unknown
  try {
    p = JSON.parse(payload)
  } catch {
    return payload
  }
  if (typeof p === 'string') return p
  const prompt = (p as { prompt?: unknown } | null)?.prompt
  return typeof prompt === 'string' ? prompt : JSON.stringify(p)
}

function answerOf(result: string | null): string | null {
  if (result === null) return null
  try {
    const r = JSON.parse(result) as { text?: unknown; value?: unknown }
    if (typeof r.text === 'string') return r.text
    return JSON.stringify(r.value ?? r)
  } catch {
    return null
  }
}
