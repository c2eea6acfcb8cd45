import { createHash } from 'node:crypto'
import { stringifyExact } from '../../../shared/exact-json'
import { estimateTokens, messageChars } from './prompt'
import type {
  ChatMessage,
  Clock,
  Provider,
  ProviderRequest,
  ProviderResponse,
  Usage,
} from '../core/types'
import { systemClock } from '../core/types'
import { SIM_REQUESTS_PER_MINUTE } from './sim-limits'

/** The model a new user's first batch runs on. */
export const SIM_DEFAULT_MODEL = 'sim-small'

export { SIM_REQUESTS_PER_MINUTE }

export interface SimProviderOptions {
  /** Seeds every pseudo-random choice (text, lengths, jitter, errors). @default 42 */
  seed?: number
  /**
   * Hidden concurrency capacity: a call arriving while this many are in flight is answered 429,
   * like a provider pushing back. AIMD has to find it. @default 6
   */
  capacity?: number
  /** Multiplies every latency; tests use ~0.01. 0 answers on the next timer tick. @default 1 */
  latencyScale?: number
  /**
   * Request budget per rolling minute of clock time, reported in the `x-ratelimit-*` headers and
   * enforced with 429s. It must stay far above the near-limit threshold in normal use, or every
   * answer would be near_limit and AIMD would never grow. 0 = no limit (and no budget headers):
   * a simulator as wide as the engine, to measure the engine. @default SIM_REQUESTS_PER_MINUTE
   */
  requestsPerMinute?: number
  /** Share of calls answered 500, chosen by hash so a run is reproducible. @default 0 */
  errorRate?: number
  /** Clock for the rolling request window. @default systemClock */
  clock?: Clock
}

const WINDOW_MS = 60_000
const MIN_OUTPUT_TOKENS = 16
const DEFAULT_MAX_OUTPUT_TOKENS = 4096
const BASE_LATENCY_MS = 60
const LATENCY_MS_PER_INPUT_TOKEN = 0.02
const JITTER_MS = 40
const THROTTLE_LATENCY_MS = 5

/**
 * A deterministic simulated LLM, so a new user sees deduplication, AIMD and the ledger work offline
 * with no key. Same seed, model and messages give the same text and usage; latency is real time.
 */
export function createSimProvider(options: SimProviderOptions = {}): Provider {
  const { seed, capacity, latencyScale, requestsPerMinute, errorRate, clock } =
    checkOptions(options)

  // Real-time (performance.now) end of each call in flight: tells a throttled caller when a slot frees.
  const inflight = new Set<{ endsAt: number }>()
  const window = requestsPerMinute === 0 ? null : new RequestWindow(requestsPerMinute)
  // Consecutive 500s per request content. Indexing the error draw by attempt keeps runs
  // reproducible while letting a retry succeed, as a transient 500 should; a pure content hash
  // would fail the same request forever.
  const errorStreaks = new Map<string, number>()

  /**
   * A 429 whose headers tell the truth: a refusal of the request budget says it is exhausted and
   * when it refills; a refusal beyond the concurrency capacity says how much budget is left (a
   * pacing scheduler would otherwise take it for an exhausted budget, not for too many at once).
   */
  function throttled(
    model: string,
    waitMs: number,
    now: number,
    cause: 'requests' | 'concurrency',
  ): ProviderResponse {
    const wait = Math.max(1, Math.ceil(waitMs))
    // No request budget (--sim-rpm 0): a refusal is only ever about concurrency, with no budget to tell.
    const budget = !window
      ? {}
      : cause === 'requests'
        ? { ...window.headers(now, 0), 'x-ratelimit-reset-requests': formatDuration(wait) }
        : window.headers(now, Math.max(0, requestsPerMinute - window.count(now)))
    return {
      status: 429,
      headers: {
        ...budget,
        'retry-after': String(Math.ceil(wait / 1000)),
        'retry-after-ms': String(wait),
      },
      error:
        `Rate limit reached for ${model} in organization org-sim on requests. ` +
        `Please try again in ${formatDuration(wait)}.`,
    }
  }

  function call(request: ProviderRequest): Promise<ProviderResponse> {
    const { model, messages, signal } = request
    if (signal?.aborted) return Promise.reject(abortError(signal))
    const invalid = validateRequest(request)
    if (invalid) {
      return Promise.resolve({ status: 400, headers: {}, error: invalid })
    }
    const key = contentKey(seed, model, messages)
    const rng = sfc32(key)
    const jitter = rng() * JITTER_MS
    const factor = 0.8 + rng() * 0.4
    const arrival = clock.now()

    if (window && window.count(arrival) >= requestsPerMinute) {
      const waitMs = window.freesAt(arrival) - arrival
      return delay(THROTTLE_LATENCY_MS * latencyScale, signal, () =>
        throttled(model, waitMs, clock.now(), 'requests'),
      )
    }
    if (inflight.size >= capacity) {
      return delay((THROTTLE_LATENCY_MS + jitter / 8) * latencyScale, signal, () => {
        let earliest = Number.POSITIVE_INFINITY
        for (const c of inflight) earliest = Math.min(earliest, c.endsAt)
        const waitMs = Number.isFinite(earliest) ? earliest - performance.now() : 1
        return throttled(model, waitMs, clock.now(), 'concurrency')
      })
    }

    window?.add(arrival)
    const inputTokens = estimateTokens(messages)
    const latencyMs =
      (BASE_LATENCY_MS + LATENCY_MS_PER_INPUT_TOKEN * inputTokens + jitter) * latencyScale
    const slot = { endsAt: performance.now() + latencyMs }
    inflight.add(slot)
    const free = () => inflight.delete(slot)

    let fails = false
    if (errorRate > 0) {
      const attempt = errorStreaks.get(key) ?? 0
      fails = unitFraction(`${key}:${attempt}`) < errorRate
      if (fails) errorStreaks.set(key, attempt + 1)
      else errorStreaks.delete(key)
    }

    return delay(
      latencyMs,
      signal,
      (): ProviderResponse => {
        free()
        const now = clock.now()
        const headers = window
          ? window.headers(now, Math.max(0, requestsPerMinute - window.count(now)))
          : {}
        if (fails) {
          return {
            status: 500,
            headers,
            error: 'The server had an error while processing your request. Sorry about that!',
          }
        }
        return answer(request, { rng, factor }, inputTokens, headers)
      },
      free,
    )
  }

  return { id: 'sim', call }
}

