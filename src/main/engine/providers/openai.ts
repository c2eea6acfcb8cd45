import { MISSING_KEY_CODE } from '../setup-failures'
import type { Provider, ProviderRequest, ProviderResponse, Usage } from '../types'
import {
  badKeyResponse,
  baseUrlReader,
  checkApiKeyOption,
  checkExtraHeaders,
  checkFetch,
  checkMaxOutputTokens,
  exchangeJson,
  field,
  mayCarryKey,
  plainHttpKeyResponse,
  readKey,
  tokenCount,
  toProviderResponse,
  type OkAnswer,
} from './http'

/** Where the `openai` provider sends calls unless told otherwise. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1'

export interface OpenAiCompatibleProviderOptions {
  /** Provider id: 'openai', 'openai-compatible' or a custom one; it names the ledger's provider. */
  id: string
  /**
   * API root that `/chat/completions` is appended to. A function is read at every call, so a
   * settings change applies without a restart. @default 'https://api.openai.com/v1' for id 'openai'
   * (required for any other id)
   */
  baseUrl?: string | (() => string)
  /**
   * Read at every call, never stored. null (or blank) sends no Authorization header: local servers
   * (llama.cpp, vLLM, Ollama) need none.
   */
  apiKey: () => string | null
  /** max tokens of an answer when the request does not say. @default undefined (server's default) */
  maxOutputTokens?: number
  /** Sent with every request (OpenRouter's HTTP-Referer, a proxy's tenant header). @default {} */
  extraHeaders?: Record<string, string>
  /** @default globalThis.fetch, looked up at call time */
  fetch?: typeof fetch
}

/**
 * A provider for OpenAI's Chat Completions API and the many servers that speak it. One HTTP call
 * per request, no retries: 429/503 answers go back to the runner, whose controller needs to see them.
 */
export function createOpenAiCompatibleProvider(options: OpenAiCompatibleProviderOptions): Provider {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`Expected \`options\` to be an object, got \`${String(options)}\``)
  }
  const { id, apiKey, maxOutputTokens, extraHeaders = {}, fetch: fetchOption } = options
  if (typeof id !== 'string' || id.trim() === '') {
    throw new TypeError(`Expected \`id\` to be a non-empty string, got \`${String(id)}\``)
  }
  const baseUrl = options.baseUrl ?? (id === 'openai' ? OPENAI_BASE_URL : undefined)
  if (baseUrl === undefined) {
    throw new TypeError(`Expected \`baseUrl\` for provider "${id}": only "openai" has a default`)
  }
  const readBaseUrl = baseUrlReader(baseUrl)
  checkApiKeyOption(apiKey)
  checkMaxOutputTokens(maxOutputTokens)
  checkFetch(fetchOption)
  const fixedHeaders = checkExtraHeaders(extraHeaders)

  async function call(request: ProviderRequest): Promise<ProviderResponse> {
    request.signal?.throwIfAborted()
    const base = readBaseUrl()
    const key = readKey(apiKey)
    if (key.invalid) return badKeyResponse(id)
    if (key.value !== null && !mayCarryKey(base.url)) return plainHttpKeyResponse(id, base.shown)
    const official = base.url.hostname === 'api.openai.com'
    if (key.value === null && official) {
      // api.openai.com would answer 401 anyway; failing here is deterministic and costs no request.
      return {
        status: 401,
        headers: {},
        error: 'no OpenAI API key: set it in Settings or OPENAI_API_KEY',
        errorCodes: [MISSING_KEY_CODE],
      }
    }
    const max = request.maxOutputTokens ?? maxOutputTokens
    const body: Record<string, unknown> = {
      model: request.model,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      stream: false,
    }
    // OpenAI rejects max_tokens for o-series and gpt-5 models and accepts max_completion_tokens for
    // all of them; compatible servers (llama.cpp, vLLM, Ollama) only know max_tokens.
    if (max !== undefined) body[official ? 'max_completion_tokens' : 'max_tokens'] = max
    const headers: Record<string, string> = { ...fixedHeaders }
    if (key.value !== null) headers['authorization'] = `Bearer ${key.value}`
    const answer = await exchangeJson({
      fetch: fetchOption ?? globalThis.fetch,
      url: base.endpoint('/chat/completions'),
      shownBaseUrl: base.shown,
      headers,
      body,
      signal: request.signal,
      secret: key.value,
    })
    return toProviderResponse(answer, key.value, readChatCompletion)
  }

  return { id, call }
}

/** choices[0].message.content as text: a string, or an array of content parts joined. */
function readChatCompletion(json: Record<string, unknown>): OkAnswer {
  const usage = normalizeOpenAiUsage(json['usage'])
  const choices = json['choices']
  const message = Array.isArray(choices) ? field(choices[0], 'message') : undefined
  if (message === null || typeof message !== 'object') return { text: undefined, usage }
  const content = field(message, 'content')
  let text: string
  if (typeof content === 'string') {
    text = content
  } else if (Array.isArray(content)) {
    text = content
      .map((part) => (typeof part === 'string' ? part : stringOr(field(part, 'text'), '')))
      .join('')
  } else {
    // content is null when the model refused or only called tools: the refusal is the answer.
    text = stringOr(field(message, 'refusal'), '')
  }
  return { text, usage }
}

/**
 * OpenAI usage (Chat Completions or Responses API) to normalized Usage. OpenAI's cached tokens are a
 * *subset* of prompt/input tokens, which is already the normalized shape; reasoning tokens are part
 * of completion/output tokens.
 */
export function normalizeOpenAiUsage(raw: unknown): Usage {
  const chat = field(raw, 'prompt_tokens') !== undefined
  const input = tokenCount(field(raw, chat ? 'prompt_tokens' : 'input_tokens'))
  const details = field(raw, chat ? 'prompt_tokens_details' : 'input_tokens_details')
  const output = tokenCount(field(raw, chat ? 'completion_tokens' : 'output_tokens'))
  return {
    inputTokens: input,
    // A proxy reporting more cached than prompt tokens must not produce a negative uncached part.
    cachedInputTokens: Math.min(tokenCount(field(details, 'cached_tokens')), input),
    cacheWriteTokens: 0,
    outputTokens: output,
  }
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback
}
