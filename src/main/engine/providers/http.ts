/**
 * The HTTP plumbing both vendor adapters (openai.ts, anthropic.ts) share: one JSON POST (keys.ts
 * says where a key may travel), and the mapping of its answer to a ProviderResponse with the key
 * scrubbed from every string (their option checks are in http-options.ts). Nothing here knows a
 * vendor's body format.
 */
import { stringifyExact } from '../../../shared/exact-json'
import { USER_AGENT } from '../core/version'
import { BAD_PORT_CODE } from './setup-failures'
import type { FinishReason, JsonValue, ProviderResponse, Usage } from '../core/types'

/**
 * What a 2xx body means; text is undefined when the JSON is not the expected shape, usage when the
 * body reports none (the runner then estimates it).
 */
export interface OkAnswer {
  text: string | undefined
  usage: Usage | undefined
  /** Normalized (types.ts FinishReason); undefined when the answer did not say. */
  finishReason?: FinishReason
  /** The provider's message as it came (scrubbed of the key like the rest). */
  message?: JsonValue
}

/** The HTTP answer, before it is read as a provider's format. */
export interface JsonAnswer {
  status: number
  statusText: string
  headers: Record<string, string>
  /** Parsed body, or undefined when the body is not JSON. */
  json: unknown
  raw: string
  /** Why the body of a 2xx answer ends early (the connection failed mid-body). */
  cutShort?: string
  /** The body was over MAX_ANSWER_BYTES: this many bytes received (or announced), none kept. */
  oversize?: number
}

/**
 * The most of an answer's body Pacer reads: 64 MiB, far above any model's output cap (128k
 * tokens are about 0.5 MB), far below what a string, a result row and its JSON copies can hold
 * (a 300 MB answer failed the task with "Invalid string length" after it was paid).
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024

/**
 * POSTs JSON once. Aborts reject as fetch rejects them (the runner tells its own abort
 * from its timeout by its signals); any other failure becomes an Error naming the base URL and the
 * cause, with the key scrubbed.
 */
export async function exchangeJson(x: {
  fetch: typeof fetch
  url: string
  shownBaseUrl: string
  headers: Record<string, string>
  body: unknown
  signal?: AbortSignal
  secret: string | null
}): Promise<JsonAnswer> {
  let res: Response
  try {
    res = await x.fetch(x.url, {
      method: 'POST',
      // The User-Agent last: every call says which Pacer sent it, whatever extra headers say.
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        ...x.headers,
        'user-agent': USER_AGENT,
      },
      // Numbers as the batch file wrote them (a payload's, a param's): never rounded to a double.
      body: stringifyExact(x.body),
      signal: x.signal,
      // Never follow: fetch re-sends custom headers such as x-api-key to wherever a redirect
      // points (it only drops Authorization across origins), and turns a POST into a GET.
      redirect: 'manual',
    })
  } catch (err) {
    if (x.signal?.aborted) throw err
    throw (
      badPort(x.url, x.shownBaseUrl, err) ??
      networkError(`cannot reach ${x.shownBaseUrl}`, err, x.secret)
    )
  }
  const headers: Record<string, string> = {}
  // Headers iterates lower-cased names: the contract's shape, so every x-ratelimit-* and
  // retry-after header reaches the classifier.
  res.headers.forEach((value, name) => {
    headers[name] = value
  })
  let raw: string
  try {
    const read = await readCapped(res, MAX_ANSWER_BYTES)
    if (typeof read === 'number') {
      return {
        status: res.status,
        statusText: res.statusText,
        headers,
        json: undefined,
        raw: '',
        oversize: read,
      }
    }
    raw = read
  } catch (err) {
    if (x.signal?.aborted) throw err
    const failure = networkError(
      `${x.shownBaseUrl} answered HTTP ${res.status} but the connection failed mid-body`,
      err,
      x.secret,
    )
    // A 2xx cut short may have been billed in full: it goes back as an answer the runner ledgers.
    if (!res.ok) throw failure
    return {
      status: res.status,
      statusText: res.statusText,
      headers,
      json: undefined,
      raw: '',
      cutShort: failure.message,
    }
  }
  let json: unknown
  try {
    json = raw.trim() === '' ? undefined : JSON.parse(raw)
  } catch {
    json = undefined
  }
  return { status: res.status, statusText: res.statusText, headers, json, raw }
}

/**
 * The body as text (UTF-8, a BOM dropped, as Response.text() reads it), or, when it is larger
 * than `cap`, the bytes received or announced: reading stops there and the rest is never held.
 */
