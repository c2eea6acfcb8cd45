// The rule of where a key may go, as a pure predicate: every source of a key against every
// source of a base URL.
import { describe, expect, it } from 'vitest'
import { keyForCall, keyFor, sameBaseUrl } from '../../../../src/main/engine/providers/keys'
import { parseBaseUrl } from '../../../../src/main/engine/providers/http-options'

const OPENAI = 'https://api.openai.com/v1'
const env = { value: 'sk-env', from: 'environment' } as const
const stored = (baseUrl: string) => ({ value: 'sk-stored', from: 'store', baseUrl }) as const

function answer(url: string, key: Parameters<typeof keyFor>[0]['key'], processUrl?: string) {
  return keyFor({ provider: 'openai', url, key, processUrl, defaultUrl: OPENAI })
}

describe('keyFor', () => {
  it('sends an environment key to the default origin, whatever the path', () => {
    expect(answer(OPENAI, env)).toBe('sk-env')
    expect(answer('https://api.openai.com/v2/', env)).toBe('sk-env')
  })

  it('sends an environment key to the base URL given to the process, and nowhere else', () => {
    const given = 'http://127.0.0.1:9000/v1'
    expect(answer(given, env, given)).toBe('sk-env')
    expect(answer(`${given}/`, env, given)).toBe('sk-env')
    const refused = answer('http://127.0.0.1:9000/other', env, given)
    expect(refused).toEqual({ refused: expect.stringContaining('stored in the database') })
    expect(answer('https://proxy.example/v1', env)).toEqual({
      refused:
        'openai: the base URL https://proxy.example/v1 stored in the database was never given a key, so OPENAI_API_KEY from the environment is not sent there; pass --base-url https://proxy.example/v1 (or OPENAI_BASE_URL) with the key, or store the key for that URL in Settings, or clear the base URL in Settings',
    })
  })

  it('sends a stored key only to the URL it was stored for', () => {
    const proxy = 'https://proxy.example/tenant-a/v1'
    expect(answer(proxy, stored(proxy))).toBe('sk-stored')
    expect(answer(`${proxy}/?api-version=1#x`, stored(proxy))).toBe('sk-stored')
    // Same origin, another tenant's path; and the default origin itself.
    expect(answer('https://proxy.example/tenant-b/v1', stored(proxy))).toHaveProperty('refused')
    expect(answer(OPENAI, stored(proxy))).toHaveProperty('refused')
    // A process URL does not widen where a stored key goes.
    expect(answer('https://other.example', stored(proxy), 'https://other.example')).toHaveProperty(
      'refused',
    )
  })

  it('has nothing to refuse without a key', () => {
    expect(answer('https://proxy.example/v1', null)).toBeNull()
  })
})

describe('sameBaseUrl', () => {
  it('ignores a trailing slash, a query and a fragment, and compares host case-insensitively', () => {
    expect(sameBaseUrl('https://A.example/v1/', 'https://a.example/v1?x=1#f')).toBe(true)
    expect(sameBaseUrl('https://a.example/v1', 'https://a.example/v2')).toBe(false)
    expect(sameBaseUrl('https://a.example', 'http://a.example')).toBe(false)
    expect(sameBaseUrl('https://a.example:8443', 'https://a.example')).toBe(false)
    expect(sameBaseUrl('not a url', 'not a url')).toBe(false)
  })
})

describe('keyForCall', () => {
  const base = (url: string) => parseBaseUrl(url)

  it('turns a refusal into a 401 before any request, and trims the key', () => {
    expect(keyForCall('openai', () => ({ refused: 'why' }), base(OPENAI))).toEqual({
      refused: { status: 401, headers: {}, error: 'why' },
    })
    expect(keyForCall('openai', () => ' sk-1\n', base(OPENAI))).toEqual({ key: 'sk-1' })
    expect(keyForCall('openai', () => '  ', base(OPENAI))).toEqual({ key: null })
  })

  it('passes the URL the call is about to use to the key function', () => {
    const seen: string[] = []
    keyForCall('openai', (url) => (seen.push(url), null), base('https://a.example/v1?q=1'))
    expect(seen).toEqual(['https://a.example/v1?q=1'])
  })

  it('refuses plain http off this machine and a key that cannot be a header', () => {
    const plain = keyForCall('openai', () => 'sk-1', base('http://10.0.0.2/v1'))
    expect(plain).toMatchObject({ refused: { error: expect.stringContaining('plain http') } })
    const bad = keyForCall('openai', () => 'sk 1', base(OPENAI))
    expect(bad).toMatchObject({ refused: { error: expect.stringContaining('HTTP header') } })
    expect(JSON.stringify(bad)).not.toContain('sk 1')
  })
})
