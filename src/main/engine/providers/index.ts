import type { Provider } from '../types'
import { ANTHROPIC_BASE_URL, createAnthropicProvider } from './anthropic'
import { OPENAI_BASE_URL, createOpenAiCompatibleProvider } from './openai'

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
  /** The key of a provider, read at every call; null = none. */
  apiKey: (id: HttpProviderId) => string | null
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
  // `config.baseUrls` is re-read on purpose: it may be a getter returning the current settings.
  const baseUrl = (id: HttpProviderId) => (): string => {
    const url = config.baseUrls[id]
    return typeof url === 'string' && url.trim() !== '' ? url : DEFAULT_BASE_URLS[id]
  }
  return {
    sim,
    openai: createOpenAiCompatibleProvider({
      id: 'openai',
      baseUrl: baseUrl('openai'),
      apiKey: () => apiKey('openai'),
      fetch,
    }),
    anthropic: createAnthropicProvider({
      baseUrl: baseUrl('anthropic'),
      apiKey: () => apiKey('anthropic'),
      promptCaching: config.promptCaching ?? true,
      fetch,
    }),
    'openai-compatible': createOpenAiCompatibleProvider({
      id: 'openai-compatible',
      baseUrl: baseUrl('openai-compatible'),
      apiKey: () => apiKey('openai-compatible'),
      fetch,
    }),
  }
}
