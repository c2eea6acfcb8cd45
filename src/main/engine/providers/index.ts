import type { Provider } from '../core/types'
import { ANTHROPIC_BASE_URL, createAnthropicProvider } from './anthropic'
import { OPENAI_BASE_URL, createOpenAiCompatibleProvider } from './openai'
import { keyFor, type BaseUrlFrom, type KeyAnswer, type ProviderKey } from './keys'
import { parseBaseUrl } from './http-options'

export type { ProviderKey } from './keys'

/** The providers that call a remote (or local) HTTP server and may need a key. */
export type HttpProviderId = 'openai' | 'anthropic' | 'openai-compatible'

/**
 * Base URL of each HTTP provider when Settings leave it unset. 'openai-compatible' points at
 * llama.cpp's llama-server default (port 8080, OpenAI routes under /v1), a typical local server;
 * vLLM (:8000/v1) and Ollama (:11434/v1) users set their own in Settings.
 */
export const DEFAULT_BASE_URLS: Readonly<Record<HttpProviderId, string>> = Object.freeze({
  openai: OPENAI_BASE_URL,
  anthropic: ANTHROPIC_BASE_URL,
  'openai-compatible': 'http://127.0.0.1:8080/v1',
})

export interface ProvidersConfig {
  /** The built-in simulated provider, passed through as 'sim'. */
  sim: Provider
  /**
   * Base URL overrides; null or missing = DEFAULT_BASE_URLS. Read at every call (define it as a
   * getter over the settings store), so a settings change applies without a restart.
   */
  baseUrls: Partial<Record<HttpProviderId, string | null>>
  /**
   * Base URLs given to this process (`--base-url`, OPENAI_BASE_URL and the like): they win over
   * `baseUrls`, and a key from the environment may go to them. @default {}
   */
  processBaseUrls?: Partial<Record<HttpProviderId, string>>
  /** The key of a provider and where it came from, read at every call; null = none. */
  apiKey: (id: HttpProviderId) => ProviderKey | null
  /** Anthropic prompt caching, read at every call. @default on */
  promptCaching?: () => boolean
  /** @default globalThis.fetch, looked up at call time */
  fetch?: typeof fetch
}

/** Every provider the console offers, by id: sim, openai, anthropic and openai-compatible. */
export function createProviders(config: ProvidersConfig): Record<string, Provider> {
  if (config === null || typeof config !== 'object') {
    throw new TypeError(`Expected \`config\` to be an object, got \`${String(config)}\``)
  }
  const { sim, apiKey, fetch } = config
  if (sim === null || typeof sim !== 'object' || typeof sim.call !== 'function') {
    throw new TypeError(`Expected \`sim\` to be a Provider, got \`${String(sim)}\``)
  }
  const baseUrls: unknown = config.baseUrls
  if (baseUrls === null || typeof baseUrls !== 'object') {
    throw new TypeError(`Expected \`baseUrls\` to be an object, got \`${String(baseUrls)}\``)
  }
  if (typeof apiKey !== 'function') {
    throw new TypeError(`Expected \`apiKey\` to be a function, got \`${String(apiKey)}\``)
  }
  const processBaseUrls = config.processBaseUrls ?? {}
  for (const [id, url] of Object.entries(processBaseUrls))
    parseBaseUrl(url, `processBaseUrls.${id}`)
  // `config.baseUrls` is re-read on purpose: it may be a getter returning the current settings.
  const baseUrl = (id: HttpProviderId) => (): string =>
    baseUrlInEffect(id, processBaseUrls, config.baseUrls).url
  // The adapter says which URL it is about to call: the key is checked against that one.
  const key = (id: HttpProviderId) => (url: string) =>
    keyAnswer(id, url, apiKey(id), processBaseUrls)
  return {
    sim,
    openai: createOpenAiCompatibleProvider({
      id: 'openai',
      baseUrl: baseUrl('openai'),
      apiKey: key('openai'),
      fetch,
    }),
    anthropic: createAnthropicProvider({
      baseUrl: baseUrl('anthropic'),
      apiKey: key('anthropic'),
      promptCaching: config.promptCaching ?? true,
      fetch,
    }),
    'openai-compatible': createOpenAiCompatibleProvider({
      id: 'openai-compatible',
      baseUrl: baseUrl('openai-compatible'),
      apiKey: key('openai-compatible'),
      fetch,
    }),
  }
}

/** Where a provider's calls go: the process's base URL, else the one in Settings, else its default. */
export function baseUrlInEffect(
  id: HttpProviderId,
  processBaseUrls: Partial<Record<HttpProviderId, string>>,
  storedBaseUrls: Partial<Record<HttpProviderId, string | null>>,
): { url: string; from: BaseUrlFrom } {
  const given = processBaseUrls[id]
  if (given !== undefined) return { url: given, from: 'process' }
  const stored = storedBaseUrls[id]
  if (typeof stored === 'string' && stored.trim() !== '') return { url: stored, from: 'settings' }
  return { url: DEFAULT_BASE_URLS[id], from: 'default' }
}

/** The key a call to `url` may carry, or why none may (keys.ts has the rule). */
export function keyAnswer(
  id: HttpProviderId,
  url: string,
  key: ProviderKey | null,
  processBaseUrls: Partial<Record<HttpProviderId, string>>,
): KeyAnswer {
  return keyFor({
    provider: id,
    url,
    key,
    processUrl: processBaseUrls[id],
    defaultUrl: DEFAULT_BASE_URLS[id],
  })
}
