// The options both vendor adapters (openai.ts, anthropic.ts) check when they are made: base URLs,
// the key function, the output cap, fetch and extra headers. A bad one is a TypeError that names
// the option and, unless it may carry a secret, the value.

export interface BaseUrl {
  url: URL
  /** The URL of an endpoint under the base: `path` joins the base path, its query is kept. */
  endpoint(path: string): string
  /** For messages: no credentials, query or fragment, which may carry secrets. */
  shown: string
}

/** Parses a base URL option, or throws a TypeError naming the field and value. */
export function parseBaseUrl(value: unknown, name = 'baseUrl'): BaseUrl {
  let url: URL | undefined
  if (typeof value === 'string') {
    try {
      url = new URL(value.trim())
    } catch {
      url = undefined
    }
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new TypeError(`Expected \`${name}\` to be an http(s) URL, got \`${shownValue(value)}\``)
  }
  const base = url
  const path = base.pathname.replace(/\/+$/, '')
  const shown = new URL(base.href)
  shown.username = ''
  shown.password = ''
  shown.search = ''
  shown.hash = ''
  return {
    url: base,
    // A query stays where it belongs (Azure-style gateways want `?api-version=` on every call).
    endpoint(suffix) {
      const u = new URL(base.href)
      u.pathname = `${path}${suffix}`
      u.hash = ''
      return u.href
    },
    shown: `${shown.origin}${shown.pathname.replace(/\/+$/, '')}`,
  }
}

/** A constant base URL is checked once; a function is checked at every call. */
export function baseUrlReader(value: string | (() => string)): () => BaseUrl {
  if (typeof value === 'function') return () => parseBaseUrl(value())
  const parsed = parseBaseUrl(value)
  return () => parsed
}

/** Throws a TypeError unless `apiKey` is a function (the key is read at every call, never kept). */
export function checkApiKeyOption(apiKey: unknown): void {
  if (typeof apiKey !== 'function') {
    throw new TypeError(
      `Expected \`apiKey\` to be a function returning the key or null, got \`${shownValue(apiKey)}\``,
    )
  }
}

/** Throws a TypeError unless the option is absent or an integer >= 1. */
export function checkMaxOutputTokens(value: unknown): void {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 1)) {
    throw new TypeError(
      `Expected \`maxOutputTokens\` to be an integer >= 1, got \`${shownValue(value)}\``,
    )
  }
}

/** Throws a TypeError unless the option is absent or a function. */
export function checkFetch(value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`Expected \`fetch\` to be a function, got \`${shownValue(value)}\``)
  }
}

/** Extra headers, names lower-cased; throws a TypeError for a bad name or value. */
export function checkExtraHeaders(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`Expected \`extraHeaders\` to be an object, got \`${shownValue(value)}\``)
  }
  const out: Record<string, string> = {}
  for (const [name, v] of Object.entries(value)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new TypeError(
        `Expected \`extraHeaders\` names to be HTTP header names, got \`${name}\``,
      )
    }
    // The value is not echoed: extra headers often carry a proxy's own credentials.
    if (typeof v !== 'string' || !HEADER_VALUE.test(v)) {
      throw new TypeError(
        `Expected \`extraHeaders["${name}"]\` to be a string without line breaks or control characters, got a ${typeof v}`,
      )
    }
    out[name.toLowerCase()] = v
  }
  return out
}

const HEADER_VALUE = /^[\x20-\x7e\x80-\xff]*$/

function shownValue(value: unknown): string {
  if (typeof value === 'function') return 'function'
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
