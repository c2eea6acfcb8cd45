import { MISSING_KEY_CODE } from './setup-failures'
import type {
  FinishReason,
  JsonValue,
  Provider,
  ProviderRequest,
  ProviderResponse,
  RequestParams,
  Usage,
} from '../core/types'
import { toAnthropicMessages } from './anthropic-messages'
import {
  exchangeJson,
  field,
  reportedCount,
  toProviderResponse,
  UNREADABLE,
  type OkAnswer,
} from './http'
import { baseUrlReader, checkApiKeyOption, checkFetch, checkMaxOutputTokens } from './http-options'
import { keyForCall, type KeyAnswer } from './keys'

/** Where the `anthropic` provider sends calls unless told otherwise. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com'

/** The Messages API version every field used here is defined by. */
export const ANTHROPIC_VERSION = '2023-06-01'

export interface AnthropicProviderOptions {
  /**
   * API root that `/v1/messages` is appended to (as with the official SDK's baseURL). A function is
   * read at every call, so a settings change applies without a restart.
   * @default 'https://api.anthropic.com'
   */
  baseUrl?: string | (() => string)
  /**
   * The key for the base URL a call is about to use, read at every call, never stored; or why no
   * key may go there. null (or blank) fails the call with a 401, sending nothing.
   */
  apiKey: (baseUrl: string) => KeyAnswer
  /** @default '2023-06-01' */
  anthropicVersion?: string
  /** max_tokens when the request does not say; the Messages API requires one. @default 1024 */
  maxOutputTokens?: number
  /**
   * Prompt caching: `cache_control` on the stable prefix (the system prompt; in a multi-step task
   * also the end of the resent history). A function is read at every call (the setting).
   * @default true
   */
  promptCaching?: boolean | (() => boolean)
  /** @default globalThis.fetch, looked up at call time */
  fetch?: typeof fetch
}

/**
 * A provider for Anthropic's Messages API. One HTTP call per request, no retries: 429 and 529
 * answers go back to the runner with their retry-after and anthropic-ratelimit-* headers.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`Expected \`options\` to be an object, got \`${String(options)}\``)
  }
  const {
    baseUrl = ANTHROPIC_BASE_URL,
    apiKey,
    anthropicVersion = ANTHROPIC_VERSION,
    maxOutputTokens = 1024,
    promptCaching = true,
    fetch: fetchOption,
  } = options
  const readBaseUrl = baseUrlReader(baseUrl)
  checkApiKeyOption(apiKey)
  if (typeof anthropicVersion !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(anthropicVersion)) {
    throw new TypeError(
      `Expected \`anthropicVersion\` to be a date like '2023-06-01', got \`${String(anthropicVersion)}\``,
    )
  }
  checkMaxOutputTokens(maxOutputTokens)
  checkFetch(fetchOption)
  if (typeof promptCaching !== 'boolean' && typeof promptCaching !== 'function') {
    throw new TypeError(
      `Expected \`promptCaching\` to be a boolean or a function, got \`${String(promptCaching)}\``,
    )
  }
  const caching = typeof promptCaching === 'function' ? promptCaching : () => promptCaching

  async function call(request: ProviderRequest): Promise<ProviderResponse> {
    request.signal?.throwIfAborted()
    const base = readBaseUrl()
    const checked = keyForCall('anthropic', apiKey, base)
    if ('refused' in checked) return checked.refused
    const key = checked.key
    if (key === null) {
      // Deterministic: the runner caches it as a failed result instead of retrying a call that
      // cannot succeed, and no request leaves the machine.
      return {
        status: 401,
        headers: {},
        error: 'no Anthropic API key: set it in Settings or ANTHROPIC_API_KEY',
        errorCodes: [MISSING_KEY_CODE],
      }
    }
    const params = request.params ?? {}
    const unsupported = unsupportedByAnthropic(params)
    if (unsupported) return { status: 400, headers: {}, error: unsupported }
    const turns = toAnthropicMessages(request.messages)
    const { system, messages } = caching()
      ? withCacheBreakpoints(turns, request.cacheHistory === true)
      : turns
    const body: Record<string, unknown> = {
      model: request.model,
      max_tokens: request.maxOutputTokens ?? params.max_tokens ?? maxOutputTokens,
      messages,
    }
    if (system !== undefined) body['system'] = system
    if (params.temperature !== undefined) body['temperature'] = params.temperature
    if (params.top_p !== undefined) body['top_p'] = params.top_p
    if (params.stop !== undefined) {
      body['stop_sequences'] = typeof params.stop === 'string' ? [params.stop] : params.stop
    }
    const answer = await exchangeJson({
      fetch: fetchOption ?? globalThis.fetch,
      url: base.endpoint('/v1/messages'),
      shownBaseUrl: base.shown,
      headers: { 'x-api-key': key, 'anthropic-version': anthropicVersion },
      body,
      signal: request.signal,
      secret: key,
    })
    return toProviderResponse(answer, key, readMessage)
  }

  return { id: 'anthropic', call }
}

/** Request parameters the Messages API has no field for. */
export const ANTHROPIC_UNSUPPORTED_PARAMS = ['response_format', 'seed'] as const

