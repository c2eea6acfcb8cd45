// Which lines of SQLite's plan (EXPLAIN QUERY PLAN) of a statement read a table that grows with the
// work from end to end. `SCAN x` (with or without an index: a full index scan is still every row)
// counts when x is a growing table, or an alias of one in the statement or in a view it reads
// (`tasks`, `claims` and `ledger` are views of the compact tables).
import type Database from 'better-sqlite3'
import { GROWING_TABLES } from './hot-queries'

/** Null for every named (@x) or positional (?) parameter: the plan does not depend on values. */
export function nullParams(sql: string): unknown[] {
  const named = [...new Set([...sql.matchAll(/@(\w+)/g)].map((m) => m[1] as string))]
  if (named.length) return [Object.fromEntries(named.map((n) => [n, null]))]
  return Array<null>((sql.match(/\?/g) ?? []).length).fill(null)
}

export function fullScans(
  db: Database.Database,
  sql: string,
  params: unknown[] = nullParams(sql),
): string[] {
  const views = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'view'")
    .pluck()
    .all() as string[]
  const text = [sql, ...views].join('\n')
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]
  return plan
    .map((p) => p.detail)
    .filter((detail) => {
      const scanned = /^SCAN (\w+)/.exec(detail)?.[1]
      if (!scanned) return false
      if (GROWING_TABLES.includes(scanned)) return true
      const aliasOf = new RegExp(`\\b(${GROWING_TABLES.join('|')})\\s+(AS\\s+)?${scanned}\\b`, 'i')
      return aliasOf.test(text)
    })
}
