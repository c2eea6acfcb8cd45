import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Engine, EngineOptions } from '../engine/engine'
import { createEngine } from '../engine/engine'
import { defaultDbPath } from '../engine/db'
import { terminalSafe } from './terminal-text'

/** Bad input or usage: one clear line on stderr and exit code 2. */
export class UsageError extends Error {}

/** The database or the disk failed us: one clear line on stderr and exit code 3. */
export class DatabaseError extends Error {}

/** SQLite's and the file system's errors about the database file or the disk under it. */
const STORAGE_ERRNO = new Set(['ENOSPC', 'EROFS', 'EDQUOT', 'EIO'])

/** Whether an error thrown by a command is the database's or the disk's (exit code 3). */
export function isStorageError(err: unknown): err is Error & { code: string } {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code !== 'string') return false
  return code.startsWith('SQLITE_') || STORAGE_ERRNO.has(code)
}

export function dbPathFrom(opt: string | undefined): string {
  return opt ? resolve(opt) : defaultDbPath()
}

/** For commands that only read the ledger: a mistyped --db must not quietly create an empty one. */
export function existingDbPath(opt: string | undefined): string {
  const path = dbPathFrom(opt)
  if (!existsSync(path)) {
    throw new UsageError(
      `no Pacer database at ${path}: run a batch first (pacer run FILE.jsonl), or check --db`,
    )
  }
  return path
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

export function thousands(n: number): string {
  return n.toLocaleString('en-US')
}
