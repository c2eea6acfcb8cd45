/**
 * createProviders, and the openai-compatible provider once end to end through the real engine.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../../src/main/engine/app/engine'
import {
  DEFAULT_BASE_URLS,
  createProviders,
  type ProviderKey,
} from '../../../src/main/engine/providers/index'
import { createOpenAiCompatibleProvider } from '../../../src/main/engine/providers/openai'
import { createSimProvider } from '../../../src/main/engine/providers/sim'
import type { Provider } from '../../../src/main/engine/core/types'
import {
  USER,
  anthropicMessage,
  closeVendors,
  json,
  openAiCompletion,
  vendor,
} from '../../helpers/fake-vendor'
import { until } from '../../helpers/until'

afterEach(closeVendors)

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

      await until(() => {
        const counts = engine.queue.batch(batchId)?.counts
        return counts && counts.queued === 0 && counts.running === 0
      })

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
