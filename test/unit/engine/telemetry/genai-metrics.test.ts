// What one ledger row records in the GenAI client metrics: input tokens including Anthropic's
// separately reported cache reads and writes (as the conventions and the span have them), the
// latency in seconds, error.type only on a failed call.
import { describe, expect, it } from 'vitest'
import { normalizeAnthropicUsage } from '../../../../src/main/engine/providers/anthropic'
import { metricCall } from '../../../../src/main/engine/telemetry/genai-attributes'

const row = { provider: 'anthropic', model: 'claude-x', latencyMs: 1250, status: 200 }

describe('metricCall', () => {
  it("counts Anthropic's cache reads and writes in the input tokens", () => {
    const usage = normalizeAnthropicUsage({
      input_tokens: 10,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 5,
      output_tokens: 7,
    })!
    const call = metricCall({ ...row, ...usage, outcome: 'executed' })
    expect(call).toEqual({
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-x',
        'gen_ai.response.model': 'claude-x',
      },
      inputTokens: 115,
      outputTokens: 7,
      seconds: 1.25,
      errorType: undefined,
    })
  })

  it('names the failure of a throttled, failed or timed-out call; no latency, no duration', () => {
    const tokens = { inputTokens: 0, outputTokens: 0 }
    expect(metricCall({ ...row, ...tokens, outcome: 'throttled', status: 429 }).errorType).toBe(
      '429',
    )
    expect(metricCall({ ...row, ...tokens, outcome: 'error', status: null }).errorType).toBe(
      'error',
    )
    expect(metricCall({ ...row, ...tokens, outcome: 'timeout' }).errorType).toBe('timeout')
    expect(metricCall({ ...row, ...tokens, outcome: 'duplicate' }).errorType).toBeUndefined()
    expect(metricCall({ ...row, ...tokens, outcome: 'executed', latencyMs: null }).seconds).toBe(
      null,
    )
  })
})
