/**
 * The Anthropic provider against a loopback server that answers like the Messages API.
 */
import { afterEach, describe, expect, it } from 'vitest'
import {
  classify,
  isDeterministicFailure,
  quotaExhausted,
  retryDelayMs,
} from '../../../src/main/engine/providers/classify'
import { createAnthropicProvider } from '../../../src/main/engine/providers/anthropic'
import {
  SENTINEL_KEY,
  USER,
  anthropicMessage,
  closeVendors,
  closedPort,
  json,
  vendor,
} from '../../helpers/fake-vendor'

afterEach(closeVendors)

describe('Anthropic provider', () => {
  it('posts a message with system at the top level and normalizes cache usage (summed)', async () => {
    const server = await vendor((_req, res) =>
      json(
        res,
        200,
        anthropicMessage('Hi.', {
          input_tokens: 12,
          cache_read_input_tokens: 2000,
          cache_creation_input_tokens: 300,
          output_tokens: 40,
        }),
        { 'Request-Id': 'req_01', 'Anthropic-RateLimit-Requests-Remaining': '49' },
      ),
    )
    const provider = createAnthropicProvider({ baseUrl: server.url, apiKey: () => 'sk-ant-test' })
    const res = await provider.call({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Context.' },
        { role: 'system', content: 'Answer in English.' },
        { role: 'user', content: 'Say hi.' },
        { role: 'assistant', content: 'Hi.' },
        { role: 'user', content: 'Again.' },
      ],
    })
    expect(res).toEqual({
      status: 200,
      headers: expect.objectContaining({
        'request-id': 'req_01',
        'anthropic-ratelimit-requests-remaining': '49',
      }),
      text: 'Hi. Bye.',
      usage: {
        inputTokens: 2312,
        cachedInputTokens: 2000,
        cacheWriteTokens: 300,
        outputTokens: 40,
      },
      finishReason: 'stop',
      message: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: 'Hi.' },
        { type: 'text', text: ' Bye.' },
      ],
    })
    expect(classify(res, 5)).toBe('ok')
    const [req] = server.requests
    expect(req?.url).toBe('/v1/messages')
    expect(req?.headers['x-api-key']).toBe('sk-ant-test')
    expect(req?.headers['anthropic-version']).toBe('2023-06-01')
    expect(req?.headers['content-type']).toBe('application/json')
    expect(req?.headers.authorization).toBeUndefined()
    // Prompt caching is on by default: the system prompt is a cached block (a single-step call
    // marks nothing else; prompt-caching.test.ts covers multi-step tasks).
    const messages = [
      { role: 'user', content: 'Context.\n\nSay hi.' },
      { role: 'assistant', content: 'Hi.' },
      { role: 'user', content: 'Again.' },
    ]
    const system = 'You are terse.\n\nAnswer in English.'
    expect(req?.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
      messages,
    })
    const uncached = createAnthropicProvider({
      baseUrl: server.url,
      apiKey: () => 'sk-ant-test',
      promptCaching: false,
    })
    await uncached.call({ model: 'claude-sonnet-4-5', messages: [...USER], cacheHistory: true })
    expect(server.requests[1]?.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Say hi.' }],
    })
  })

  it('sends no system field without system messages, and the request max_tokens', async () => {
    const server = await vendor((_req, res) =>
      json(res, 200, anthropicMessage('ok', { input_tokens: 3, output_tokens: 1 })),
    )
    const provider = createAnthropicProvider({
      baseUrl: `${server.url}/`,
      apiKey: () => 'sk-ant-test',
      anthropicVersion: '2024-01-01',
    })
    const res = await provider.call({
      model: 'claude-haiku-4-5',
      messages: USER,
      maxOutputTokens: 8,
    })
    expect(res.usage).toEqual({
      inputTokens: 3,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 1,
    })
    expect(server.requests[0]?.body).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 8,
      messages: USER,
    })
    expect(server.requests[0]?.headers['anthropic-version']).toBe('2024-01-01')
  })

  it('passes a 529 overloaded_error through as overloaded', async () => {
    const server = await vendor((_req, res) =>
      json(res, 529, {
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
      }),
    )
    const provider = createAnthropicProvider({ baseUrl: server.url, apiKey: () => 'sk-ant-test' })
    const res = await provider.call({ model: 'claude-sonnet-4-5', messages: USER })
    expect(res.status).toBe(529)
    expect(res.error).toBe('Overloaded')
    expect(classify(res, 5)).toBe('overloaded')
    expect(server.requests).toHaveLength(1)
  })

  it('reads a 402 billing_error as an account out of credit', async () => {
    const server = await vendor((_req, res) =>
      json(res, 402, {
        type: 'error',
        error: { type: 'billing_error', message: 'Billing error' },
        request_id: 'req_1',
      }),
    )
    const provider = createAnthropicProvider({ baseUrl: server.url, apiKey: () => 'sk-ant-test' })
    const res = await provider.call({ model: 'claude-sonnet-4-5', messages: USER })
    expect(res).toMatchObject({ status: 402, errorCodes: ['billing_error'] })
    expect(quotaExhausted(res)).toMatch(/out of quota\/credit \(billing_error\): Billing error/)
  })

  it('passes a 429 through with retry-after and anthropic-ratelimit-* headers', async () => {
    const now = Date.now()
    const reset = new Date(Math.ceil((now + 7000) / 1000) * 1000).toISOString()
    const tokensReset = new Date(now + 60_000).toISOString()
    const server = await vendor((_req, res) =>
      json(
        res,
        429,
        {
          type: 'error',
          error: {
            type: 'rate_limit_error',
            message: 'Number of request tokens has exceeded your per-minute rate limit',
          },
        },
        {
          'retry-after': '3',
          'anthropic-ratelimit-requests-limit': '50',
          'anthropic-ratelimit-requests-remaining': '0',
          'anthropic-ratelimit-requests-reset': reset,
          'anthropic-ratelimit-tokens-remaining': '12000',
          'anthropic-ratelimit-tokens-reset': tokensReset,
        },
      ),
    )
    const provider = createAnthropicProvider({ baseUrl: server.url, apiKey: () => 'sk-ant-test' })
    const res = await provider.call({ model: 'claude-sonnet-4-5', messages: USER })
    expect(res.status).toBe(429)
    expect(res.error).toBe('Number of request tokens has exceeded your per-minute rate limit')
    expect(res.headers).toMatchObject({
      'retry-after': '3',
      'anthropic-ratelimit-requests-reset': reset,
    })
    expect(classify(res, 5)).toBe('throttled')
    // The requests reset (exhausted) outweighs retry-after; the tokens reset has budget left.
    expect(retryDelayMs(res.headers, now)).toBe(Date.parse(reset) - now)
  })

  it('fails without a key with a 401 and sends no request', async () => {
    const server = await vendor((_req, res) => json(res, 200, anthropicMessage('ok', {})))
    for (const key of [null, '', '  ']) {
      const provider = createAnthropicProvider({ baseUrl: server.url, apiKey: () => key })
      const res = await provider.call({ model: 'claude-sonnet-4-5', messages: USER })
      expect(res).toEqual({
        status: 401,
        headers: {},
        error: 'no Anthropic API key: set it in Settings or ANTHROPIC_API_KEY',
        errorCodes: ['pacer_missing_api_key'],
      })
      expect(isDeterministicFailure(res.status)).toBe(true)
    }
    expect(server.requests).toHaveLength(0)
  })

  it('never puts the key in a response or a thrown error', async () => {
    const server = await vendor((req, res) =>
      json(
        res,
        401,
        {
          type: 'error',
          error: {
            type: 'authentication_error',
            message: `invalid x-api-key ${String(req.headers['x-api-key'])}`,
          },
        },
        { 'x-echo': String(req.headers['x-api-key']) },
      ),
    )
    const provider = createAnthropicProvider({ baseUrl: server.url, apiKey: () => SENTINEL_KEY })
    const res = await provider.call({ model: 'claude-sonnet-4-5', messages: USER })
    expect(res.status).toBe(401)
    expect(res.error).toBe('invalid x-api-key [redacted]')
    expect(server.requests[0]?.headers['x-api-key']).toBe(SENTINEL_KEY)

    const port = await closedPort()
    const err = await createAnthropicProvider({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: () => SENTINEL_KEY,
    })
      .call({ model: 'claude-sonnet-4-5', messages: USER })
      .then(
        () => null,
        (e: unknown) => e as Error,
      )
    expect(err?.message).toBe(
      `cannot reach http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`,
    )
    for (const text of [JSON.stringify(res), err?.message, err?.stack, String(err?.cause)]) {
      expect(text).not.toContain(SENTINEL_KEY)
    }
  })

  it('throws a TypeError naming a bad option and its value', () => {
    const apiKey = () => 'k'
    expect(() => createAnthropicProvider({ apiKey, anthropicVersion: 'latest' })).toThrow(
      new TypeError("Expected `anthropicVersion` to be a date like '2023-06-01', got `latest`"),
    )
    expect(() => createAnthropicProvider({ apiKey, maxOutputTokens: 1.5 })).toThrow(
      new TypeError('Expected `maxOutputTokens` to be an integer >= 1, got `1.5`'),
    )
    expect(() => createAnthropicProvider({ apiKey, baseUrl: 'ftp://files' })).toThrow(
      new TypeError('Expected `baseUrl` to be an http(s) URL, got `ftp://files`'),
    )
  })
})

// ---------------------------------------------------------------- createProviders
