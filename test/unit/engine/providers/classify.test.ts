import { describe, expect, it } from 'vitest'
import {
  classify,
  isDeterministicFailure,
  parseDuration,
  quotaExhausted,
  retryDelayMs,
} from '../../../../src/main/engine/providers/classify'

const res = (status: number, headers: Record<string, string> = {}) => ({ status, headers })
const NOW = Date.UTC(2025, 4, 1, 12, 0, 0)

describe('classify', () => {
  it.each([
    [429, 'throttled'],
    [503, 'overloaded'],
    [529, 'overloaded'],
    [408, 'timeout'],
    [504, 'timeout'],
    [500, 'error'],
    [502, 'error'],
    [400, 'error'],
    [401, 'error'],
    [404, 'error'],
    [409, 'error'],
    [200, 'ok'],
    [201, 'ok'],
    [204, 'ok'],
  ] as const)('%i -> %s', (status, outcome) => {
    expect(classify(res(status), 5)).toBe(outcome)
  })

  it('treats a non-2xx below 400 as an error, not as room to grow', () => {
    expect(classify(res(302), 5)).toBe('error')
    expect(classify(res(0), 5)).toBe('error')
  })

  it.each([
    'x-ratelimit-remaining-requests',
    'anthropic-ratelimit-requests-remaining',
    'x-quota-remaining',
  ])('2xx with %s below the threshold is near_limit', (name) => {
    expect(classify(res(200, { [name]: '4' }), 5)).toBe('near_limit')
    expect(classify(res(200, { [name]: '0' }), 5)).toBe('near_limit')
    expect(classify(res(200, { [name]: '5' }), 5)).toBe('ok')
    expect(classify(res(200, { [name]: '9000' }), 5)).toBe('ok')
  })

  it('any one low remaining header is enough', () => {
    const headers = { 'x-ratelimit-remaining-requests': '800', 'x-quota-remaining': '2' }
    expect(classify(res(200, headers), 5)).toBe('near_limit')
  })

  it('a throttle stays a throttle whatever the remaining header says', () => {
    expect(classify(res(429, { 'x-ratelimit-remaining-requests': '900' }), 5)).toBe('throttled')
  })

  it('ignores garbage remaining headers instead of crashing like the seed int()', () => {
    for (const v of ['', 'abc', '-3', 'NaN', ' ', '1e2']) {
      expect(classify(res(200, { 'x-ratelimit-remaining-requests': v }), 5)).toBe('ok')
    }
  })

  it('reads headers case-insensitively', () => {
    expect(classify(res(200, { 'X-Quota-Remaining': '1' }), 5)).toBe('near_limit')
  })

  it('threshold 0 disables near_limit', () => {
    expect(classify(res(200, { 'x-quota-remaining': '0' }), 0)).toBe('ok')
  })
})

