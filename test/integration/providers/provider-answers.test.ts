// What the HTTP providers keep of a 2xx answer besides its text, against loopback servers that
// answer as the vendors do: the finish reason in one vocabulary (OpenAI `length`, Anthropic
// `max_tokens` both `length`) and the vendor's own message, scrubbed of the key like the rest.
import { afterEach, describe, expect, it } from 'vitest'
import {
  anthropicFinish,
  createAnthropicProvider,
} from '../../../src/main/engine/providers/anthropic'
import {
  createOpenAiCompatibleProvider,
  openAiFinish,
} from '../../../src/main/engine/providers/openai'
import { createSimProvider } from '../../../src/main/engine/providers/sim'
import { closeVendors, fakeVendor } from '../../helpers/fake-vendor'

afterEach(closeVendors)

/** A server answering every call with `body`; its URL without a path. */
async function answering(body: unknown): Promise<string> {
  return (await fakeVendor({ answer: () => ({ body }) })).url
}

const KEY = 'sk-RESULTS-SENTINEL-0123456789'
const messages = [{ role: 'user' as const, content: 'hi' }]

describe('OpenAI-compatible answers', () => {
  it('keeps finish_reason and choices[0].message, with the key scrubbed from it', async () => {
    const message = { role: 'assistant', content: `cut off ${KEY}`, refusal: null }
    const base = await answering({
      choices: [{ index: 0, message, finish_reason: 'length' }],
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    })
    const provider = createOpenAiCompatibleProvider({
      id: 'openai-compatible',
      baseUrl: `${base}/v1`,
      apiKey: () => KEY,
    })
    const response = await provider.call({ model: 'm', messages })
    expect(response).toMatchObject({ status: 200, finishReason: 'length' })
    expect(response.message).toEqual({ ...message, content: 'cut off [redacted]' })
    expect(JSON.stringify(response)).not.toContain(KEY)
  })

  it('an answer without finish_reason has none; function_call is a tool call', async () => {
    const base = await answering({ choices: [{ message: { role: 'assistant', content: 'ok' } }] })
    const provider = createOpenAiCompatibleProvider({
      id: 'openai-compatible',
      baseUrl: `${base}/v1`,
      apiKey: () => null,
    })
    const response = await provider.call({ model: 'm', messages })
    expect(response.text).toBe('ok')
    expect(response.finishReason).toBeUndefined()
    expect(openAiFinish('function_call')).toBe('tool_calls')
    expect(openAiFinish('content_filter')).toBe('content_filter')
  })
})

describe('Anthropic answers', () => {
  it('max_tokens is length; the content blocks are the message', async () => {
    const content = [
      { type: 'thinking', thinking: 'hmm' },
      { type: 'text', text: 'the start of' },
    ]
    const base = await answering({
      type: 'message',
      role: 'assistant',
      content,
      stop_reason: 'max_tokens',
      usage: { input_tokens: 3, output_tokens: 4 },
    })
    const provider = createAnthropicProvider({ baseUrl: base, apiKey: () => KEY })
    const response = await provider.call({ model: 'claude-x', messages })
    expect(response).toMatchObject({ text: 'the start of', finishReason: 'length' })
    expect(response.message).toEqual(content)
  })

  it('maps every documented stop_reason, and keeps an unknown one as sent', () => {
    expect(
      ['end_turn', 'stop_sequence', 'max_tokens', 'tool_use', 'refusal', 'pause_turn'].map(
        anthropicFinish,
      ),
    ).toEqual(['stop', 'stop', 'length', 'tool_calls', 'content_filter', 'pause_turn'])
    expect(anthropicFinish('toString')).toBe('toString')
  })
})

describe('the simulated provider', () => {
  it('says length only when the request’s own cap cut the answer', async () => {
    const sim = createSimProvider({ latencyScale: 0, requestsPerMinute: 0 })
    const long = [{ role: 'user' as const, content: 'word '.repeat(400) }]
    expect((await sim.call({ model: 'sim-small', messages: long })).finishReason).toBe('stop')
    const capped = await sim.call({ model: 'sim-small', messages: long, maxOutputTokens: 5 })
    expect(capped).toMatchObject({ finishReason: 'length', usage: { outputTokens: 5 } })
  })
})