/** A 200: text about as long as the prompt asked for (times the call's drawn factor). */
function answer(
  { messages, maxOutputTokens }: ProviderRequest,
  draw: { rng: () => number; factor: number },
  inputTokens: number,
  headers: Record<string, string>,
): ProviderResponse {
  const maxOut = maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS
  const wanted = Math.max(MIN_OUTPUT_TOKENS, Math.round(promptTokens(messages) * draw.factor))
  const outputTokens = Math.min(maxOut, wanted)
  const usage: Usage = { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens }
  const text = pseudoText(draw.rng, outputTokens * 4)
  // Only a cap the request set cuts an answer short: the built-in default never did.
  const cut = maxOutputTokens !== undefined && wanted > maxOutputTokens
  // No `message`: it would only repeat the text in every stored result of a big sim batch.
  return { status: 200, headers, text, usage, finishReason: cut ? 'length' : 'stop' }
}

/** The options with their defaults, each checked: a TypeError names the field and the value. */
function checkOptions(options: SimProviderOptions): Required<SimProviderOptions> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`Expected \`options\` to be an object, got \`${String(options)}\``)
  }
  const {
    seed = 42,
    capacity = 6,
    latencyScale = 1,
    requestsPerMinute = SIM_REQUESTS_PER_MINUTE,
    errorRate = 0,
    clock = systemClock,
  } = options
  check('seed', seed, Number.isSafeInteger(seed), 'a safe integer')
  check('capacity', capacity, Number.isInteger(capacity) && capacity >= 1, 'an integer >= 1')
  check(
    'latencyScale',
    latencyScale,
    Number.isFinite(latencyScale) && latencyScale >= 0,
    'a number >= 0',
  )
  check(
    'requestsPerMinute',
    requestsPerMinute,
    Number.isInteger(requestsPerMinute) && requestsPerMinute >= 0,
    'an integer >= 0 (0 = no limit)',
  )
  check('errorRate', errorRate, errorRate >= 0 && errorRate <= 1, 'a number in [0, 1]')
  if (clock === null || typeof clock !== 'object' || typeof clock.now !== 'function') {
    throw new TypeError(`Expected \`clock\` to have a now() function, got \`${String(clock)}\``)
  }

  return { seed, capacity, latencyScale, requestsPerMinute, errorRate, clock }
}

/** Clock times of accepted calls in the rolling minute: a plain queue with a moving head. */
class RequestWindow {
  readonly #accepted: number[] = []
  #head = 0
  constructor(readonly requestsPerMinute: number) {}

  add(now: number): void {
    this.#accepted.push(now)
  }

