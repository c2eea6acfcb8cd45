import type { ProviderId } from '../../../shared/contract'
import { DEFAULT_BASE_URLS, type HttpProviderId, type ProviderKey } from '../providers'
import { ENV_NAMES } from '../providers/keys'

/** Where API keys live: the desktop's safeStorage vault, or the environment in headless mode. */
export interface SecretsAccess {
  get(provider: ProviderId): string | null
  /**
   * 'environment': a key goes to its provider's default origin or to a base URL given to this
   * process. 'store': a key goes only to the base URL it was stored for (`storedFor`).
   */
  readonly keysFrom: 'environment' | 'store'
  /** The base URL a stored key was stored for; undefined when stored before keys were bound. */
  storedFor?(provider: ProviderId): string | undefined
  /** Stores a key for `baseUrl` (the one in effect), or deletes it with null. */
  set?(provider: ProviderId, apiKey: string | null, baseUrl?: string): void
  readonly available: boolean
  readonly reason: string | null
  /**
   * The OTLP headers stored in Settings (`key=value,...`, values secret, like a key) and the
   * endpoint they were stored for: they go there and nowhere else. Absent: none can be stored.
   */
  otlpHeaders?(): { headers: string; endpoint: string } | null
  /** Stores (encrypted) headers for `endpoint`, or deletes them with null. */
  setOtlpHeaders?(headers: string | null, endpoint?: string): void
}

/** Headless mode: keys come from the environment and are never written anywhere. */
export function envSecrets(env: NodeJS.ProcessEnv = process.env): SecretsAccess {
  return {
    get: (provider) => (provider === 'sim' ? null : env[ENV_NAMES[provider]!.key] || null),
    keysFrom: 'environment',
    available: false,
    reason:
      'headless mode keeps no keys: set OPENAI_API_KEY, ANTHROPIC_API_KEY or PACER_OPENAI_COMPATIBLE_API_KEY in the environment of `pacer serve`',
  }
}

/**
 * A provider's key with where it may go. A key stored before keys were bound to base URLs is
 * bound to the provider's default URL: binding it to the URL in the database at upgrade time
 * would hand it to a URL that may have been planted there, the very thing the binding prevents.
 */
export function providerKey(secrets: SecretsAccess, id: HttpProviderId): ProviderKey | null {
  const value = secrets.get(id)
  if (value === null) return null
  if (secrets.keysFrom === 'environment') return { value, from: 'environment' }
  const storedFor = secrets.storedFor?.(id)
  return storedFor === undefined
    ? { value, from: 'store', baseUrl: DEFAULT_BASE_URLS[id], legacy: true }
    : { value, from: 'store', baseUrl: storedFor }
}
