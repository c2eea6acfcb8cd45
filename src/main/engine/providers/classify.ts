import type { Outcome } from '../core/types'

/** Remaining-request headers, any of which below the threshold means near_limit. */
const REMAINING_REQUEST_HEADERS = [
  'x-ratelimit-remaining-requests', // OpenAI
  'anthropic-ratelimit-requests-remaining', // Anthropic
  'x-quota-remaining', // seed memo 004
] as const

/** What the classifier reads of an answer (a ProviderResponse has all of it). */
export interface Answer {
  status: number
  headers: Record<string, string>
  error?: string
  errorCodes?: string[]
}

/** Maps a provider's answer to what the concurrency controller should do about it. */
export function classify(res: Answer, nearLimitRemaining: number): Outcome {
  const { status } = res
  // An account out of credit answers 429 too, but no wait and no lower limit will help.
  if (quotaExhausted(res) !== undefined) return 'error'
  if (status === 429) return 'throttled'
  // 529 is Anthropic's "overloaded"; the seed lumped 503 in with 429, the design keeps them apart
  // (own quota vs. the provider's capacity).
  if (status === 503 || status === 529) return 'overloaded'
  if (status === 408 || status === 504) return 'timeout'
  // Anything that is not a 2xx is not evidence that the provider has room to spare: growing the
  // limit on it (the seed counted a 500 as success) would push harder on a failing provider.
  if (!(status >= 200 && status < 300)) return 'error'
  for (const name of REMAINING_REQUEST_HEADERS) {
    const raw = header(res.headers, name)
    if (raw === undefined) continue
    // The seed's int() would crash on garbage; an unreadable header is simply no signal.
    const remaining = parseNumber(raw)
    if (remaining !== undefined && remaining < nearLimitRemaining) return 'near_limit'
  }
  return 'ok'
}

/**
 * The error codes that say the account has no quota or credit left (not a rate limit). OpenAI
 * answers 429 with error.type `insufficient_quota`, error.code the same or naming the exhausted
 * balance or spend limit; Anthropic answers 402 with error.type `billing_error`.
 */
const QUOTA_CODES = new Set([
  'insufficient_quota',
  'credit_balance_exhausted',
  'organization_spend_limit_exceeded',
  'project_spend_limit_exceeded',
  'organization_usage_limit_exceeded',
  'billing_error',
])

/** Anthropic's low-credit answer is a 400 invalid_request_error that only its message tells apart. */
const LOW_CREDIT = /credit balance is too low/i

/**
 * When the answer says the account is out of quota or credit: a message saying so, for the task's
 * error; undefined otherwise. Such a task fails without retries and without moving the limit.
 */
export function quotaExhausted(res: Answer): string | undefined {
  if (res.status >= 200 && res.status < 300) return undefined
  const code = res.errorCodes?.find((c) => QUOTA_CODES.has(c))
  const lowCredit = code === undefined && res.status === 400 && LOW_CREDIT.test(res.error ?? '')
  if (code === undefined && !lowCredit) return undefined
  const said = res.error ? `: ${res.error}` : ''
  return (
    `the account is out of quota/credit (${code ?? 'credit balance too low'})${said} ` +
    '(add credit or raise the spend limit, then retry the failed tasks)'
  )
}

/** 4xx answers that will fail the same way if retried (408 timeout, 409 conflict, 429 are transient). */
export function isDeterministicFailure(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429
}

/**
 * How long the provider asked us to wait, in ms from `now`, or undefined if it did not say (or said
 * something unreadable). Sources: `retry-after-ms`, `retry-after` (seconds or HTTP-date), OpenAI
 * `x-ratelimit-reset-*` durations (`6m0s`, `20ms`) and Anthropic `anthropic-ratelimit-*-reset`
 * RFC 3339 timestamps. Returns the largest relevant wait:
 * - `retry-after-ms` supersedes `retry-after`: it is the same instruction without the rounding up
 *   to whole seconds (the OpenAI SDK reads it first);
 * - a reset header is ignored when its own remaining header says the budget is not exhausted: a
 *   token budget refilling in 6 minutes is no reason to wait when the 429 was about requests.
 */
export function retryDelayMs(headers: Record<string, string>, now: number): number | undefined {
  const waits: number[] = []
  const explicit = retryAfterMs(headers, now)
  if (explicit !== undefined) waits.push(explicit)
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase()
    let wait: number | undefined
    let remainingName: string
    let match = /^x-ratelimit-reset-(.+)$/.exec(key)
    if (match) {
      wait = parseDuration(value)
      remainingName = `x-ratelimit-remaining-${match[1]}`
    } else if ((match = /^anthropic-ratelimit-(.+)-reset$/.exec(key))) {
      const at = parseRfc3339(value)
      wait = at === undefined ? undefined : at - now
      remainingName = `anthropic-ratelimit-${match[1]}-remaining`
    } else {
      continue
    }
    if (wait === undefined) continue
    const remainingRaw = header(headers, remainingName)
    const remaining = remainingRaw === undefined ? undefined : parseNumber(remainingRaw)
    if (remaining !== undefined && remaining > 0) continue
    waits.push(wait)
  }
  if (waits.length === 0) return undefined
  // A date in the past means "now"; times are integer ms everywhere in the engine.
  return Math.max(0, Math.ceil(Math.max(...waits)))
}

