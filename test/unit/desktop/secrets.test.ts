import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

vi.mock('electron', () => ({}))

import {
  SECRET_STORAGE_UNAVAILABLE,
  createSecretStore,
  type SafeStorageLike,
} from '../../../src/main/desktop/secrets'

const KEY = 'sk-proj-0123456789abcdefghijklmnopqrstuvwxyzWXYZ'

/** safeStorage with a keyring: XOR, so the plaintext's bytes never appear in the ciphertext. */
function keyring(overrides: Partial<SafeStorageLike> = {}): SafeStorageLike {
  const xor = (b: Buffer) => Buffer.from(b.map((x) => x ^ 0x5a))
  return {
    isEncryptionAvailable: () => true,
    encryptString: (text) => Buffer.concat([Buffer.from('v11'), xor(Buffer.from(text, 'utf8'))]),
    decryptString: (buf) => {
      if (buf.subarray(0, 3).toString() !== 'v11') throw new Error('Error while decrypting')
      return xor(buf.subarray(3)).toString('utf8')
    },
    getSelectedStorageBackend: () => 'gnome_libsecret',
    ...overrides,
  }
}

let dir: string
let filePath: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pacer-secrets-'))
  filePath = join(dir, 'userData', 'secrets.json')
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('createSecretStore with a keyring', () => {
  it('stores the key encrypted, as base64, in a 0600 file, and gives it back to main', async () => {
    const store = createSecretStore({ safeStorage: keyring(), filePath, platform: 'linux' })
    store.set('openai', KEY)
    const text = await readFile(filePath, 'utf8')
    expect(text).not.toContain(KEY)
    expect(text).not.toContain(KEY.slice(-4))
    const json = JSON.parse(text)
    expect(json.version).toBe(1)
    expect(json.keys.openai.ciphertext).toMatch(/^[A-Za-z0-9+/]+=*$/)
    expect(Buffer.from(json.keys.openai.ciphertext, 'base64').subarray(0, 3).toString()).toBe('v11')
    if (process.platform !== 'win32') expect((await stat(filePath)).mode & 0o777).toBe(0o600)
    expect(store.get('openai')).toBe(KEY)
    expect(store.has('openai')).toBe(true)
    expect(store.get('anthropic')).toBeNull()
    expect(store.available).toBe(true)
    expect(store.reason).toBeNull()
  })

  it('trims the key and refuses a blank one, naming apiKey', () => {
    const store = createSecretStore({ safeStorage: keyring(), filePath, platform: 'darwin' })
    store.set('anthropic', `  ${KEY}\n`)
    expect(store.get('anthropic')).toBe(KEY)
    expect(() => store.set('anthropic', '   ')).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'apiKey' }),
    )
  })

  it('deletes a key with null, and the file with the last key', () => {
    const store = createSecretStore({ safeStorage: keyring(), filePath, platform: 'win32' })
    store.set('openai', KEY)
    store.set('anthropic', KEY)
    store.set('openai', null)
    expect(store.has('openai')).toBe(false)
    expect(store.get('anthropic')).toBe(KEY)
    store.set('anthropic', null)
    expect(existsSync(filePath)).toBe(false)
  })

  it('keeps the base URL a key was stored for, in clear, and forgets it with the key', async () => {
    const store = createSecretStore({ safeStorage: keyring(), filePath, platform: 'linux' })
    store.set('openai', KEY, 'https://proxy.example.com/v1')
    store.set('anthropic', KEY)
    expect(store.keysFrom).toBe('store')
    expect(store.storedFor('openai')).toBe('https://proxy.example.com/v1')
    // Stored without one (as before keys were bound): the engine binds it to the default URL.
    expect(store.storedFor('anthropic')).toBeUndefined()
    const json = JSON.parse(await readFile(filePath, 'utf8'))
    expect(json).toMatchObject({
      version: 1,
      keys: { openai: { baseUrl: 'https://proxy.example.com/v1' } },
    })
    expect(json.keys.anthropic.baseUrl).toBeUndefined()
    // Stored again without a URL, the old binding does not linger.
    store.set('openai', KEY)
    expect(store.storedFor('openai')).toBeUndefined()
    store.set('openai', null)
    expect(store.storedFor('openai')).toBeUndefined()
  })

  it('refuses an unknown provider, naming the field', () => {
    const store = createSecretStore({ safeStorage: keyring(), filePath, platform: 'linux' })
    expect(() => store.set('mystery' as 'openai', KEY)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'provider' }),
    )
  })

  it('answers null, without throwing or logging the key, when a key cannot be decrypted', async () => {
    const store = createSecretStore({ safeStorage: keyring(), filePath, platform: 'linux' })
    store.set('openai', KEY)
    const other = createSecretStore({
      safeStorage: keyring({
        decryptString: () => {
          throw new Error('Error while decrypting the ciphertext provided to safeStorage')
        },
      }),
      filePath,
      platform: 'linux',
    })
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    expect(other.get('openai')).toBeNull()
    expect(JSON.stringify(log.mock.calls)).not.toContain(KEY)
    log.mockRestore()
  })

  it('treats a corrupt file as empty instead of failing to start', async () => {
    await rm(filePath, { force: true })
    await writeFile(join(dir, 'bad.json'), '{ nope')
    const store = createSecretStore({
      safeStorage: keyring(),
      filePath: join(dir, 'bad.json'),
      platform: 'linux',
    })
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    expect(store.get('openai')).toBeNull()
    expect(store.has('openai')).toBe(false)
    log.mockRestore()
  })
})

