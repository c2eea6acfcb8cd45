/**
 * The OpenAI-compatible provider against a loopback server: what it sends, and how it reads
 * answers and error bodies.
 */
import { afterEach, describe, expect, it } from 'vitest'
import {
  classify,
  isDeterministicFailure,
  quotaExhausted,
  retryDelayMs,
} from '../../../src/main/engine/providers/classify'
import { createOpenAiCompatibleProvider } from '../../../src/main/engine/providers/openai'
import type { ChatMessage } from '../../../src/main/engine/core/types'
import {
  USER,
  closeVendors,
  json,
  openAi,
  openAiCompletion,
  vendor,
} from '../../helpers/fake-vendor'

afterEach(closeVendors)

describe('OpenAI-compatible provider', () => {
  it('posts a chat completion and normalizes its usage (cached tokens are a subset)', async () => {
    const server = await vendor((_req, res) =>
      json(
        res,
        200,
        openAiCompletion('Hello there.', {
          prompt_tokens: 1200,
          completion_tokens: 30,
          total_tokens: 1230,
          prompt_tokens_details: { cached_tokens: 1024 },
        }),
        { 'X-Request-Id': 'req_123', 'X-RateLimit-Remaining-Requests': '499' },
      ),
    )
    const provider = openAi(server.url)
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hi.' },
    ]
    const res = await provider.call({ model: 'gpt-4o-mini', messages, maxOutputTokens: 64 })

    expect(res).toEqual({
      status: 200,
      headers: expect.objectContaining({
        'x-request-id': 'req_123',
        'x-ratelimit-remaining-requests': '499',
      }),
      text: 'Hello there.',
      usage: { inputTokens: 1200, cachedInputTokens: 1024, cacheWriteTokens: 0, outputTokens: 30 },
      finishReason: 'stop',
      message: { role: 'assistant', content: 'Hello there.' },
    })
    expect(classify(res, 5)).toBe('ok')
    expect(server.requests).toHaveLength(1)
    const [req] = server.requests
    expect(req?.method).toBe('POST')
    expect(req?.url).toBe('/v1/chat/completions')
    expect(req?.headers['content-type']).toBe('application/json')
    expect(req?.body).toEqual({ model: 'gpt-4o-mini', messages, max_tokens: 64, stream: false })
  })

  it('sends max_tokens only when asked, and joins content parts', async () => {
    const server = await vendor((_req, res) =>
      json(
        res,
        200,
        openAiCompletion([
          { type: 'text', text: 'Hel' },
          { type: 'text', text: 'lo' },
        ]),
      ),
    )
    const res = await openAi(server.url).call({ model: 'm', messages: USER })
    expect(res.text).toBe('Hello')
    // A local server that reports no usage: none, not a crash, and not zeros (the runner
    // estimates the call rather than ledger it as free).
    expect(res.usage).toBeUndefined()
    expect(server.requests[0]?.body).not.toHaveProperty('max_tokens')

    const withDefault = openAi(server.url, null, { maxOutputTokens: 99 })
    await withDefault.call({ model: 'm', messages: USER })
    expect(server.requests[1]?.body).toMatchObject({ max_tokens: 99 })
  })

  it('passes a 429 through with retry-after and x-ratelimit-* for the runner to read', async () => {
    const server = await vendor((_req, res) =>
      json(
        res,
        429,
        {
          error: {
            message: 'Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 500.',
            type: 'requests',
            code: 'rate_limit_exceeded',
          },
        },
        {
          'Retry-After': '2',
          'X-RateLimit-Limit-Requests': '500',
          'X-RateLimit-Remaining-Requests': '0',
          'X-RateLimit-Reset-Requests': '1.5s',
          // A token budget refilling later is no reason to wait: the 429 was about requests.
          'X-RateLimit-Remaining-Tokens': '150000',
          'X-RateLimit-Reset-Tokens': '6m0s',
        },
      ),
    )
    const res = await openAi(server.url).call({ model: 'gpt-4o-mini', messages: USER })
    expect(res.status).toBe(429)
    expect(res.error).toBe(
      'Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 500.',
    )
    expect(res.headers).toMatchObject({
      'retry-after': '2',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '1.5s',
      'x-ratelimit-reset-tokens': '6m0s',
    })
    expect(classify(res, 5)).toBe('throttled')
    expect(retryDelayMs(res.headers, Date.now())).toBe(2000)
    expect(server.requests).toHaveLength(1) // no retry inside the adapter
  })

  it('reads a 429 insufficient_quota as an account out of quota, not a throttle', async () => {
    const server = await vendor((_req, res) =>
      json(res, 429, {
        error: {
          message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota',
          param: null,
          code: 'insufficient_quota',
        },
      }),
    )
    const res = await openAi(server.url).call({ model: 'gpt-4o-mini', messages: USER })
    expect(res).toMatchObject({
      status: 429,
      errorCodes: ['insufficient_quota', 'insufficient_quota'],
    })
    expect(classify(res, 5)).toBe('error')
    expect(quotaExhausted(res)).toMatch(/^the account is out of quota\/credit/)
  })

  it('passes a 503 through as overloaded', async () => {
    const server = await vendor((_req, res) =>
      json(res, 503, {
        error: { message: 'The engine is currently overloaded, please try again later' },
      }),
    )
    const res = await openAi(server.url).call({ model: 'm', messages: USER })
    expect(res.status).toBe(503)
    expect(res.error).toBe('The engine is currently overloaded, please try again later')
    expect(classify(res, 5)).toBe('overloaded')
    expect(server.requests).toHaveLength(1)
  })

  it('reads a 500 HTML page as a short error, not markup', async () => {
    const server = await vendor((_req, res) => {
      res.writeHead(500, { 'Content-Type': 'text/html' })
      res.end(
        '<html>\r\n<head><title>500 Internal Server Error</title></head>\r\n<body>\r\n' +
          '<center><h1>500 Internal Server Error</h1></center>\r\n<hr><center>nginx</center>\r\n' +
          `</body>\r\n</html>\r\n${'<!-- padding -->'.repeat(200)}`,
      )
    })
    const res = await openAi(server.url).call({ model: 'm', messages: USER })
    expect(res.status).toBe(500)
    expect(res.error).toBe('500 Internal Server Error')
    expect(classify(res, 5)).toBe('error')
    expect(isDeterministicFailure(res.status)).toBe(false)
  })

  it('keeps a non-HTML, non-JSON error body short', async () => {
    const server = await vendor((_req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/plain' })
      res.end(`upstream connect error or disconnect/reset before headers. ${'x'.repeat(5000)}`)
    })
    const res = await openAi(server.url).call({ model: 'm', messages: USER })
    expect(res.status).toBe(502)
    expect(res.error).toMatch(/^upstream connect error or disconnect\/reset before headers\. x+…$/)
    expect(res.error?.length).toBe(200)
  })

  it('reads a 400 error JSON as a deterministic failure with the vendor message', async () => {
    const message = "Invalid value for 'messages[0].role': 'robot' is not supported."
    const server = await vendor((_req, res) =>
      json(res, 400, {
        error: { message, type: 'invalid_request_error', param: 'messages', code: null },
      }),
    )
    const res = await openAi(server.url).call({ model: 'm', messages: USER })
    expect(res.status).toBe(400)
    expect(res.error).toBe(message)
    expect(classify(res, 5)).toBe('error')
    expect(isDeterministicFailure(res.status)).toBe(true)
  })

  it('reads the error shapes of Ollama, vLLM and FastAPI servers', async () => {
    const bodies = [
      { error: 'model "llama9" not found, try pulling it first' },
      { object: 'error', message: 'The model `x` does not exist.', type: 'NotFoundError' },
      { detail: 'Not Found' },
    ]
    let i = 0
    const server = await vendor((_req, res) => json(res, 404, bodies[i++]))
    const provider = openAi(server.url)
    const errors: (string | undefined)[] = []
    for (let n = 0; n < bodies.length; n++) {
      errors.push((await provider.call({ model: 'm', messages: USER })).error)
    }
    expect(errors).toEqual([
      'model "llama9" not found, try pulling it first',
      'The model `x` does not exist.',
      'Not Found',
    ])
  })

  it('sends no Authorization without a key, a bearer token with one, read at every call', async () => {
    const server = await vendor((_req, res) => json(res, 200, openAiCompletion('ok')))
    let key: string | null = null
    const provider = createOpenAiCompatibleProvider({
      id: 'openai-compatible',
      baseUrl: `${server.url}/v1/`,
      apiKey: () => key,
      extraHeaders: { 'HTTP-Referer': 'https://pacer.example' },
    })
    await provider.call({ model: 'm', messages: USER })
    key = '  sk-local-123\n' // pasted with whitespace
    await provider.call({ model: 'm', messages: USER })
    key = '   '
    await provider.call({ model: 'm', messages: USER })

    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/chat/completions',
      '/v1/chat/completions',
      '/v1/chat/completions',
    ])
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      undefined,
      'Bearer sk-local-123',
      undefined,
    ])
    expect(server.requests[0]?.headers['http-referer']).toBe('https://pacer.example')
  })
})
