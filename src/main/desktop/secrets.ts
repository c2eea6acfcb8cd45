/**
 * API keys, encrypted with the OS keyring through Electron's safeStorage (Keychain, DPAPI,
 * libsecret/KWallet) and kept as base64 ciphertext in a JSON file in userData. Never in the SQLite
 * database, never logged, never sent to the renderer: the console only learns whether a key is
 * stored and its last four characters. `safeStorage` and the file path are parameters, so this is
 * tested without Electron. The engine reads keys through `get` (for provider calls and for the
 * settings view's hasKey / last-4 hint) and stores them through `set` (the secrets:set command).
 * Each key is stored with the base URL it was entered for, and the engine sends it nowhere else.
 *
 * Uses the synchronous safeStorage API (deprecated in Electron 45 in favour of the async one, still
 * present): the engine's `secrets.get(provider)` is synchronous.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { ProviderId } from '../../shared/contract'
import type { SecretsAccess } from '../engine'
import { EngineError } from '../engine'

/** The subset of Electron's `safeStorage` used here. */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean
  encryptString(plainText: string): Buffer
  decryptString(encrypted: Buffer): string
  /** Linux only in Electron; absent elsewhere. */
  getSelectedStorageBackend?(): string
}

export type ProviderKey = ProviderId

export interface SecretStorageStatus {
  available: boolean
  reason: string | null
}

/** The engine's SecretsAccess, backed by the OS keyring. */
export interface SecretStore extends SecretsAccess {
  /** Whether keys can be stored here, and why not (re-checked: a keyring can be locked later). */
  status(): SecretStorageStatus
  /** The plaintext key, for the engine's provider calls (main process only). */
  get(provider: ProviderKey): string | null
  /**
   * Stores (encrypted) a key for `baseUrl`, the provider's base URL in effect (absent: its
   * default), or with null deletes it. Throws secret_storage_unavailable.
   */
  set(provider: ProviderKey, apiKey: string | null, baseUrl?: string): void
  /** The base URL the key was stored for; undefined for the default (and keys stored before). */
  storedFor(provider: ProviderKey): string | undefined
  /** Whether a key is stored, without decrypting it. */
  has(provider: ProviderKey): boolean
  /** The OTLP headers and the endpoint they were stored for (Settings → Observability). */
  otlpHeaders(): { headers: string; endpoint: string } | null
  /** Stores (encrypted) the headers for `endpoint`, or deletes them with null. */
  setOtlpHeaders(headers: string | null, endpoint?: string): void
  readonly available: boolean
  readonly reason: string | null
}

interface StoredKey {
  /** base64 of safeStorage.encryptString(key). Nothing about the key is stored in clear. */
  ciphertext: string
  updatedAt: number
  /**
   * The one base URL the key goes to. In clear: it is no secret, and the console shows it without
   * decrypting. Absent in files written before keys were bound: the engine binds those to the
   * provider's default URL. (Still version 1: an older Pacer reads the file as before.)
   */
  baseUrl?: string
}

interface SecretsFile {
  version: 1
  keys: Partial<Record<ProviderKey, StoredKey>>
  /** Settings → Observability's OTLP headers, encrypted like a key, bound to their endpoint. */
  otlpHeaders?: StoredKey
}

export const SECRET_STORAGE_UNAVAILABLE = 'secret_storage_unavailable'

const NO_KEYRING_LINUX =
  'API keys cannot be stored: no OS keyring is available (install and unlock GNOME Keyring or ' +
  'KWallet). Pacer refuses to keep keys in the plaintext-equivalent fallback.'
const NO_KEYRING =
  'API keys cannot be stored: the OS keyring is not available to Pacer, so the key could only ' +
  'be kept in plain text, which Pacer refuses to do.'

/** Whether keys can be stored here, and why not: checked each time, a keyring can be locked later. */
function keyringStatus(
  safeStorage: SafeStorageLike,
  platform: NodeJS.Platform,
): SecretStorageStatus {
  const noKeyring = platform === 'linux' ? NO_KEYRING_LINUX : NO_KEYRING
  let available: boolean
  try {
    available = safeStorage.isEncryptionAvailable()
  } catch {
    available = false
  }
  if (!available) return { available: false, reason: noKeyring }
  if (platform === 'linux' && typeof safeStorage.getSelectedStorageBackend === 'function') {
    // 'basic_text' encrypts with a key hard-coded in Chromium: ciphertext in name only.
    // 'unknown' means asked before app ready; refusing then is the safe side.
    const backend = safeStorage.getSelectedStorageBackend()
    if (backend === 'basic_text' || backend === 'unknown')
      return { available: false, reason: noKeyring }
  }
  return { available: true, reason: null }
}