describe('createSecretStore without a keyring', () => {
  it.each<[string, NodeJS.Platform, Partial<SafeStorageLike>]>([
    ['no encryption at all', 'linux', { isEncryptionAvailable: () => false }],
    [
      'Linux basic_text (a hard-coded key)',
      'linux',
      { getSelectedStorageBackend: () => 'basic_text' },
    ],
    ['Linux before app ready', 'linux', { getSelectedStorageBackend: () => 'unknown' }],
    ['macOS without Keychain access', 'darwin', { isEncryptionAvailable: () => false }],
    [
      'a throwing safeStorage',
      'win32',
      {
        isEncryptionAvailable: () => {
          throw new Error('not ready')
        },
      },
    ],
  ])('refuses to store (%s) with secret_storage_unavailable', (_name, platform, overrides) => {
    const encrypt = vi.fn(() => Buffer.from('x'))
    const store = createSecretStore({
      safeStorage: keyring({ encryptString: encrypt, ...overrides }),
      filePath,
      platform,
    })
    expect(store.available).toBe(false)
    expect(store.reason).toMatch(/^API keys cannot be stored: .*keyring/)
    let thrown: unknown
    try {
      store.set('openai', KEY)
    } catch (err) {
      thrown = err
    }
    expect(thrown).toMatchObject({ code: SECRET_STORAGE_UNAVAILABLE, field: 'apiKey' })
    expect((thrown as Error).message).toBe(store.reason)
    expect((thrown as Error).message).not.toContain(KEY)
    expect(encrypt).not.toHaveBeenCalled()
    expect(existsSync(filePath)).toBe(false)
  })

  it('ignores the Linux backend question on other platforms', () => {
    const store = createSecretStore({
      safeStorage: keyring({ getSelectedStorageBackend: () => 'basic_text' }),
      filePath,
      platform: 'darwin',
    })
    expect(store.available).toBe(true)
  })

  it('still deletes a key when the keyring has gone away', () => {
    createSecretStore({ safeStorage: keyring(), filePath, platform: 'linux' }).set('openai', KEY)
    const locked = createSecretStore({
      safeStorage: keyring({ isEncryptionAvailable: () => false }),
      filePath,
      platform: 'linux',
    })
    expect(locked.has('openai')).toBe(true)
    expect(locked.get('openai')).toBeNull()
    locked.set('openai', null)
    expect(locked.has('openai')).toBe(false)
  })

  it('keeps the OTLP headers encrypted beside the keys, bound to their endpoint', async () => {
    const HEADERS = 'Authorization=Basic b3RscC1oZWFkZXItc2VjcmV0LTQ0'
    const store = createSecretStore({ safeStorage: keyring(), filePath, platform: 'linux' })
    expect(store.otlpHeaders()).toBeNull()
    store.set('openai', KEY)
    store.setOtlpHeaders(HEADERS, 'https://cloud.langfuse.com/api/public/otel')
    const text = await readFile(filePath, 'utf8')
    expect(text).not.toContain('b3RscC1oZWFkZXItc2VjcmV0LTQ0')
    expect(text).not.toContain(KEY)
    expect(store.otlpHeaders()).toEqual({
      headers: HEADERS,
      endpoint: 'https://cloud.langfuse.com/api/public/otel',
    })
    // A key set or removed later keeps the headers, and the other way round.
    store.set('openai', null)
    expect(store.otlpHeaders()?.headers).toBe(HEADERS)
    store.set('anthropic', KEY)
    store.setOtlpHeaders(null)
    expect(store.otlpHeaders()).toBeNull()
    expect(store.get('anthropic')).toBe(KEY)
    store.set('anthropic', null)
    expect(existsSync(filePath)).toBe(false)
    // No keyring: refused, naming the field, never echoing the value.
    const locked = createSecretStore({
      safeStorage: keyring({ isEncryptionAvailable: () => false }),
      filePath,
      platform: 'linux',
    })
    let thrown: unknown
    try {
      locked.setOtlpHeaders(HEADERS, 'https://x.test')
    } catch (err) {
      thrown = err
    }
    expect(thrown).toMatchObject({ code: SECRET_STORAGE_UNAVAILABLE, field: 'headers' })
    expect((thrown as Error).message).not.toContain('b3RscC1')
  })
})
