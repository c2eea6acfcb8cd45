import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Engine, EngineOptions } from '../engine/engine'
import { createEngine } from '../engine/engine'
import { defaultDbPath } from '../engine/db'

/** Bad input or usage: one clear line on stderr and exit code 2. */
export class UsageError extends Error {}

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

/** Opens the engine, turning database problems (unwritable path, newer schema) into usage errors. */
export function openEngine(options: EngineOptions): Engine {
  try {
    return createEngine(options)
  } catch (err) {
    const e = err as Error
    if (['DatabaseOpenError', 'SchemaTooNewError', 'MigrationError'].includes(e.name)) {
      throw new UsageError(e.message)
    }
    if (e instanceof TypeError) throw new UsageError(e.message)
    throw err
  }
}

/** Renders rows as an aligned plain-text table (numbers right-aligned). */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))]
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
