// The team store's address: `redis://HOST:PORT/DB` (or `rediss://` for TLS), as `--store`,
// $PACER_STORE or the Settings field give it. Its password never travels further than the client:
// every message shows the URL with the password masked, and Settings keeps it without one.

/** Where the team store is, and how to log in: parsed and checked. */
export interface StoreAddress {
  tls: boolean
  host: string
  port: number
  db: number
  username?: string
  password?: string
  /** The URL as every message shows it: the password masked, the defaults written out. */
  display: string
  /** The URL without the password, as Settings stores it. */
  stored: string
}

export class StoreUrlError extends Error {}

/** The mask every message uses in place of a password. */
const MASK = '***'

/**
 * Parses a team store URL. The password comes from the URL or, when it has none, from
 * `envPassword` ($PACER_REDIS_PASSWORD). A bad URL throws a StoreUrlError naming the part that is
 * wrong, with the URL masked.
 */
export function parseStoreUrl(text: string, from: string, envPassword?: string): StoreAddress {
  const raw = text.trim()
  const shown = maskUrl(raw)
  const bad = (part: string) =>
    new StoreUrlError(
      `${from}: ${part} (expected redis://HOST:PORT/DB or rediss://…), got "${shown}"`,
    )
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1]?.toLowerCase()
  if (scheme !== 'redis' && scheme !== 'rediss') {
    throw bad(scheme === undefined ? 'no scheme' : `scheme "${scheme}:" is not redis: or rediss:`)
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    // WHATWG's parser refuses a port out of range or a host with spaces, without saying which.
    const port = /^[a-z]+:\/\/(?:[^@/]*@)?[^:/]*:([^/]*)/i.exec(raw)?.[1]
    if (port !== undefined && !isPort(port)) throw bad(`port "${port}" is not 1-65535`)
    throw bad('not a URL')
  }
  if (url.hostname === '') throw bad('no host')
  if (url.port !== '' && !isPort(url.port)) throw bad(`port "${url.port}" is not 1-65535`)
  const port = url.port === '' ? 6379 : Number(url.port)
  const path = url.pathname
  if (path !== '' && path !== '/' && !/^\/\d{1,5}$/.test(path)) {
    throw bad(`database "${decodeURIComponent(path.slice(1))}" is not a number`)
  }
  if (url.search !== '' || url.hash !== '') throw bad('options after ? or # are not supported')
  const db = path.length > 1 ? Number(path.slice(1)) : 0
  const username = url.username === '' ? undefined : decodeURIComponent(url.username)
  const fromUrl = url.password === '' ? undefined : decodeURIComponent(url.password)
  const password = fromUrl ?? (envPassword === '' ? undefined : envPassword)
  const tls = scheme === 'rediss'
  const base = `${scheme}://${url.host}/${db}`
  const user = username === undefined ? '' : encodeURIComponent(username)
  const display =
    password === undefined && user === ''
      ? base
      : base.replace('://', `://${user}${password === undefined ? '' : `:${MASK}`}@`)
  const stored = user === '' ? base : base.replace('://', `://${user}@`)
  return {
    tls,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    db,
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    display,
    stored,
  }
}

function isPort(text: string): boolean {
  return /^\d{1,5}$/.test(text) && Number(text) >= 1 && Number(text) <= 65535
}

/** Any text with `scheme://user:password@` in it, the password masked. */
export function maskUrl(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@/\s]*@/gi, `$1:${MASK}@`)
}

/** The store URL a process was given: the flag, else $PACER_STORE; undefined when neither. */
export function storeUrlFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { text: string; from: string } | undefined {
  if (flag !== undefined) return { text: flag, from: '--store' }
  const value = env.PACER_STORE
  if (value !== undefined && value.trim() !== '') return { text: value, from: 'PACER_STORE' }
  return undefined
}

/**
 * The `teamStore` setting as it is stored: the URL checked and written out, never a password (it
 * stays in PACER_REDIS_PASSWORD or the desktop's secret store). Throws a StoreUrlError.
 */
export function teamStoreSetting(value: string | null): string | null {
  if (value === null || value.trim() === '') return null
  const address = parseStoreUrl(value, 'teamStore')
  if (address.password !== undefined) {
    throw new StoreUrlError(
      'teamStore: no password in the URL here: Settings keeps no secrets in the database; set PACER_REDIS_PASSWORD for the processes instead',
    )
  }
  return address.stored
}