/**
 * Why the Messages API cannot honour these params, or null. Refused, not dropped: an answer
 * produced without the JSON format or the seed asked for would pass for one produced with it.
 */
export function unsupportedByAnthropic(params: RequestParams): string | null {
  const found = ANTHROPIC_UNSUPPORTED_PARAMS.filter((p) => params[p] !== undefined)
  if (found.length === 0) return null
  return `${found.join(' and ')} ${found.length > 1 ? 'are' : 'is'} not supported by Anthropic's Messages API: remove ${found.length > 1 ? 'them' : 'it'} from the task's params (or the run's), or run the task on an OpenAI-compatible provider`
}

const EPHEMERAL = Object.freeze({ type: 'ephemeral' })

type Content = string | readonly Record<string, unknown>[]

/** A turn as the Messages API takes it: its content a string or content blocks. */
interface Turn {
  role: string
  content: Content
}

/**
 * The request with `cache_control` breakpoints on its stable prefix: the system prompt (shared by
 * every task of a type), and with `history` the last turn, so the next step of a multi-step task
 * reads all it resends from the cache (each step writes only what it adds; Anthropic looks for
 * the longest cached prefix up to 20 blocks before a breakpoint). Two of the four breakpoints a
 * request may carry. A prefix shorter than the model's minimum (1,024 to 4,096 tokens) is simply
 * not cached: the marker costs nothing then, so it is sent regardless of length.
 */
function withCacheBreakpoints(
  request: { system: string | undefined; messages: readonly Turn[] },
  history: boolean,
): { system: Record<string, unknown>[] | undefined; messages: Turn[] } {
  const system =
    request.system === undefined
      ? undefined
      : [{ type: 'text', text: request.system, cache_control: EPHEMERAL }]
  const messages = [...request.messages]
  const last = messages.length - 1
  const turn = messages[last]
  if (history && turn) messages[last] = { role: turn.role, content: markLastBlock(turn.content) }
  return { system, messages }
}

function markLastBlock(content: Content): Record<string, unknown>[] {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : [...content]
  const end = blocks.length - 1
  if (end >= 0) blocks[end] = { ...blocks[end], cache_control: EPHEMERAL }
  return blocks
}

/**
 * The text blocks of a message, concatenated; thinking and tool_use blocks are not the answer (they
 * stay in the message: the content blocks as they came), with stop_reason normalized beside it.
 */
function readMessage(json: Record<string, unknown>): OkAnswer {
  // No usage object: the runner estimates it, rather than ledger the call as free.
  const raw = json['usage']
  const usage = raw !== null && typeof raw === 'object' ? normalizeAnthropicUsage(raw) : undefined
  const content = json['content']
  if (!Array.isArray(content)) return { text: undefined, usage }
  const text = content
    .filter((block) => field(block, 'type') === 'text' && typeof field(block, 'text') === 'string')
    .map((block) => field(block, 'text') as string)
    .join('')
  const stop = json['stop_reason']
  return {
    text,
    usage,
    message: content as JsonValue,
    ...(typeof stop === 'string' && stop !== '' ? { finishReason: anthropicFinish(stop) } : {}),
  }
}

const ANTHROPIC_FINISH: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
}

/** Anthropic's stop_reason in the normalized words (types.ts FinishReason); others kept as sent. */
export function anthropicFinish(reason: string): FinishReason {
  return Object.hasOwn(ANTHROPIC_FINISH, reason) ? ANTHROPIC_FINISH[reason]! : reason
}

/**
 * Anthropic usage to normalized Usage. Anthropic's `input_tokens` excludes cache reads and cache
 * writes, which are reported *separately*: all three are summed into inputTokens.
 */
export function normalizeAnthropicUsage(raw: unknown): Usage | undefined {
  const read = reportedCount(field(raw, 'cache_read_input_tokens'))
  const write = reportedCount(field(raw, 'cache_creation_input_tokens'))
  const input = reportedCount(field(raw, 'input_tokens'))
  const output = reportedCount(field(raw, 'output_tokens'))
  // Input and output both reported, as counts: otherwise the runner estimates the call.
  if (typeof input !== 'number' || typeof output !== 'number') return undefined
  if (read === UNREADABLE || write === UNREADABLE) return undefined
  const total = input + (read ?? 0) + (write ?? 0)
  if (!Number.isSafeInteger(total)) return undefined
  return {
    inputTokens: total,
    cachedInputTokens: read ?? 0,
    cacheWriteTokens: write ?? 0,
    outputTokens: output,
  }
}
