// A fresh database file for each migration test (the migrations-*.test.ts files share it).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type Database from 'better-sqlite3'

export const file = () => join(mkdtempSync(join(tmpdir(), 'pacer-mig-')), 'pacer.db')

/**
 * A rollup row written by hand, as an older build folded it: the values given, 0 in every other
 * column (this build's Ledger folds the columns of later migrations, which an older file lacks).
 */
export function rollupRow(
  db: Database.Database,
  table: 'ledger_rollup' | 'ledger_batch_rollup',
  values: Record<string, unknown>,
): void {
  const rest = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[])
    .map((c) => c.name)
    .filter((c) => !(c in values))
  db.prepare(
    `INSERT INTO ${table} (${[...Object.keys(values), ...rest].join(', ')})
     VALUES (${[...Object.keys(values).map(() => '?'), ...rest.map(() => '0')].join(', ')})`,
  ).run(...Object.values(values))
}
