// The engine's WriteHealth for its database file: the probe, the test hook, the two lines.
import type Database from 'better-sqlite3'
import { followTestPageLimit, roomToWrite, WriteHealth } from './write-failures'

/** One WriteHealth per engine: its lines go to `say` (the runner's warnings). */
export function wireWriteHealth(
  db: Database.Database,
  dbPath: string,
  say: (message: string) => void,
): WriteHealth {
  followTestPageLimit(db)
  const health = new WriteHealth({
    dbPath,
    probe: () => db.open && (db.memory || roomToWrite(db, dbPath)),
  })
  health.on('blocked', say)
  health.on('resumed', say)
  return health
}
