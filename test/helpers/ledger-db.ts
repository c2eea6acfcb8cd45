import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { openDatabase } from '../../src/main/engine/db'

/** A real SQLite file in a fresh temp dir, opened as the app opens it; close() removes both. */
export function openLedgerDb(): { db: Database.Database; file: string; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'pacer-ledger-'))
  const file = join(dir, 'pacer.db')
  const db = openDatabase(file)
  return {
    db,
    file,
    close() {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
