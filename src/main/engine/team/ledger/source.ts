// Which source a database's rows come from in the team ledger: the machine's name (PACER_MACHINE,
// else the host name) and the database's own id, drawn once by migration 12. Two files on one
// machine are two sources, and so are a file and its copy on another machine; every process on
// one file is the same source, so the cursor's compare-and-set keeps them from appending twice.
import { hostname } from 'node:os'
import type Database from 'better-sqlite3'
import { openDatabase } from '../../db'
import type { RedisLedgerStream } from './stream'
import { LedgerAppender, type AppenderStatus } from './appender'

/** The machine name shown in the team ledger's machine column. */
function machineName(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.PACER_MACHINE?.trim()
  return given ? given : hostname()
}

/** The database's id (migration 12). */
export function databaseId(db: Database.Database): string {
  const id = db.prepare('SELECT id FROM ledger_source').pluck().get() as string | undefined
  if (!id) throw new Error('the database has no ledger source id (migration 12 missing)')
  return id
}

/** How long the last flush may take at shutdown. */
const CLOSE_MS = 5000

export interface TeamLedgerOptions {
  db: Database.Database
  dbPath: string
  nativeBinding?: string
  stream: RedisLedgerStream
  onStatus?: (status: AppenderStatus) => void
  onWarning?: (message: string) => void
  intervalMs?: number
  batchRows?: number
}

/**
 * Starts the appender of an engine in team mode, on a read-only connection of its own (an
 * in-memory database, which has no other connection, is read through the engine's).
 */
export function startTeamLedger(options: TeamLedgerOptions): {
  appender: LedgerAppender
  close(): Promise<void>
} {
  const machine = machineName()
  const source = `${machine}/${databaseId(options.db)}`
  const own = options.db.memory
    ? null
    : openDatabase(options.dbPath, { readOnly: true, nativeBinding: options.nativeBinding })
  const appender = new LedgerAppender({
    db: own ?? options.db,
    stream: options.stream,
    machine,
    source,
    onStatus: options.onStatus,
    onWarning: options.onWarning,
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
    ...(options.batchRows === undefined ? {} : { batchRows: options.batchRows }),
  })
  appender.start()
  return {
    appender,
    async close() {
      // A server that takes commands but never answers must not hold the exit: the rows wait in
      // SQLite for the next run either way.
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_MS)))
      await Promise.race([appender.stop(), late])
      clearTimeout(timer)
      own?.close()
    },
  }
}
