/**
 * The HTTP providers against real loopback servers that answer like the vendors do (status codes,
 * rate-limit headers, JSON and HTML bodies), and once end to end through the real engine.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  classify,
  isDeterministicFailure,
  quotaExhausted,
  retryDelayMs,
} from '../../src/main/engine/classify'
import { createEngine } from '../../src/main/engine/engine'
import { createAnthropicProvider } from '../../src/main/engine/providers/anthropic'
import {
  DEFAULT_BASE_URLS,
  createProviders,
  type ProviderKey,
} from '../../src/main/engine/providers/index'
import { createOpenAiCompatibleProvider } from '../../src/main/engine/providers/openai'
import { createSimProvider } from '../../src/main/engine/providers/sim'
import type { ChatMessage, Provider } from '../../src/main/engine/types'

// ---------------------------------------------------------------- loopback vendor

interface Recorded {
  method: string
  url: string
  headers: Record<string, string | string[] | undefined>
  body: unknown
}

interface FakeVendor {
  url: string
  port: number
  requests: Recorded[]
  close(): Promise<void>
}

type Handler = (req: Recorded, res: ServerResponse, raw: IncomingMessage) => void

const servers: FakeVendor[] = []

async function vendor(handler: Handler): Promise<FakeVendor> {
  const requests: Recorded[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON: kept as text
      }
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      requests.push(recorded)
      handler(recorded, res, req)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const fake: FakeVendor = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  servers.push(fake)
  return fake
}

function json(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const USER: ChatMessage[] = [{ role: 'user', content: 'Say hi.' }]
// Looks like a real key and occurs nowhere else, so any leak is found by a plain substring search.
const SENTINEL_KEY = 'sk-SENTINEL-9f8e7d6c5b4a3210-DO-NOT-LEAK'

function openAiCompletion(text: unknown, usage: unknown = {}): unknown {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage,
  }
}

function openAi(base: string, key: string | null = null, extra = {}): Provider {
  return createOpenAiCompatibleProvider({
    id: 'openai-compatible',
    baseUrl: `${base}/v1`,
    apiKey: () => key,
    ...extra,
  })
}

// ---------------------------------------------------------------- OpenAI-compatible

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
    // A local server that reports no usage: zeros, not a crash.
    expect(res.usage).toEqual({
      inputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
    })
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

  it('throws an error naming the base URL when nothing listens (connection refused)', async () => {
    const port = await closedPort()
    const provider = openAi(`http://127.0.0.1:${port}`)
    const err = await provider.call({ model: 'm', messages: USER }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).name).not.toBe('AbortError')
    expect((err as Error).message).toBe(
      `cannot reach http://127.0.0.1:${port}/v1: connect ECONNREFUSED 127.0.0.1:${port}`,
    )
  })

  it('throws a DNS failure naming the base URL', async () => {
    // .invalid never resolves (RFC 2606), so this fails fast and offline.
    const provider = createOpenAiCompatibleProvider({
      id: 'custom',
      baseUrl: 'http://no-such-host.invalid:8080/v1',
      apiKey: () => null,
    })
    await expect(provider.call({ model: 'm', messages: USER })).rejects.toThrow(
      /^cannot reach http:\/\/no-such-host\.invalid:8080\/v1: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/,
    )
  })

  it('lets an abort mid-request reject as an AbortError, and a timeout as a TimeoutError', async () => {
    let arrived!: () => void
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve))
    const server = await vendor(() => arrived()) // never answers
    const provider = openAi(server.url)

    const controller = new AbortController()
    const pending = provider.call({ model: 'm', messages: USER, signal: controller.signal })
    await requestArrived
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })

    // The runner's per-call deadline is an AbortSignal.timeout: it must reject, not hang.
    await expect(
      provider.call({ model: 'm', messages: USER, signal: AbortSignal.timeout(100) }),
    ).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(server.requests).toHaveLength(2)
  })

  it('lets an abort while the body streams reject as an AbortError', async () => {
    let headersSent!: () => void
    const sent = new Promise<void>((resolve) => (headersSent = resolve))
    const server = await vendor((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.write('{"choices": [')
      headersSent()
    })
    const controller = new AbortController()
    const pending = openAi(server.url).call({
      model: 'm',
      messages: USER,
      signal: controller.signal,
    })
    await sent
    await new Promise((resolve) => setTimeout(resolve, 20))
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('rejects at once when the signal is already aborted, sending nothing', async () => {
    const server = await vendor((_req, res) => json(res, 200, openAiCompletion('ok')))
    const controller = new AbortController()
    controller.abort()
    await expect(
      openAi(server.url).call({ model: 'm', messages: USER, signal: controller.signal }),
    ).rejects.toMatchObject({ name: 'AbortError' })
    expect(server.requests).toHaveLength(0)
  })

  it('answers a 2xx with an unparseable body as a 502 "invalid JSON from provider"', async () => {
    const server = await vendor((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Request-Id': 'req_9' })
      res.end('{"choices": [{"message": {"content": "trunc')
    })
    const res = await openAi(server.url).call({ model: 'm', messages: USER })
    expect(res).toEqual({
      status: 502,
      headers: expect.objectContaining({ 'x-request-id': 'req_9' }),
      error: 'invalid JSON from provider',
      // A 200 the runner ledgers as an estimated paid call (nothing of the answer was readable).
      unreadable: { status: 200, text: '' },
    })
    expect(classify(res, 5)).toBe('error')
  })

  it('answers a 2xx JSON without choices as a 502 that keeps the billed usage', async () => {
    const server = await vendor((_req, res) =>
      json(res, 200, { error: { message: 'upstream timed out' }, usage: { prompt_tokens: 7 } }),
    )
    const res = await openAi(server.url).call({ model: 'm', messages: USER })
    expect(res.status).toBe(502)
    expect(res.error).toBe('provider answered 200 with an error: upstream timed out')
    expect(res.usage).toEqual({
      inputTokens: 7,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
    })
  })

  it('does not follow a redirect (it would resend the key elsewhere)', async () => {
    const target = await vendor((_req, res) => json(res, 200, openAiCompletion('moved')))
    const server = await vendor((_req, res) => {
      res.writeHead(307, { Location: `${target.url}/v1/chat/completions?token=abc` })
      res.end()
    })
    const res = await openAi(server.url, SENTINEL_KEY).call({ model: 'm', messages: USER })
    expect(res.status).toBe(307)
    expect(res.error).toBe(
      `provider redirected (HTTP 307) to ${target.url}/v1/chat/completions: set the base URL to the final address`,
    )
    expect(target.requests).toHaveLength(0)
  })

  it('fails a call to api.openai.com without a key locally, with no request', async () => {
    let fetched = 0
    const provider = createOpenAiCompatibleProvider({
      id: 'openai',
      apiKey: () => null,
      fetch: (() => {
        fetched++
        return Promise.reject(new Error('must not be called'))
      }) as typeof fetch,
    })
    const res = await provider.call({ model: 'gpt-4o-mini', messages: USER })
    expect(res).toEqual({
      status: 401,
      headers: {},
      error: 'no OpenAI API key: set it in Settings or OPENAI_API_KEY',
      // What tells the runner it is a missing key (a setup failure), not a refused one.
      errorCodes: ['pacer_missing_api_key'],
    })
    expect(isDeterministicFailure(res.status)).toBe(true)
    expect(fetched).toBe(0)
  })

  it('sends max_completion_tokens to api.openai.com (o-series and gpt-5 reject max_tokens)', async () => {
    const server = await vendor((_req, res) => json(res, 200, openAiCompletion('ok')))
    const urls: string[] = []
    const provider = createOpenAiCompatibleProvider({
      id: 'openai',
      apiKey: () => 'sk-test-key-123',
      // The default base URL, routed to the loopback vendor so nothing leaves the machine.
      fetch: ((input: string, init?: RequestInit) => {
        urls.push(input)
        return fetch(`${server.url}${new URL(input).pathname}`, init)
      }) as typeof fetch,
    })
    const res = await provider.call({ model: 'o4-mini', messages: USER, maxOutputTokens: 500 })
    expect(res.status).toBe(200)
    expect(urls).toEqual(['https://api.openai.com/v1/chat/completions'])
    expect(server.requests[0]?.body).toMatchObject({ max_completion_tokens: 500 })
    expect(server.requests[0]?.body).not.toHaveProperty('max_tokens')
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test-key-123')
  })

  it('never puts the key in a response or a thrown error, even when a server echoes it', async () => {
    // A hostile or buggy proxy that quotes the credentials back in every place it can.
    const server = await vendor((req, res) => {
      const auth = String(req.headers.authorization)
      const status = Number(new URLSearchParams(req.url.split('?')[1]).get('status') ?? '200')
      const headers = { 'X-Echo': auth }
      if (status === 200) json(res, 200, openAiCompletion(`you sent ${auth}`), headers)
      else if (status === 401) json(res, 401, { error: { message: `bad key ${auth}` } }, headers)
      else {
        res.writeHead(status, { 'Content-Type': 'text/html', ...headers })
        res.end(`<html><title>Error for ${auth}</title></html>`)
      }
    })
    const seen: string[] = []
    for (const status of [200, 401, 500]) {
      const provider = createOpenAiCompatibleProvider({
        id: 'openai-compatible',
        baseUrl: `${server.url}/v1?status=${status}`,
        apiKey: () => SENTINEL_KEY,
      })
      const res = await provider.call({ model: 'm', messages: USER })
      expect(res.status).toBe(status)
      seen.push(JSON.stringify(res))
    }
    expect(server.requests).toHaveLength(3)
    // The base URL's query survives the path join (Azure-style gateways need `?api-version=`).
    expect(server.requests[0]?.url).toBe('/v1/chat/completions?status=200')
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${SENTINEL_KEY}`)
    expect(seen.join('\n')).toContain('[redacted]')

    // A key fetch would reject as a header value: its error would quote the whole key.
    const broken = openAi(server.url, `${SENTINEL_KEY}\nX-Injected: 1`)
    const brokenRes = await broken.call({ model: 'm', messages: USER })
    expect(brokenRes.status).toBe(401)
    seen.push(JSON.stringify(brokenRes))

    const port = await closedPort()
    const refused = await openAi(`http://127.0.0.1:${port}`, SENTINEL_KEY)
      .call({ model: 'm', messages: USER })
      .then(
        () => null,
        (e: unknown) => e as Error,
      )
    expect(refused).toBeInstanceOf(Error)
    seen.push(String(refused?.message), String(refused?.stack), String(refused?.cause))

    for (const text of seen) expect(text).not.toContain(SENTINEL_KEY)
    expect(server.requests).toHaveLength(3) // the broken key sent nothing
  })

  it('throws a TypeError naming a bad option and its value', () => {
    const apiKey = () => null
    expect(() => createOpenAiCompatibleProvider({ id: '', baseUrl: 'http://x', apiKey })).toThrow(
      new TypeError('Expected `id` to be a non-empty string, got ``'),
    )
    expect(() => createOpenAiCompatibleProvider({ id: 'custom', apiKey })).toThrow(
      /`baseUrl` for provider "custom"/,
    )
    expect(() =>
      createOpenAiCompatibleProvider({ id: 'custom', baseUrl: 'localhost:8080', apiKey }),
    ).toThrow(new TypeError('Expected `baseUrl` to be an http(s) URL, got `localhost:8080`'))
    expect(() =>
      createOpenAiCompatibleProvider({
        id: 'openai',
        apiKey: 'sk-abc' as unknown as () => null,
      }),
    ).toThrow(TypeError)
    expect(() =>
      createOpenAiCompatibleProvider({ id: 'openai', apiKey, maxOutputTokens: 0 }),
    ).toThrow(new TypeError('Expected `maxOutputTokens` to be an integer >= 1, got `0`'))
    expect(() =>
      createOpenAiCompatibleProvider({
        id: 'openai',
        apiKey,
        extraHeaders: { 'X-Tenant': 'a\r\nb' },
      }),
    ).toThrow(/`extraHeaders\["X-Tenant"\]`/)
  })
})

// ---------------------------------------------------------------- Anthropic

function anthropicMessage(text: string, usage: unknown): unknown {
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'text', text },
      { type: 'text', text: ' Bye.' },
    ],
    stop_reason: 'end_turn',
    usage,
  }
}

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

describe('createProviders', () => {
  it('offers sim, openai, anthropic and openai-compatible, reading base URLs at call time', async () => {
    const first = await vendor((_req, res) => json(res, 200, openAiCompletion('first')))
    const second = await vendor((_req, res) => json(res, 200, openAiCompletion('second')))
    const anthropic = await vendor((_req, res) => json(res, 200, anthropicMessage('claude', {})))
    const settings: { baseUrls: Record<string, string | null> } = {
      baseUrls: { 'openai-compatible': `${first.url}/v1`, anthropic: anthropic.url },
    }
    const keys: Record<string, ProviderKey | null> = {
      openai: null,
      anthropic: { value: 'sk-ant-1', from: 'store', baseUrl: anthropic.url },
      'openai-compatible': { value: 'sk-local', from: 'store', baseUrl: `${first.url}/v1` },
    }
    const sim = createSimProvider({ latencyScale: 0 })
    const providers = createProviders({
      sim,
      // A getter, as the desktop wires it to the settings store.
      get baseUrls() {
        return settings.baseUrls
      },
      apiKey: (id) => keys[id] ?? null,
    })
    expect(Object.keys(providers).sort()).toEqual([
      'anthropic',
      'openai',
      'openai-compatible',
      'sim',
    ])
    expect(providers.sim).toBe(sim)
    expect(providers['openai-compatible']?.id).toBe('openai-compatible')
    expect(providers.openai?.id).toBe('openai')
    expect(providers.anthropic?.id).toBe('anthropic')

    const local = providers['openai-compatible'] as Provider
    expect((await local.call({ model: 'local-model', messages: USER })).text).toBe('first')
    expect(first.requests[0]?.headers.authorization).toBe('Bearer sk-local')
    settings.baseUrls = { ...settings.baseUrls, 'openai-compatible': `${second.url}/v1` }
    // The key was stored for the first server: the second gets no request at all.
    const refused = await local.call({ model: 'local-model', messages: USER })
    expect(refused.status).toBe(401)
    expect(refused.error).toContain(`was stored for ${first.url}/v1`)
    expect(second.requests).toHaveLength(0)
    keys['openai-compatible'] = { value: 'sk-local', from: 'store', baseUrl: `${second.url}/v1` }
    expect((await local.call({ model: 'local-model', messages: USER })).text).toBe('second')
    expect(first.requests).toHaveLength(1)
    expect(second.requests[0]?.headers.authorization).toBe('Bearer sk-local')

    const claude = await (providers.anthropic as Provider).call({ model: 'c', messages: USER })
    expect(claude.text).toBe('claude Bye.')
    expect(anthropic.requests[0]?.headers['x-api-key']).toBe('sk-ant-1')

    // openai has no key and the default base URL: a local 401, no request anywhere.
    const openai = await (providers.openai as Provider).call({ model: 'gpt-4o', messages: USER })
    expect(openai.status).toBe(401)
  })

  it('defaults openai-compatible to a local server on 127.0.0.1:8080/v1', async () => {
    const server = await vendor((_req, res) => json(res, 200, openAiCompletion('ok')))
    const urls: string[] = []
    const providers = createProviders({
      sim: createSimProvider(),
      baseUrls: { 'openai-compatible': null },
      apiKey: () => null,
      fetch: ((input: string, init?: RequestInit) => {
        urls.push(input)
        return fetch(`${server.url}${new URL(input).pathname}`, init)
      }) as typeof fetch,
    })
    await (providers['openai-compatible'] as Provider).call({ model: 'm', messages: USER })
    expect(DEFAULT_BASE_URLS['openai-compatible']).toBe('http://127.0.0.1:8080/v1')
    expect(urls).toEqual(['http://127.0.0.1:8080/v1/chat/completions'])
    expect(server.requests[0]?.headers.authorization).toBeUndefined()
  })

  it('throws a TypeError naming a bad config field', () => {
    expect(() =>
      createProviders({
        sim: null as unknown as Provider,
        baseUrls: {},
        apiKey: () => null,
      }),
    ).toThrow(new TypeError('Expected `sim` to be a Provider, got `null`'))
  })
})

// ---------------------------------------------------------------- through the engine

describe('openai-compatible through the real engine', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pacer-providers-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('runs 3 tasks (2 identical) with 2 requests; the ledger shows tokens, unpriced', async () => {
    const server = await vendor((req, res) => {
      // Answer slowly enough that the identical twin has to wait for its claim, not rerun it.
      setTimeout(() => {
        const prompt = JSON.stringify(req.body)
        json(
          res,
          200,
          openAiCompletion(`answer to ${prompt.length} chars`, {
            prompt_tokens: 100,
            completion_tokens: 20,
            total_tokens: 120,
            prompt_tokens_details: { cached_tokens: 40 },
          }),
          { 'x-ratelimit-remaining-requests': '1000' },
        )
      }, 50)
    })
    const engine = createEngine({
      dbPath: join(dir, 'pacer.db'),
      providers: {
        'openai-compatible': createOpenAiCompatibleProvider({
          id: 'openai-compatible',
          baseUrl: `${server.url}/v1`,
          apiKey: () => null,
        }),
      },
    })
    try {
      const task = { provider: 'openai-compatible', model: 'local-model' }
      const { batchId, enqueued } = await engine.handlers['tasks:enqueue']({
        tasks: [
          { type: 'summarize', payload: { prompt: 'Summarize the memo.' }, ...task },
          { type: 'summarize', payload: { prompt: 'Summarize the memo.' }, ...task },
          { type: 'summarize', payload: { prompt: 'Summarize the other memo.' }, ...task },
        ],
      })
      expect(enqueued).toBe(3)
      engine.start()

      const deadline = Date.now() + 20_000
      for (;;) {
        const counts = engine.queue.batch(batchId)?.counts
        if (counts && counts.queued === 0 && counts.running === 0) break
        if (Date.now() > deadline)
          throw new Error(`batch did not finish: ${JSON.stringify(counts)}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }

      expect(engine.queue.batch(batchId)?.counts).toMatchObject({
        succeeded: 2,
        reused: 1,
        failed: 0,
      })
      expect(server.requests).toHaveLength(2)
      expect(server.requests.map((r) => (r.body as { model: string }).model)).toEqual([
        'local-model',
        'local-model',
      ])
      expect(engine.ledger.totals()).toMatchObject({
        executed: 2,
        reused: 1,
        duplicates: 0,
        inputTokens: 200,
        cachedInputTokens: 80,
        cacheWriteTokens: 0,
        outputTokens: 40,
        // An unpriced local model is unknown cost, never $0.
        costMicros: null,
        unpricedCalls: 2,
        throttled: 0,
        errors: 0,
      })
    } finally {
      await engine.shutdown()
    }
  })
})
