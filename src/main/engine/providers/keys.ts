/**
 * Where an API key may travel. Two rules, both checked at every call, before any request:
 *
 * - a key from the environment goes only to its provider's default origin, or to a base URL given
 *   to the same process (the command line's --base-url, OPENAI_BASE_URL and the like);
 * - a key stored through Settings goes only to the base URL it was stored for.
 *
 * So a base URL planted in the shared database (by a console that held no key) never receives a
 * key it was not given, and a stored key does not follow the URL when it is changed.
 */
import { isLoopbackHost } from '../../../shared/contract'
import type { ProviderResponse } from '../core/types'

/** A key with where it came from, which decides where it may go. */
export type ProviderKey =
  | { value: string; from: 'environment' }
  /**
   * `baseUrl`: the one URL this key goes to (the one in effect when it was stored); `legacy`: stored
   * before keys were bound, so bound to the default URL.
   */
  | { value: string; from: 'store'; baseUrl: string; legacy?: boolean }

/** Why no key goes to a base URL: one line naming the provider, the URL and the fix. */
export interface KeyRefusal {
  refused: string
}

/** What an adapter's `apiKey` option answers for the base URL a call is about to use. */
export type KeyAnswer = string | null | KeyRefusal

/** Where a provider's base URL in effect came from. */
export type BaseUrlFrom = 'process' | 'settings' | 'default'

/** The base URL as keys are bound to it: origin and path, no trailing slash, query or fragment. */
export function boundForm(url: string): string {
  const u = new URL(url)
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`
}

/** True when both are the same base URL (a trailing slash, a query or a fragment aside). */
export function sameBaseUrl(a: string, b: string): boolean {
  try {
    return boundForm(a) === boundForm(b)
  } catch {
    return false
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin
  } catch {
    return false
  }
}

/** The names a provider is configured by in the environment, for messages. */
export const ENV_NAMES: Readonly<Record<string, { key: string; baseUrl: string }>> = Object.freeze({
  openai: { key: 'OPENAI_API_KEY', baseUrl: 'OPENAI_BASE_URL' },
  anthropic: { key: 'ANTHROPIC_API_KEY', baseUrl: 'ANTHROPIC_BASE_URL' },
  'openai-compatible': {
    key: 'PACER_OPENAI_COMPATIBLE_API_KEY',
    baseUrl: 'PACER_OPENAI_COMPATIBLE_BASE_URL',
  },
})

/**
 * The key that may go to `url`, null when there is none, or the refusal when there is one that
 * may not. `processUrl` is the base URL given to this process, `defaultUrl` the provider's own.
 */
export function keyFor(x: {
  provider: string
  url: string
  key: ProviderKey | null
  processUrl: string | undefined
  defaultUrl: string
}): KeyAnswer {
  const { provider, url, key } = x
  if (key === null) return null
  const shown = boundForm(url)
  if (key.from === 'environment') {
    if (sameOrigin(url, x.defaultUrl)) return key.value
    if (x.processUrl !== undefined && sameBaseUrl(url, x.processUrl)) return key.value
    const names = ENV_NAMES[provider]
    return {
      refused:
        `${provider}: the base URL ${shown} stored in the database was never given a key, so ` +
        `${names?.key ?? 'the key'} from the environment is not sent there; pass --base-url ` +
        `${shown}${names ? ` (or ${names.baseUrl})` : ''} with the key, or store the key for ` +
        'that URL in Settings, or clear the base URL in Settings',
    }
  }
  if (sameBaseUrl(url, key.baseUrl)) return key.value
  const why = key.legacy
    ? `was stored before Pacer bound keys to base URLs, so it goes only to the default ${key.baseUrl}, not to ${shown}`
    : `was stored for ${key.baseUrl}, so it is not sent to ${shown}`
  return {
    refused:
      `${provider}: the API key in Settings ${why}; store the key again in Settings while the ` +
      `base URL is ${shown}, or set the base URL back`,
  }
}

/**
 * The key as it will be sent, for a call to `base`: trimmed (a pasted key often ends in a line
 * break), null when blank; or the response that refuses the call before any request, when the key
 * may not go there, would cross the network in clear text, or cannot be put in a header (fetch's
 * error would quote the whole key).
 */
export function keyForCall(
  provider: string,
  apiKey: (baseUrl: string) => KeyAnswer,
  base: { url: URL; shown: string },
): { key: string | null } | { refused: ProviderResponse } {
  const raw = apiKey(base.url.href)
  if (raw === null || raw === undefined) return { key: null }
  if (typeof raw === 'object' && typeof raw.refused === 'string') {
    return { refused: { status: 401, headers: {}, error: raw.refused } }
  }
  if (typeof raw !== 'string') return { refused: badKeyResponse(provider) }
  const value = raw.trim()
  if (value === '') return { key: null }
  if (!/^[\x21-\x7e]+$/.test(value)) return { refused: badKeyResponse(provider) }
  if (!mayCarryKey(base.url)) return { refused: plainHttpKeyResponse(provider, base.shown) }
  return { key: value }
}

/** A key travels only over https, or plain http that never leaves this machine. */
function mayCarryKey(url: URL): boolean {
  return url.protocol === 'https:' || isLoopbackHost(url.hostname)
}

/** Refused before any request: the key would cross the network in clear text. */
function plainHttpKeyResponse(providerId: string, shownBaseUrl: string): ProviderResponse {
  return {
    status: 401,
    headers: {},
    error: `refusing to send the ${providerId} API key over plain http to ${shownBaseUrl}: use https, or remove the key for a server that needs none`,
  }
}

/** A deterministic failure that names the problem, never the key. */
function badKeyResponse(providerId: string): ProviderResponse {
  return {
    status: 401,
    headers: {},
    error: `the ${providerId} API key cannot be sent in an HTTP header (a line break, space or non-ASCII character in it?): set it again in Settings`,
  }
}
