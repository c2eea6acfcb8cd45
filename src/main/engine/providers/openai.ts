import { MISSING_KEY_CODE } from './setup-failures'
import type {
  FinishReason,
  JsonValue,
  Provider,
  ProviderRequest,
  ProviderResponse,
  Usage,
} from '../core/types'
import {
  exchangeJson,
  field,
  reportedCount,
  toProviderResponse,
  UNREADABLE,
  type OkAnswer,
} from './http'
import {
  baseUrlReader,
  checkApiKeyOption,
  checkExtraHeaders,
  checkFetch,
  checkMaxOutputTokens,
} from './http-options'
import { keyForCall, type KeyAnswer } from './keys'

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
   * The key for the base URL a call is about to use, read at every call, never stored; or why no
   * key may go there (the call then fails before any request). null (or blank) sends no
   * Authorization header: local servers (llama.cpp, vLLM, Ollama) need none.
   */
  apiKey: (baseUrl: string) => KeyAnswer
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
    const checked = keyForCall(id, apiKey, base)
    if ('refused' in checked) return checked.refused
    const key = checked.key
    const official = base.url.hostname === 'api.openai.com'
    if (key === null && official) {
      // api.openai.com would answer 401 anyway; failing here is deterministic and costs no request.
      return {
        status: 401,
        headers: {},
        error: 'no OpenAI API key: set it in Settings or OPENAI_API_KEY',
        errorCodes: [MISSING_KEY_CODE],
      }
    }
    const { max_tokens: maxTokens, ...params } = request.params ?? {}
    const max = request.maxOutputTokens ?? maxTokens ?? maxOutputTokens
    const body: Record<string, unknown> = {
      ...params,
      model: request.model,
      // Passed through as the task gave them: content parts, tool calls, tool_call_id, name.
      messages: request.messages.map((m) => ({ ...m.fields, role: m.role, content: m.content })),
      stream: false,
    }
    // OpenAI rejects max_tokens for o-series and gpt-5 models and accepts max_completion_tokens for
    // all of its models; compatible servers (llama.cpp, vLLM, Ollama) only know max_tokens.
    const completionTokens = official || (id === 'openai' && needsCompletionTokens(request.model))
    if (max !== undefined) body[completionTokens ? 'max_completion_tokens' : 'max_tokens'] = max
    const headers: Record<string, string> = { ...fixedHeaders }
    if (key !== null) headers['authorization'] = `Bearer ${key}`
    const answer = await exchangeJson({
      fetch: fetchOption ?? globalThis.fetch,
      url: base.endpoint('/chat/completions'),
      shownBaseUrl: base.shown,
      headers,
      body,
      signal: request.signal,
      secret: key,
    })
    return toProviderResponse(answer, key, readChatCompletion)
  }

  return { id, call }
}

/** OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...), which refuse `max_tokens`. */
function needsCompletionTokens(model: string): boolean {
  return /^(o\d|gpt-5)/.test(model.replace(/^openai\//, ''))
}

/**
 * choices[0].message.content as text: a string, or an array of content parts joined; the message
 * itself and choices[0].finish_reason kept beside it.
 */
function readChatCompletion(json: Record<string, unknown>): OkAnswer {
  // No usage object: the runner estimates it, rather than ledger the call as free.
  const raw = json['usage']
  const usage = raw !== null && typeof raw === 'object' ? normalizeOpenAiUsage(raw) : undefined
  const choices = json['choices']
  const choice: unknown = Array.isArray(choices) ? choices[0] : undefined
  const message = field(choice, 'message')
  if (message === null || typeof message !== 'object') return { text: undefined, usage }
  const finish = field(choice, 'finish_reason')
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
  return {
    text,
    usage,
    message: message as JsonValue,
    ...(typeof finish === 'string' && finish !== '' ? { finishReason: openAiFinish(finish) } : {}),
  }
}

/** OpenAI's finish_reason in the normalized words; the legacy `function_call` is a tool call. */
export function openAiFinish(reason: string): FinishReason {
  return reason === 'function_call' ? 'tool_calls' : reason
}

/**
 * OpenAI usage (Chat Completions or Responses API) to normalized Usage. OpenAI's cached tokens are a
 * *subset* of prompt/input tokens, which is already the normalized shape; reasoning tokens are part
 * of completion/output tokens.
 */
export function normalizeOpenAiUsage(raw: unknown): Usage | undefined {
  const chat = field(raw, 'prompt_tokens') !== undefined
  const input = reportedCount(field(raw, chat ? 'prompt_tokens' : 'input_tokens'))
  const details = field(raw, chat ? 'prompt_tokens_details' : 'input_tokens_details')
  const output = reportedCount(field(raw, chat ? 'completion_tokens' : 'output_tokens'))
  const cached = reportedCount(field(details, 'cached_tokens'))
  // Input and output both reported, as counts: otherwise the runner estimates the call.
  if (typeof input !== 'number' || typeof output !== 'number' || cached === UNREADABLE) {
    return undefined
  }
  return {
    inputTokens: input,
    // A proxy reporting more cached than prompt tokens must not produce a negative uncached part.
    cachedInputTokens: Math.min(cached ?? 0, input),
    cacheWriteTokens: 0,
    outputTokens: output,
  }
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback
}