/**
 * The provider's explicit instruction only, in ms from `now` (never negative): `retry-after-ms`,
 * else `retry-after` as seconds or an HTTP-date; undefined if absent or unreadable.
 */
export function retryAfterMs(headers: Record<string, string>, now: number): number | undefined {
  const raw = header(headers, 'retry-after-ms')
  const ms = raw === undefined ? undefined : parseNumber(raw)
  if (ms !== undefined) return Math.ceil(ms)
  const retryAfter = header(headers, 'retry-after')
  if (retryAfter === undefined) return undefined
  const seconds = parseNumber(retryAfter)
  if (seconds !== undefined) return Math.ceil(seconds * 1000)
  const at = parseHttpDate(retryAfter, now)
  return at === undefined ? undefined : Math.max(0, at - now)
}

/** A Go duration's units in ms; made once, not on every answer's resets. */
const DURATION_UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000001,
}
/** One part of a Go duration; sticky, its lastIndex set before every exec. */
const DURATION_PART = /(\d+(?:\.\d+)?|\.\d+)(ms|us|µs|ns|h|m|s)/y

/** Go-style duration as sent by OpenAI (`6m0s`, `1s`, `20ms`, `1h2m3.5s`) in ms. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim()
  if (s === '') return undefined
  const unitMs = DURATION_UNIT_MS
  const part = DURATION_PART
  let total = 0
  let index = 0
  while (index < s.length) {
    part.lastIndex = index
    const m = part.exec(s)
    if (!m) return undefined
    total += Number(m[1]) * (unitMs[m[2] as string] as number)
    index = part.lastIndex
  }
  return Number.isFinite(total) ? total : undefined
}

/** A non-negative decimal number, or undefined (never NaN): `Number('')` is 0, hence the regex. */
export function parseNumber(text: string): number | undefined {
  const s = text.trim()
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(s)) return undefined
  const n = Number(s)
  return Number.isFinite(n) ? n : undefined
}

/** Case-insensitive header lookup; the contract says lower-case, a hand-built map may not be. */
function header(headers: Record<string, string>, name: string): string | undefined {
  const direct = headers[name]
  if (typeof direct === 'string') return direct
  // No array per header: this runs for every answer, and most names are absent from it.
  for (const key in headers) {
    if (!Object.hasOwn(headers, key)) continue
    const value = headers[key]
    if (key.toLowerCase() === name && typeof value === 'string') return value
  }
  return undefined
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']

/**
 * Strict UTC calendar -> epoch ms. Date.parse is too lenient to trust with headers: it reads '1' as
 * the year 2001 and rolls Feb 30 over to March.
 */
function utc(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
): number | undefined {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 60) return undefined
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate()
  if (d > daysInMonth) return undefined
  // A leap second (:60) is read as the next second.
  return Date.UTC(y, mo - 1, d, h, mi, 0) + s * 1000
}

/** HTTP-date in any of the three formats RFC 9110 says a recipient must accept. */
function parseHttpDate(text: string, now: number): number | undefined {
  const s = text.trim()
  let m = /^[A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/.exec(s)
  if (m) return fromParts(m[3], m[2], m[1], m[4], m[5], m[6])
  // RFC 850: two-digit year, read as the most recent year with those digits (RFC 9110 §5.6.7).
  m = /^[A-Za-z]+, (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/.exec(s)
  if (m) {
    const yy = Number(m[3])
    const thisYear = new Date(now).getUTCFullYear()
    let year = Math.floor(thisYear / 100) * 100 + yy
    if (year > thisYear + 50) year -= 100
    return fromParts(String(year), m[2], m[1], m[4], m[5], m[6])
  }
  // asctime: `Sun Nov  6 08:49:37 1994`.
  m = /^[A-Za-z]{3} ([A-Za-z]{3}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/.exec(s)
  if (m) return fromParts(m[6], m[1], m[2], m[3], m[4], m[5])
  return undefined
}

function fromParts(
  year: string | undefined,
  month: string | undefined,
  day: string | undefined,
  hour: string | undefined,
  minute: string | undefined,
  second: string | undefined,
): number | undefined {
  const mo = MONTHS.indexOf((month ?? '').toLowerCase()) + 1
  if (mo === 0) return undefined
  return utc(Number(year), mo, Number(day), Number(hour), Number(minute), Number(second))
}

/** RFC 3339 timestamp (`2024-05-01T12:00:03Z`, `...T12:00:03.5+02:00`) in epoch ms. */
export function parseRfc3339(text: string): number | undefined {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/.exec(
      text.trim(),
    )
  if (!m) return undefined
  const base = utc(
    Number(m[1]),
    Number(m[2]),
    Number(m[3]),
    Number(m[4]),
    Number(m[5]),
    Number(m[6]),
  )
  if (base === undefined) return undefined
  const fraction = m[7] === undefined ? 0 : Number(m[7]) * 1000
  let offset = 0
  if (m[9] !== undefined) {
    const oh = Number(m[10])
    const om = Number(m[11])
    if (oh > 23 || om > 59) return undefined
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000
  }
  return base + fraction - offset
}
