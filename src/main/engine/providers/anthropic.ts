import type { ChatMessage, Provider, ProviderRequest, ProviderResponse, Usage } from '../types'
import {
  badKeyResponse,
  baseUrlReader,
  checkApiKeyOption,
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
  /** Read at every call, never stored. null (or blank) fails the call with a 401, sending nothing. */
  apiKey: () => string | null
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
    const key = readKey(apiKey)
    if (key.invalid) return badKeyResponse('anthropic')
    if (key.value !== null && !mayCarryKey(base.url)) {
      return plainHttpKeyResponse('anthropic', base.shown)
    }
    if (key.value === null) {
      // Deterministic: the runner caches it as a failed result instead of retrying a call that
      // cannot succeed, and no request leaves the machine.
      return {
        status: 401,
        headers: {},
        error: 'no Anthropic API key: set it in Settings or ANTHROPIC_API_KEY',
      }
    }
    const turns = toAnthropicMessages(request.messages)
    const { system, messages } = caching()
      ? withCacheBreakpoints(turns, request.cacheHistory === true)
      : turns
    const body: Record<string, unknown> = {
      model: request.model,
      max_tokens: request.maxOutputTokens ?? maxOutputTokens,
      messages,
    }
    if (system !== undefined) body['system'] = system
    const answer = await exchangeJson({
      fetch: fetchOption ?? globalThis.fetch,
      url: base.endpoint('/v1/messages'),
      shownBaseUrl: base.shown,
      headers: { 'x-api-key': key.value, 'anthropic-version': anthropicVersion },
      body,
      signal: request.signal,
      secret: key.value,
    })
    return toProviderResponse(answer, key.value, readMessage)
  }

  return { id: 'anthropic', call }
}

/**
 * Chat messages in the Messages API's shape: system turns go to the top-level `system` field (the
 * API has no system role), and consecutive turns of one role are merged because the API requires
 * user and assistant to alternate.
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): {
  system: string | undefined
  messages: { role: 'user' | 'assistant'; content: string }[]
} {
  const system: string[] = []
  const out: { role: 'user' | 'assistant'; content: string }[] = []
  for (const m of messages) {
    if (m.role === 'system') {
      system.push(m.content)
      continue
    }
    const last = out[out.length - 1]
    if (last && last.role === m.role) last.content = `${last.content}\n\n${m.content}`
    else out.push({ role: m.role, content: m.content })
  }
  return { system: system.length > 0 ? system.join('\n\n') : undefined, messages: out }
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
export function withCacheBreakpoints(
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

/** The text blocks of a message, concatenated; thinking and tool_use blocks are not the answer. */
function readMessage(json: Record<string, unknown>): OkAnswer {
  const usage = normalizeAnthropicUsage(json['usage'])
  const content = json['content']
  if (!Array.isArray(content)) return { text: undefined, usage }
  const text = content
    .filter((block) => field(block, 'type') === 'text' && typeof field(block, 'text') === 'string')
    .map((block) => field(block, 'text') as string)
    .join('')
  return { text, usage }
}

/**
 * Anthropic usage to normalized Usage. Anthropic's `input_tokens` excludes cache reads and cache
 * writes, which are reported *separately*: all three are summed into inputTokens.
 */
export function normalizeAnthropicUsage(raw: unknown): Usage {
  const read = tokenCount(field(raw, 'cache_read_input_tokens'))
  const write = tokenCount(field(raw, 'cache_creation_input_tokens'))
  return {
    inputTokens: tokenCount(field(raw, 'input_tokens')) + read + write,
    cachedInputTokens: read,
    cacheWriteTokens: write,
    outputTokens: tokenCount(field(raw, 'output_tokens')),
  }
}