async function readCapped(res: Response, cap: number): Promise<string | number> {
  const announced = Number(res.headers.get('content-length') ?? NaN)
  if (announced > cap) {
    await res.body?.cancel().catch(() => {})
    return announced
  }
  if (res.body === null) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let bytes = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    bytes += value.byteLength
    if (bytes > cap) {
      await reader.cancel().catch(() => {})
      return Math.max(bytes, Number.isFinite(announced) ? announced : 0)
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

/**
 * Maps an HTTP answer to a ProviderResponse, status and headers unchanged (the classifier
 * reads them), the key scrubbed from every string.
 */
export function toProviderResponse(
  answer: JsonAnswer,
  secret: string | null,
  readOk: (json: Record<string, unknown>) => OkAnswer,
): ProviderResponse {
  const { status, headers, json } = answer
  let response: ProviderResponse
  if (status >= 200 && status < 300) {
    // The call may have been billed, but there is nothing to keep: a 5xx makes it a transient
    // failure the runner retries (what a proxy's truncated answer deserves), and `unreadable`
    // has the runner ledger it as a paid call with estimated usage.
    const unreadable = { status, text: '' }
    if (answer.oversize !== undefined) {
      const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`
      response = {
        status: 502,
        headers,
        error:
          `the answer is larger than the ${mb(MAX_ANSWER_BYTES)} Pacer reads` +
          ` (${mb(answer.oversize)} or more): not kept, not retried` +
          ' (the call is on the ledger with estimated usage)',
        unreadable: { ...unreadable, oversize: { bytes: answer.oversize } },
      }
    } else if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      response = {
        status: 502,
        headers,
        error: answer.cutShort ?? 'invalid JSON from provider',
        unreadable,
      }
    } else {
      const body = json as Record<string, unknown>
      const ok = readOk(body)
      if (ok.text !== undefined) {
        response = { status, headers, text: ok.text }
        if (ok.usage) response.usage = ok.usage
        if (ok.finishReason !== undefined) response.finishReason = ok.finishReason
        if (ok.message !== undefined) response.message = ok.message
      } else {
        const reported = errorMessage(body)
        // Usage, when reported, stays: the ledger records what this call was billed.
        response = {
          status: 502,
          headers,
          error: reported
            ? `provider answered ${status} with an error: ${reported}`
            : `unexpected answer from provider: ${snippet(answer.raw)}`,
        }
        if (ok.usage) response.usage = ok.usage
        // An error in a 2xx body is the provider refusing, not answering: nothing to estimate.
        if (!reported) response.unreadable = unreadable
      }
    }
  } else if (status >= 300 && status < 400) {
    const location = headers['location']
    response = {
      status,
      headers,
      error: `provider redirected (HTTP ${status})${location ? ` to ${shownLocation(location)}` : ''}: set the base URL to the final address`,
    }
  } else {
    response = {
      status,
      headers,
      error:
        errorMessage(json) ??
        (answer.raw.trim() === ''
          ? `HTTP ${status}${answer.statusText ? ` ${answer.statusText}` : ''}`
          : snippet(answer.raw)),
    }
    const codes = errorCodes(json)
    if (codes) response.errorCodes = codes
  }
  return redactResponse(response, secret)
}

/** The vendor's error text: OpenAI/Anthropic `error.message`, Ollama `error`, vLLM `message`, FastAPI `detail`. */
function errorMessage(json: unknown): string | undefined {
  const error = field(json, 'error')
  const candidates = [field(error, 'message'), error, field(json, 'message'), field(json, 'detail')]
  for (const c of candidates) {
    if (typeof c === 'string' && c.trim() !== '') return truncate(c.trim(), 1000)
  }
  return undefined
}

/** The vendor's machine-readable error kinds: OpenAI `error.code` and `error.type`, Anthropic `error.type`. */
function errorCodes(json: unknown): string[] | undefined {
  const error = field(json, 'error')
  const codes = [field(error, 'code'), field(error, 'type')]
    .filter((c): c is string => typeof c === 'string' && c.trim() !== '')
    .map((c) => truncate(c.trim(), 100))
  return codes.length > 0 ? codes : undefined
}

/** A short readable excerpt of a non-JSON body: an HTML error page's title, else its text. */
function snippet(raw: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(raw)?.[1]
  const text = (title ?? raw)
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return truncate(text === '' ? 'empty body' : text, 200)
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

function shownLocation(location: string): string {
  try {
    const u = new URL(location)
    return `${u.origin}${u.pathname}`
  } catch {
    return truncate(location.split(/[?#]/)[0] ?? '', 200)
  }
}

/**
 * fetch refuses, before any connection, the ports the Fetch standard blocks (6000 for X11, 6667
 * for IRC, ...): undici's "bad port". No retry and no other task gets through, so it is said as
 * the base URL's fault, with the code the runner's setup failures know (setup-failures.ts).
 */
function badPort(url: string, shownBaseUrl: string, err: unknown): Error | undefined {
  if (describeCause(err) !== 'bad port') return undefined
  let port = ''
  try {
    port = new URL(url).port
  } catch {
    // The URL fetch was given parsed, or fetch would have said so instead.
  }
  const what = port === '' ? 'its port' : `port ${port}`
  const failure = new Error(
    `cannot reach ${shownBaseUrl}: ${what} is one fetch refuses to connect to ("bad port")`,
  )
  return Object.assign(failure, { code: BAD_PORT_CODE })
}

function networkError(prefix: string, err: unknown, secret: string | null): Error {
  const message = redact(`${prefix}: ${describeCause(err)}`, secret)
  // The cause (errno, address, port) is kept for debugging unless something in it quotes the key.
  const leaks = secret !== null && chainMessages(err).some((m) => m.includes(secret))
  return new Error(message, leaks ? undefined : { cause: deepestCause(err) })
}

function chainMessages(err: unknown, depth = 0): string[] {
  if (depth > 10) return []
  if (!(err instanceof Error)) return [String(err)]
  const nested = err instanceof AggregateError ? (err.errors as unknown[]) : []
  return [
    err.message,
    String(err.stack),
    ...nested.flatMap((e) => chainMessages(e, depth + 1)),
    ...(err.cause === undefined ? [] : chainMessages(err.cause, depth + 1)),
  ]
}

/** fetch fails with "fetch failed"; the reason is down its cause chain (an AggregateError when every address of a host refused). */
function describeCause(err: unknown): string {
  const cause = deepestCause(err)
  if (cause instanceof AggregateError && cause.errors.length > 0) {
    const parts = [...new Set(cause.errors.map((e: unknown) => describeCause(e)))]
    return parts.join('; ')
  }
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: unknown }).code
    if (cause.message) return cause.message
    return typeof code === 'string' ? code : cause.name
  }
  return String(cause)
}

function deepestCause(err: unknown): unknown {
  let current = err
  for (let depth = 0; depth < 10; depth++) {
    const next = current instanceof Error ? current.cause : undefined
    if (next === undefined || next === null) break
    current = next
  }
  return current
}

/** Replaces the key wherever a server (or a library) echoed it. */
function redact(text: string, secret: string | null): string {
  if (secret === null) return text
  let out = text.split(secret).join('[redacted]')
  // Error text is cut to a length before it gets here: a key echoed across the cut survives as a
  // prefix at the very end (maybe followed by the ellipsis). Remove that too.
  const ellipsis = out.endsWith('…') ? '…' : ''
  const body = ellipsis ? out.slice(0, -1) : out
  for (let n = secret.length - 1; n >= 6; n--) {
    if (body.endsWith(secret.slice(0, n))) {
      out = `${body.slice(0, -n)}[redacted]${ellipsis}`
      break
    }
  }
  return out
}

function redactResponse(response: ProviderResponse, secret: string | null): ProviderResponse {
  if (secret === null) return response
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(response.headers))
    headers[name] = redact(value, secret)
  const out: ProviderResponse = { ...response, headers }
  if (out.error !== undefined) out.error = redact(out.error, secret)
  if (out.errorCodes) out.errorCodes = out.errorCodes.map((c) => redact(c, secret))
  // A model cannot know the key (it is never in the prompt); scrubbing text is a last line of
  // defence, skipped for toy keys ('x', 'none') that would mangle ordinary words.
  if (out.text !== undefined && secret.length >= 8) out.text = redact(out.text, secret)
  if (out.message !== undefined && secret.length >= 8) {
    out.message = JSON.parse(redact(JSON.stringify(out.message), secret)) as JsonValue
  }
  return out
}

/** A property of a JSON object, or undefined for anything else. */
export function field(obj: unknown, key: string): unknown {
  return obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>)[key] : undefined
}

/** Marks a usage report that cannot be believed: the call is then estimated, never ledgered free. */
export const UNREADABLE = Symbol('unreadable usage')

/**
 * A reported token count as a number: absent is `undefined`; a count that is not a whole number
 * from 0 to 2^53 - 1 (negative, a string, an object, beyond what JSON numbers hold exactly) is
 * UNREADABLE, so the whole report is, and the runner estimates the call instead of pricing it at 0.
 */
export function reportedCount(value: unknown): number | undefined | typeof UNREADABLE {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return UNREADABLE
  return value
}
