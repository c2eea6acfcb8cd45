// `pacer check` and `pacer backup`: the database file itself, read only, while runs go on.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type Database from 'better-sqlite3'
import { RECOVERY_HINT, integrityProblems, openDatabase } from '../engine'
import { DatabaseError, UsageError, existingDbPath } from './common'
import { EXIT } from './exit-codes'
import { refuseDatabase } from './stream-out'
import { say } from './terminal-text'

/** `pacer check`: SQLite's integrity check, read only; exit 3 when the file is damaged. */
export function checkCommand(opts: { db?: string; json?: boolean }): number {
  const path = existingDbPath(opts.db)
  const db = openReadOnly(path)
  try {
    const problems = integrityProblems(db, 'integrity_check', 100)
    if (opts.json) {
      say.out(`${JSON.stringify({ dbPath: path, ok: problems.length === 0, problems })}\n`)
    } else if (problems.length === 0) {
      say.out(`ok: ${path} passes SQLite's integrity check\n`)
    } else {
      say.out(`damaged: ${path}\n${problems.map((p) => `  ${p}`).join('\n')}\n`)
      say.err(`pacer: ${RECOVERY_HINT}\n`)
    }
    return problems.length === 0 ? EXIT.done : EXIT.database
  } finally {
    db.close()
  }
}

/**
 * `pacer backup --out FILE`: a consistent copy made with SQLite's online backup while other
 * processes go on writing (each step copies a batch of pages; a write in between restarts it).
 */
export async function backupCommand(opts: { db?: string; out: string }): Promise<number> {
  const path = existingDbPath(opts.db)
  const out = resolve(opts.out)
  // Not just the file: a backup written as its -wal or -journal would be read as one.
  refuseDatabase(out, path)
  if (existsSync(out)) {
    throw new UsageError(`${out} exists: give a new file (a backup never overwrites one)`)
  }
  const db = openReadOnly(path)
  try {
    let pages = 0
    try {
      // 1000 pages a step (4 MB): writers of the source wait at most one step's time.
      const done = await db.backup(out, { progress: () => 1000 })
      pages = done.totalPages
    } catch (err) {
      throw new DatabaseError(`backup to ${out} failed: ${(err as Error).message}`)
    }
    say.err(`backed up ${path} to ${out} (${pages} pages); check it with pacer check --db ${out}\n`)
    return EXIT.done
  } finally {
    db.close()
  }
}

/** The file opened read only; a file that cannot be opened is the database's error (exit 3). */
function openReadOnly(path: string): Database.Database {
  try {
    return openDatabase(path, { readOnly: true })
  } catch (err) {
    throw new DatabaseError((err as Error).message)
  }
}
