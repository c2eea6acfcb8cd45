import { existsSync, realpathSync, statSync, type Stats } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { BaseUrl } from '../../shared/contract'
import type { Engine, EngineOptions, HttpProviderId } from '../engine'
import { ENV_NAMES, HTTP_PROVIDERS, createEngine, defaultDbPath, fileKind } from '../engine'
import { terminalSafe } from './terminal-text'
import { DatabaseError, UsageError } from './errors'

// Kept importable from here: the commands took them from this module before errors.ts existed.
export { DatabaseError, UsageError, isStorageError } from './errors'

/**
 * The database path of a command (--db, else $PACER_DB or the desktop app's), refused in one line
 * (exit 3) when it is no place for a database: an existing path that is not a regular file (a FIFO
 * blocks every open, a device reads without end) or anything under /proc, /sys or /dev (but
 * /dev/shm), whose files are the kernel's, not a disk's.
 */
export function dbPathFrom(opt: string | undefined): string {
  const path = opt ? resolve(opt) : defaultDbPath()
  const real = realPathOf(path)
  // /dev/shm is a tmpfs, a disk as far as a database goes.
  const kernel = ['/proc', '/sys', '/dev'].find(
    (dir) => (real === dir || real.startsWith(`${dir}/`)) && !real.startsWith('/dev/shm/'),
  )
  if (kernel !== undefined) {
    throw new DatabaseError(
      `${path} is under ${kernel}, whose files are the kernel's: give a database file on a disk (--db)`,
    )
  }
  let st: Stats | undefined
  try {
    st = statSync(path)
  } catch {
    st = undefined // a new file, or one SQLite will say it cannot open
  }
  const kind = st ? fileKind(st) : null
  if (kind !== null) {
    throw new DatabaseError(`${path} is ${kind}, not a database file: give a database file (--db)`)
  }
  return path
}

/** The path with its links resolved, or its folder's when it does not exist yet. */
function realPathOf(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path))
    } catch {
      return path
    }
  }
}

/** For commands that only read the ledger: a mistyped --db must not quietly create an empty one. */
export function existingDbPath(opt: string | undefined): string {
  const path = dbPathFrom(opt)
  if (!existsSync(path)) {
    throw new UsageError(
      `no Pacer database at ${path}: ${runHint(opt, path)}${opt === undefined ? '' : ', or check --db'}`,
    )
  }
  return path
}

/**
 * What to do on an empty (or absent) database, aimed at that same database: the demo writes where
 * it is told, so neither hint sends the user somewhere this command would not read.
 */
export function runHint(opt: string | undefined, path: string): string {
  const db = opt === undefined ? '' : ` --db ${path}`
  return (
    `run a batch on it: pacer run FILE.jsonl${db} (one JSON task per line), ` +
    `or pacer demo${db} for the bundled example on the simulated provider`
  )
}

/**
 * The base URLs given to this process: `--base-url` for `provider`, and each provider's
 * *_BASE_URL in the environment (the flag wins). A key from the environment may go to them.
 */
export function processBaseUrls(
  baseUrl: string | undefined,
  provider: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Partial<Record<HttpProviderId, string>> {
  const out: Partial<Record<HttpProviderId, string>> = {}
  for (const id of HTTP_PROVIDERS) {
    const name = ENV_NAMES[id]!.baseUrl
    const value = env[name]
    if (value !== undefined && value.trim() !== '') out[id] = checkedBaseUrl(value, name)
  }
  if (baseUrl !== undefined) {
    const id = HTTP_PROVIDERS.find((p) => p === provider)
    if (id === undefined) {
      throw new UsageError(
        `--base-url is for --provider openai, anthropic or openai-compatible, not ${provider ?? 'none'}`,
      )
    }
    out[id] = checkedBaseUrl(baseUrl, '--base-url')
  }
  return out
}

function checkedBaseUrl(value: string, name: string): string {
  const url = value.trim()
  if (BaseUrl.safeParse(url).success) return url
  // A URL with user:password in it is not echoed: that part is a secret.
  const withCredentials = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url)
  throw new UsageError(
    `${name}: expected an http:// or https:// URL without user:password, got ` +
      (withCredentials
        ? 'one with credentials (put the key in the *_API_KEY variable)'
        : `"${url}"`),
  )
}

/** Opens the engine, turning database problems (unwritable path, newer schema) into one line. */
export function openEngine(options: EngineOptions): Engine {
  try {
    return createEngine(options)
  } catch (err) {
    const e = err as Error
    if (['DatabaseOpenError', 'SchemaTooNewError', 'MigrationError'].includes(e.name)) {
      throw new DatabaseError(e.message)
    }
    if (e instanceof TypeError) throw new UsageError(e.message)
    throw err
  }
}

/**
 * The engine of a command that only reads (summary, batches, export, results): an existing
 * database, opened read only, so it works on a file the user may only read and never changes it.
 */
export function openReader(db: string | undefined): Engine {
  return openEngine({ dbPath: existingDbPath(db), readOnly: true })
}

/** Renders rows as an aligned plain-text table (numbers right-aligned). */
export function table(headers: string[], rows: (string | number)[][]): string {
  // A cell holds one line: a type or a name from a file shows its control characters escaped.
  const cells = [headers, ...rows.map((r) => r.map((c) => terminalSafe(String(c))))]
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)))
  const numeric = headers.map((_, i) =>
    rows.every((r) => typeof r[i] === 'number' || /^[$\d.,-]/.test(String(r[i]))),
  )
  return cells
    .map((r, ri) =>
      r
        .map((c, i) =>
          numeric[i] && ri > 0 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** A count or a number of tokens, as every view writes it (shared/format.ts). */
export { formatInt as thousands } from '../../shared/format'