  count(now: number): number {
    const accepted = this.#accepted
    while (this.#head < accepted.length && (accepted[this.#head] as number) <= now - WINDOW_MS) {
      this.#head++
    }
    if (this.#head > 1024 && this.#head * 2 > accepted.length) {
      accepted.splice(0, this.#head)
      this.#head = 0
    }
    return accepted.length - this.#head
  }

  /** When the oldest call in the window leaves it (the window is full when this is asked). */
  freesAt(now: number): number {
    return this.count(now) > 0 ? (this.#accepted[this.#head] as number) + WINDOW_MS : now
  }

  /** OpenAI-style budget headers as of `now`. */
  headers(now: number, remaining: number): Record<string, string> {
    const oldest = this.count(now) > 0 ? (this.#accepted[this.#head] as number) : now - WINDOW_MS
    return {
      'x-ratelimit-limit-requests': String(this.requestsPerMinute),
      'x-ratelimit-remaining-requests': String(remaining),
      'x-ratelimit-reset-requests': formatDuration(oldest + WINDOW_MS - now),
    }
  }
}

/**
 * Tokens of the longest user message: the answer is about as long as the task asked. Not the last
 * user message: in a multi-step run that is the short "Continue: step k of n.", which would give
 * 16-token answers and hide the quadratic growth of resent history (seed: step k input ~ k x prompt).
 */
function promptTokens(messages: readonly ChatMessage[]): number {
  let longest: ChatMessage | undefined
  for (const m of messages) {
    if (m.role === 'user' && (!longest || messageChars(m) > messageChars(longest))) longest = m
  }
  return estimateTokens(longest ? [longest] : messages)
}

function validateRequest(request: ProviderRequest): string | undefined {
  const { model, messages, maxOutputTokens } = request
  if (typeof model !== 'string' || model === '') return 'model: must be a non-empty string'
  if (!Array.isArray(messages) || messages.length === 0) {
    return 'messages: must be a non-empty array'
  }
  for (const m of messages) {
    if (m === null || typeof m !== 'object') return 'messages: each message must be an object'
    if (typeof m.content !== 'string' && !Array.isArray(m.content) && m.role !== 'assistant') {
      return 'messages: each message needs a content (a string or content parts)'
    }
  }
  if (
    maxOutputTokens !== undefined &&
    (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1)
  ) {
    return `max_tokens: must be an integer >= 1, got ${String(maxOutputTokens)}`
  }
  return undefined
}

/** Resolves with answer() after ms of real time; an abort rejects at once and runs onAbort. */
function delay(
  ms: number,
  signal: AbortSignal | undefined,
  answer: () => ProviderResponse,
  onAbort?: () => void,
): Promise<ProviderResponse> {
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer)
      onAbort?.()
      reject(abortError(signal as AbortSignal))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort)
      resolve(answer())
    }, ms)
    signal?.addEventListener('abort', abort, { once: true })
  })
}

/** Like fetch: an AbortError, with the signal's reason kept as the cause. */
function abortError(signal: AbortSignal): DOMException {
  return new DOMException('The operation was aborted', { name: 'AbortError', cause: signal.reason })
}

function contentKey(seed: number, model: string, messages: readonly ChatMessage[]): string {
  const canonical = stringifyExact([
    seed,
    model,
    messages.map((m) => (m.fields ? [m.role, m.content, m.fields] : [m.role, m.content])),
  ])
  return createHash('sha256').update(canonical).digest('hex')
}

/** A number in [0, 1) from a string, by hash. */
function unitFraction(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) / 2 ** 32
}

/** sfc32 (PractRand) seeded from a hex digest: small, fast and good enough for fake text. */
function sfc32(hexDigest: string): () => number {
  let a = parseInt(hexDigest.slice(0, 8), 16) | 0
  let b = parseInt(hexDigest.slice(8, 16), 16) | 0
  let c = parseInt(hexDigest.slice(16, 24), 16) | 0
  let d = parseInt(hexDigest.slice(24, 32), 16) | 0
  return () => {
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
}

const SYLLABLES = 'ka lo mi ren ta vo quel dar is an por tem lu se nor vi ba cor el fin'.split(' ')

/** Pseudo-words of exactly `chars` characters, so estimateTokens(text) ~ the reported output. */
function pseudoText(rng: () => number, chars: number): string {
  const parts: string[] = []
  let length = 0
  let wordsInSentence = 0
  while (length < chars) {
    let word = ''
    const syllables = 1 + Math.floor(rng() * 3)
    for (let i = 0; i < syllables; i++) {
      word += SYLLABLES[Math.floor(rng() * SYLLABLES.length)] as string
    }
    if (wordsInSentence === 0) word = word.charAt(0).toUpperCase() + word.slice(1)
    wordsInSentence++
    if (wordsInSentence >= 6 && rng() < 0.2) {
      word += '.'
      wordsInSentence = 0
    }
    parts.push(word)
    length += word.length + 1
  }
  return parts.join(' ').slice(0, chars)
}

/** Go-style duration as OpenAI sends it: `20ms`, `1.5s`, `6m0s`. */
function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms))
  if (total < 1000) return `${total}ms`
  const h = Math.floor(total / 3_600_000)
  const m = Math.floor((total % 3_600_000) / 60_000)
  const s = (total % 60_000) / 1000
  return `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`
}

function check(name: string, value: unknown, ok: boolean, expected: string): void {
  if (typeof value !== 'number' || !ok) {
    throw new TypeError(`Expected \`${name}\` to be ${expected}, got \`${String(value)}\``)
  }
}
