/**
 * The OpenAI-compatible provider when the network or the server misbehaves: refused connections,
 * DNS failures, aborts, unreadable 2xx bodies, redirects, and the key kept out of every answer.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { classify, isDeterministicFailure } from '../../../src/main/engine/providers/classify'
import { createOpenAiCompatibleProvider } from '../../../src/main/engine/providers/openai'
import {
  SENTINEL_KEY,
  USER,
  closeVendors,
  closedPort,
  json,
  openAi,
  openAiCompletion,
  vendor,
} from '../../helpers/fake-vendor'

afterEach(closeVendors)

describe('OpenAI-compatible provider', () => {
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
    const server = await vendor((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.write('{"choices": [')
    })
    // The client holds the response (headers in, body not yet ended) when the abort comes.
    let headersIn!: () => void
    const received = new Promise<void>((resolve) => (headersIn = resolve))
    const watched: typeof fetch = async (...args) => {
      const res = await fetch(...args)
      headersIn()
      return res
    }
    const controller = new AbortController()
    const pending = openAi(server.url, null, { fetch: watched }).call({
      model: 'm',
      messages: USER,
      signal: controller.signal,
    })
    await received
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
      json(res, 200, {
        error: { message: 'upstream timed out' },
        usage: { prompt_tokens: 7, completion_tokens: 0 },
      }),
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
