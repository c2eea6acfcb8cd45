import { describe, expect, it } from 'vitest'
import {
  describeStop,
  MISSING_KEY_CODE,
  setupFailure,
  unreachableCode,
} from '../../../../src/main/engine/providers/setup-failures'

const res = (status: number, error?: string, errorCodes?: string[]) => ({
  status,
  headers: {},
  ...(error === undefined ? {} : { error }),
  ...(errorCodes === undefined ? {} : { errorCodes }),
})

describe('setupFailure', () => {
  it.each([
    [401, 'bad_key', /check OPENAI_API_KEY or the key in Settings/],
    [403, 'forbidden', /give the key access to this model/],
    [404, 'unknown_model', /check the model name .* and the openai base URL/],
  ] as const)('HTTP %i is %s', (status, kind, todo) => {
    const f = setupFailure('openai', res(status, 'said so'))
    expect(f).toMatchObject({ kind, status, said: 'said so' })
    expect(f!.todo).toMatch(todo)
  })

  it('names the key variable of each provider', () => {
    expect(setupFailure('anthropic', res(401))!.todo).toMatch(/ANTHROPIC_API_KEY/)
    expect(setupFailure('openai-compatible', res(401))!.todo).toMatch(
      /PACER_OPENAI_COMPATIBLE_API_KEY/,
    )
    expect(setupFailure('custom', res(401))!.todo).toMatch(/check the API key/)
  })

  it('quota and credit: OpenAI insufficient_quota 429, Anthropic low credit 400 and 402', () => {
    const quota = setupFailure(
      'openai',
      res(429, 'You exceeded your current quota', ['insufficient_quota']),
    )
    expect(quota).toMatchObject({ kind: 'no_credit', status: 429 })
    const low = setupFailure('anthropic', res(400, 'Your credit balance is too low to access'))
    expect(low).toMatchObject({ kind: 'no_credit', status: 400 })
    const billing = setupFailure('anthropic', res(402, 'billing', ['billing_error']))
    expect(billing).toMatchObject({ kind: 'no_credit', status: 402 })
  })

  it('a key the provider had none to send, and a server that is not there', () => {
    const missing = setupFailure('anthropic', res(401, 'no Anthropic API key', [MISSING_KEY_CODE]))
    expect(missing).toMatchObject({
      kind: 'missing_key',
      status: null,
      todo: expect.stringMatching(/^set ANTHROPIC_API_KEY/),
    })
    const refused = setupFailure(
      'openai-compatible',
      res(0, 'connect ECONNREFUSED'),
      'ECONNREFUSED',
    )
    expect(refused).toMatchObject({ kind: 'unreachable', status: null })
    expect(refused!.todo).toMatch(/nothing listens there: start the server/)
    expect(setupFailure('openai', res(0, 'getaddrinfo'), 'ENOTFOUND')!.todo).toMatch(
      /host is unknown/,
    )
  })

  it('is not a setup failure: throttles, overload, server errors, refused input, answers', () => {
    for (const status of [200, 400, 408, 409, 413, 422, 429, 500, 502, 503, 529, 0]) {
      expect(setupFailure('openai', res(status, 'x'))).toBeUndefined()
    }
  })

  it('describeStop names the partition, the status, what was said and what to do', () => {
    const f = setupFailure('openai', res(401, 'Incorrect API key provided'))!
    expect(describeStop('openai:gpt-4o', f)).toBe(
      'openai:gpt-4o stopped: HTTP 401: Incorrect API key provided (check OPENAI_API_KEY or the key in Settings; its tasks stay queued)',
    )
  })
})

describe('unreachableCode', () => {
  it('finds the code down a fetch error: its cause, or one error per address', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    expect(unreachableCode(new TypeError('fetch failed', { cause: refused }))).toBe('ECONNREFUSED')
    const each = new AggregateError([refused, refused])
    expect(unreachableCode(new Error('x', { cause: each }))).toBe('ECONNREFUSED')
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })
    expect(unreachableCode(new Error('x', { cause: dns }))).toBe('ENOTFOUND')
  })

  it('a reset or a timeout is no such error: those are worth retrying', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })
    expect(unreachableCode(new Error('fetch failed', { cause: reset }))).toBeUndefined()
    expect(unreachableCode('nope')).toBeUndefined()
  })
})