/** The secrets file's keys; a missing or unreadable file reads as no keys. */
function readSecretsFile(filePath: string): SecretsFile {
  let text: string
  try {
    text = readFileSync(filePath, 'utf8')
  } catch {
    return { version: 1, keys: {} }
  }
  try {
    const parsed = JSON.parse(text) as Partial<SecretsFile>
    if (parsed && parsed.version === 1 && typeof parsed.keys === 'object' && parsed.keys) {
      const otlp = parsed.otlpHeaders
      return {
        version: 1,
        keys: parsed.keys,
        ...(otlp && typeof otlp.ciphertext === 'string' ? { otlpHeaders: otlp } : {}),
      }
    }
  } catch {
    // fall through
  }
  console.error(`pacer: ignoring unreadable secrets file ${filePath}`)
  return { version: 1, keys: {} }
}

function writeSecretsFile(filePath: string, data: SecretsFile): void {
  mkdirSync(dirname(filePath), { recursive: true })
  // Write then rename: a crash mid-write leaves the old file, never half a JSON document.
  const tmp = `${filePath}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 })
  renameSync(tmp, filePath)
}

function assertProvider(provider: unknown): ProviderKey {
  const parsed = ProviderId.safeParse(provider)
  if (!parsed.success) {
    throw new EngineError(
      'invalid_input',
      `unknown provider ${JSON.stringify(provider)}`,
      'provider',
    )
  }
  return parsed.data
}

/**
 * Opens the store backed by `filePath` (created on first write, mode 0600). A missing or
 * unreadable file is an empty store: a corrupt file must not keep the console from starting.
 */
export function createSecretStore(options: {
  safeStorage: SafeStorageLike
  filePath: string
  /** @default process.platform */
  platform?: NodeJS.Platform
}): SecretStore {
  const { safeStorage, filePath } = options
  const platform = options.platform ?? process.platform
  const status = (): SecretStorageStatus => keyringStatus(safeStorage, platform)
  const read = (): SecretsFile => readSecretsFile(filePath)
  const write = (data: SecretsFile): void => writeSecretsFile(filePath, data)
  const writeOrRemove = (data: SecretsFile): void => {
    if (Object.keys(data.keys).length === 0 && !data.otlpHeaders) rmSync(filePath, { force: true })
    else write(data)
  }
  const decrypt = (stored: StoredKey, what: string): string | null => {
    if (!status().available) return null
    try {
      return safeStorage.decryptString(Buffer.from(stored.ciphertext, 'base64'))
    } catch {
      // The keyring changed (new machine, reset login keyring): the secret is unrecoverable.
      console.error(`pacer: the stored ${what} could not be decrypted; set it again`)
      return null
    }
  }

  return {
    status,

    get(provider) {
      const stored = read().keys[assertProvider(provider)]
      return stored ? decrypt(stored, `${provider} key`) : null
    },

    otlpHeaders() {
      const stored = read().otlpHeaders
      if (!stored || typeof stored.baseUrl !== 'string') return null
      const headers = decrypt(stored, 'OTLP headers')
      return headers === null ? null : { headers, endpoint: stored.baseUrl }
    },

    setOtlpHeaders(headers, endpoint) {
      const data = read()
      if (headers === null) {
        if (data.otlpHeaders) {
          delete data.otlpHeaders
          writeOrRemove(data)
        }
        return
      }
      const state = status()
      if (!state.available) {
        throw new EngineError(SECRET_STORAGE_UNAVAILABLE, state.reason ?? NO_KEYRING, 'headers')
      }
      if (typeof endpoint !== 'string') {
        throw new EngineError('invalid_input', 'save an endpoint before its headers', 'headers')
      }
      const ciphertext = safeStorage.encryptString(headers.trim()).toString('base64')
      data.otlpHeaders = { ciphertext, updatedAt: Date.now(), baseUrl: endpoint }
      write(data)
    },

    set(provider, apiKey, baseUrl) {
      const id = assertProvider(provider)
      const data = read()
      if (apiKey === null) {
        // Deleting needs no keyring: it must work precisely when the keyring is gone.
        if (data.keys[id]) {
          delete data.keys[id]
          writeOrRemove(data)
        }
        return
      }
      const state = status()
      if (!state.available) {
        throw new EngineError(SECRET_STORAGE_UNAVAILABLE, state.reason ?? NO_KEYRING, 'apiKey')
      }
      const trimmed = apiKey.trim()
      if (trimmed.length === 0) {
        throw new EngineError('invalid_input', 'the API key is empty', 'apiKey')
      }
      const ciphertext = safeStorage.encryptString(trimmed).toString('base64')
      const entry: StoredKey = { ciphertext, updatedAt: Date.now() }
      if (typeof baseUrl === 'string') entry.baseUrl = baseUrl
      data.keys[id] = entry
      write(data)
    },

    storedFor(provider) {
      const bound = read().keys[assertProvider(provider)]?.baseUrl
      return typeof bound === 'string' ? bound : undefined
    },

    keysFrom: 'store',

    has(provider) {
      return read().keys[assertProvider(provider)] !== undefined
    },

    get available() {
      return status().available
    },

    get reason() {
      return status().reason
    },
  }
}