describe('quota-exhausted answers are not throttles', () => {
  // The bodies as the vendors document them: OpenAI error.type/code, Anthropic error.type.
  const openAiQuota = {
    status: 429,
    headers: { 'retry-after': '20' },
    error: 'You exceeded your current quota, please check your plan and billing details.',
    errorCodes: ['insufficient_quota', 'insufficient_quota'],
  }

  it('OpenAI 429 insufficient_quota (as code, or as type with a null code) is an error', () => {
    expect(classify(openAiQuota, 5)).toBe('error')
    expect(classify({ ...openAiQuota, errorCodes: ['insufficient_quota'] }, 5)).toBe('error')
    for (const code of ['credit_balance_exhausted', 'project_spend_limit_exceeded']) {
      expect(classify({ ...openAiQuota, errorCodes: [code, 'insufficient_quota'] }, 5)).toBe(
        'error',
      )
    }
  })

  it('says the account is out of quota/credit, with what the provider said', () => {
    const message = quotaExhausted(openAiQuota)
    expect(message).toMatch(
      /^the account is out of quota\/credit \(insufficient_quota\): You exceeded/,
    )
    expect(message).toMatch(/add credit or raise the spend limit/)
  })

  it('Anthropic: 402 billing_error, and the 400 whose message says the credit is too low', () => {
    const billing = {
      status: 402,
      headers: {},
      error: 'Billing error',
      errorCodes: ['billing_error'],
    }
    expect(classify(billing, 5)).toBe('error')
    expect(quotaExhausted(billing)).toMatch(/out of quota\/credit \(billing_error\)/)
    const lowCredit = {
      status: 400,
      headers: {},
      error:
        'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      errorCodes: ['invalid_request_error'],
    }
    expect(quotaExhausted(lowCredit)).toMatch(/out of quota\/credit \(credit balance too low\)/)
  })

  it('a rate limit 429 stays a throttle; other errors and successes are no quota answer', () => {
    const rateLimited = {
      status: 429,
      headers: {},
      error: 'Rate limit reached for gpt-4o on requests per min (RPM)',
      errorCodes: ['rate_limit_exceeded', 'requests'],
    }
    expect(classify(rateLimited, 5)).toBe('throttled')
    expect(quotaExhausted(rateLimited)).toBeUndefined()
    expect(quotaExhausted({ status: 429, headers: {} })).toBeUndefined()
    expect(quotaExhausted({ status: 400, headers: {}, error: 'prompt too long' })).toBeUndefined()
    // A 2xx is never a refusal, whatever a body field happened to say.
    expect(quotaExhausted({ status: 200, headers: {}, errorCodes: ['insufficient_quota'] })).toBe(
      undefined,
    )
  })
})

describe('isDeterministicFailure', () => {
  it('is true for 4xx other than 408, 409 and 429', () => {
    for (const s of [400, 401, 403, 404, 413, 422]) expect(isDeterministicFailure(s)).toBe(true)
    for (const s of [408, 409, 429, 200, 399, 500, 503, 529]) {
      expect(isDeterministicFailure(s)).toBe(false)
    }
  })
})

describe('parseDuration (OpenAI x-ratelimit-reset-*)', () => {
  it.each([
    ['6m0s', 360_000],
    ['1s', 1000],
    ['20ms', 20],
    ['1h2m3.5s', 3_723_500],
    ['0.5s', 500],
    ['7.66s', 7660],
    ['2m', 120_000],
    ['1m30s', 90_000],
    ['0s', 0],
  ])('%s = %i ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 6)
  })

  it.each(['', 's', '5', '-1s', '1x', '1s garbage', 'abc', '1..5s'])('%o is undefined', (text) => {
    expect(parseDuration(text)).toBeUndefined()
  })
})

describe('retryDelayMs', () => {
  it('reads retry-after-ms', () => {
    expect(retryDelayMs({ 'retry-after-ms': '1500' }, NOW)).toBe(1500)
    expect(retryDelayMs({ 'retry-after-ms': '12.2' }, NOW)).toBe(13)
  })

  it('reads retry-after in seconds', () => {
    expect(retryDelayMs({ 'retry-after': '3' }, NOW)).toBe(3000)
    expect(retryDelayMs({ 'retry-after': '0' }, NOW)).toBe(0)
  })

  it('reads retry-after as an HTTP-date (all three RFC 9110 formats)', () => {
    expect(retryDelayMs({ 'retry-after': 'Thu, 01 May 2025 12:00:30 GMT' }, NOW)).toBe(30_000)
    expect(retryDelayMs({ 'retry-after': 'Thursday, 01-May-25 12:00:30 GMT' }, NOW)).toBe(30_000)
    expect(retryDelayMs({ 'retry-after': 'Thu May  1 12:00:30 2025' }, NOW)).toBe(30_000)
  })

  it('a date in the past means no wait', () => {
    expect(retryDelayMs({ 'retry-after': 'Thu, 01 May 2025 11:00:00 GMT' }, NOW)).toBe(0)
  })

  it('retry-after-ms supersedes the same wait rounded up to whole seconds', () => {
    expect(retryDelayMs({ 'retry-after-ms': '40', 'retry-after': '1' }, NOW)).toBe(40)
  })

  it('falls back to retry-after when retry-after-ms is garbage', () => {
    expect(retryDelayMs({ 'retry-after-ms': 'soon', 'retry-after': '2' }, NOW)).toBe(2000)
  })

  it('reads OpenAI reset durations', () => {
    expect(retryDelayMs({ 'x-ratelimit-reset-requests': '6m0s' }, NOW)).toBe(360_000)
    expect(retryDelayMs({ 'x-ratelimit-reset-tokens': '20ms' }, NOW)).toBe(20)
  })

  it('reads Anthropic RFC 3339 resets, offsets and fractions included', () => {
    const h = (v: string) => ({ 'anthropic-ratelimit-requests-reset': v })
    expect(retryDelayMs(h('2025-05-01T12:00:05Z'), NOW)).toBe(5000)
    expect(retryDelayMs(h('2025-05-01T14:00:05.25+02:00'), NOW)).toBe(5250)
    expect(retryDelayMs(h('2025-05-01T12:00:05.123456Z'), NOW)).toBe(5124)
    const tokens = { 'anthropic-ratelimit-output-tokens-reset': '2025-05-01T12:01:00Z' }
    expect(retryDelayMs(tokens, NOW)).toBe(60_000)
  })

  it('takes the largest relevant wait', () => {
    const headers = {
      'retry-after': '2',
      'x-ratelimit-reset-requests': '1s',
      'x-ratelimit-reset-tokens': '7.5s',
      'anthropic-ratelimit-tokens-reset': '2025-05-01T12:00:04Z',
    }
    expect(retryDelayMs(headers, NOW)).toBe(7500)
  })

  it('ignores a reset whose budget is not exhausted', () => {
    const headers = {
      'retry-after': '2',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '3s',
      'x-ratelimit-remaining-tokens': '150000',
      'x-ratelimit-reset-tokens': '6m0s',
      'anthropic-ratelimit-input-tokens-remaining': '10',
      'anthropic-ratelimit-input-tokens-reset': '2025-05-01T12:05:00Z',
    }
    expect(retryDelayMs(headers, NOW)).toBe(3000)
  })

  it('returns undefined when nothing says how long to wait', () => {
    expect(retryDelayMs({}, NOW)).toBeUndefined()
    expect(retryDelayMs({ 'content-type': 'application/json' }, NOW)).toBeUndefined()
  })

  it.each<Record<string, string>>([
    { 'retry-after': 'later' },
    { 'retry-after': '' },
    { 'retry-after': '-5' },
    { 'retry-after': '1' + '0'.repeat(400) },
    { 'retry-after': 'Thu, 32 May 2025 12:00:30 GMT' },
    { 'retry-after': 'Thu, 01 Foo 2025 12:00:30 GMT' },
    { 'retry-after': '2025-05-01' },
    { 'retry-after-ms': 'NaN' },
    { 'retry-after-ms': 'Infinity' },
    { 'x-ratelimit-reset-requests': 'soon' },
    { 'anthropic-ratelimit-requests-reset': '2025-02-30T00:00:00Z' },
    { 'anthropic-ratelimit-requests-reset': '2025-05-01T25:00:00Z' },
    { 'anthropic-ratelimit-requests-reset': '1' },
    { 'anthropic-ratelimit-requests-reset': 'not a date' },
  ])('garbage #%# -> undefined, never NaN', (headers) => {
    expect(retryDelayMs(headers, NOW)).toBeUndefined()
  })

  it('keeps the readable wait when another header is garbage', () => {
    const headers = { 'retry-after': 'later', 'x-ratelimit-reset-requests': '250ms' }
    expect(retryDelayMs(headers, NOW)).toBe(250)
  })
})
