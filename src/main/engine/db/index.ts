import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { systemClock, type Clock } from '../core/types'
import { MIGRATIONS, type Migration } from './migrations'
import { bindingOf, isUnopenableWal, roomForShm } from './read-only'

export const DEFAULT_DB_FILENAME = 'pacer.db'

/** The path could not be opened as a Pacer database (missing rights, not a folder, not SQLite). */
export class DatabaseOpenError extends Error {
  readonly code = 'database_open_failed'

  constructor(
    readonly path: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot open database at ${path}: ${reason}`, options)
    this.name = 'DatabaseOpenError'
  }
}

/** The database was migrated by a newer Pacer; this build must not guess at its tables. */
export class SchemaTooNewError extends Error {
  readonly code = 'schema_too_new'

  constructor(
    readonly path: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `database ${path} was written by a newer Pacer (schema v${found}); ` +
        `this build knows up to v${known}. Upgrade Pacer or use another --db.`,
    )
    this.name = 'SchemaTooNewError'
  }
}

/** A migration's SQL failed; nothing of it was kept. */
export class MigrationError extends Error {
  readonly code = 'migration_failed'

  constructor(
    readonly path: string,
    readonly migration: Migration,
    cause: unknown,
  ) {
    super(
      `database ${path}: migration v${migration.version} (${migration.name}) failed: ` +
        reasonOf(cause),
      { cause },
    )
    this.name = 'MigrationError'
  }
}

export interface OpenDatabaseOptions {
  /** How long a writer waits for another process's lock before SQLITE_BUSY. @default 5000 */
  busyTimeoutMs?: number
  /** @default MIGRATIONS (migrations/index.ts) */
  migrations?: readonly Migration[]
  /** Stamps `migrations.applied_at`. @default systemClock */
  clock?: Clock
  /** Path to a better-sqlite3 `.node` built for another ABI (Electron). */
  nativeBinding?: string
  /**
   * Read only (summary, batches, export): the file must exist and is never written, so a file
   * the user may only read (an archived ledger, a colleague's copy) works, WAL files absent or
   * not. Refused if its schema is older than this Pacer's (an upgrade is a write).
   */
  readOnly?: boolean
  /**
   * Runs SQLite's quick_check after opening and refuses a damaged file (`pacer run`, `pacer
   * serve`: writing on damaged pages spreads the damage). Costs a read of the whole file.
   */
  quickCheck?: boolean
}

/** What to do about a damaged database file, in the words of the error that reports it. */
export const RECOVERY_HINT =
  'restore a copy made with pacer backup, or salvage what SQLite can read: ' +
  'sqlite3 DAMAGED.db .recover | sqlite3 recovered.db'

function retryWhileBusy<T>(step: () => T): T {
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (let attempt = 1; ; attempt++) {
    try {
      return step()
    } catch (err) {
      const code = (err as { code?: unknown }).code
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || attempt >= 40) throw err
      // A synchronous pause: opening is synchronous, and this only happens at start-up.
      Atomics.wait(pause, 0, 0, 25 + Math.floor(Math.random() * 50))
    }
  }
}

/** Opens (creating if needed) a Pacer database file: pragmas set, migrations applied. */
export function openDatabase(file: string, opts: OpenDatabaseOptions = {}): Database.Database {
  const busyTimeoutMs = opts.busyTimeoutMs ?? 5000
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new TypeError(
      `busyTimeoutMs must be a non-negative integer, got ${String(busyTimeoutMs)}`,
    )
  }
  const inMemory = file === ':memory:' || file === ''
  if (opts.readOnly && !inMemory) return openReadOnly(file, busyTimeoutMs, opts)
  if (!inMemory) {
    try {
      mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
    } catch (err) {
      throw new DatabaseOpenError(file, reasonOf(err), { cause: err })
    }
  }

  let db: Database.Database
  try {
    db = new Database(file, { timeout: busyTimeoutMs, nativeBinding: bindingOf(opts) })
  } catch (err) {
    throw new DatabaseOpenError(file, reasonOf(err), { cause: err })
  }
  try {
    // SQLite opens a file it may not write read-only without a word; the first write would fail.
    if (!inMemory && !writable(file)) {
      throw new DatabaseOpenError(
        file,
        'the file is read-only: this command writes to it (read commands such as pacer summary, ' +
          'batches and export work on a read-only file; for this one, copy it somewhere writable)',
      )
    }
    // busy_timeout first: switching to WAL takes a lock another process may hold right now.
    db.pragma(`busy_timeout = ${busyTimeoutMs}`)
    // WAL lets readers run beside the one writer (console + CLI on one file). NORMAL is the
    // documented WAL pairing: a power cut may lose the last commits, never corrupt the file.
    // Several processes opening a brand-new file at once (four `pacer run` started together)
    // contend for the switch to WAL and the migrations; SQLite may answer SQLITE_BUSY at once,
    // without waiting in the busy handler. Both steps are idempotent: try again briefly.
    retryWhileBusy(() => db.pragma('journal_mode = WAL'))
    db.pragma('synchronous = NORMAL')
    // Statement journals (an UPDATE that may need undoing midway) in memory, not in temp files:
    // they are small, and a file write per statement doubled the cost of a status change.
    db.pragma('temp_store = MEMORY')
    db.pragma('foreign_keys = ON')
    retryWhileBusy(() => migrate(db, opts.migrations ?? MIGRATIONS, opts.clock))
    if (opts.quickCheck) {
      const problems = integrityProblems(db, 'quick_check', 5)
      if (problems.length > 0) {
        throw new DatabaseOpenError(
          file,
          `the file is damaged (${summarizeProblems(problems)}); nothing was written to it: ` +
            RECOVERY_HINT,
        )
      }
    }
  } catch (err) {
    db.close()
    if (
      err instanceof SchemaTooNewError ||
      err instanceof MigrationError ||
      err instanceof DatabaseOpenError
    ) {
      throw err
    }
    if (err instanceof Database.SqliteError) {
      throw new DatabaseOpenError(file, damagedReason(err), { cause: err })
    }
    throw err
  }
  return db
}

/**
 * What SQLite's integrity_check or quick_check finds wrong, one problem per entry (empty: ok), of
 * the whole file or of one table and its indexes. A file damaged where the check itself must read
 * throws SQLITE_CORRUPT: that is one problem too.
 */
export function integrityProblems(
  db: Database.Database,
  check: 'integrity_check' | 'quick_check',
  max: number,
  table?: string,
): string[] {
  let rows: Record<string, string>[]
  try {
    // SQLite takes either a limit or a table name here, not both.
    rows = db.pragma(`${check}(${table ?? max})`) as Record<string, string>[]
  } catch (err) {
    const code = (err as { code?: unknown }).code
    if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') return [(err as Error).message]
    throw err
  }
  return rows
    .flatMap((r) => String(r[check]).split('\n'))
    .filter((line) => line !== 'ok' && !line.startsWith('*** in database'))
    .slice(0, max)
}

/** A few problems on one line, and how many more there were. */
function summarizeProblems(problems: readonly string[], shown = 3): string {
  const more = problems.length - shown
  return problems.slice(0, shown).join('; ') + (more > 0 ? `; and ${more} more` : '')
}

/** SQLite's reason, with what to do when it says the file is damaged or not a database. */
function damagedReason(err: InstanceType<typeof Database.SqliteError>): string {
  if (err.code === 'SQLITE_CORRUPT' || err.code === 'SQLITE_NOTADB') {
    return `${err.message}: ${RECOVERY_HINT}`
  }
  return err.message
}

function openReadOnly(
  file: string,
  busyTimeoutMs: number,
  opts: OpenDatabaseOptions,
): Database.Database {
  // On a full disk SQLite can create the -shm index but not size it (SQLITE_IOERR_SHMSIZE), and
  // the failed try leaves an empty -wal and a stub -shm behind: when no process holds the file
  // open in WAL mode (no -shm) and there is no room for one, read the file alone, creating nothing.
  if (!existsSync(`${file}-shm`) && !roomForShm(file)) return walSnapshot(file, opts)
  let db: Database.Database
  try {
    db = new Database(file, {
      readonly: true,
      fileMustExist: true,
      timeout: busyTimeoutMs,
      nativeBinding: bindingOf(opts),
    })
  } catch (err) {
    throw new DatabaseOpenError(file, reasonOf(err), { cause: err })
  }
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`)
    checkReadableVersion(db, file, opts)
    return db
  } catch (err) {
    db.close()
    if (err instanceof SchemaTooNewError || err instanceof DatabaseOpenError) throw err
    if (!isUnopenableWal(err)) {
      if (err instanceof Database.SqliteError) {
        throw new DatabaseOpenError(file, reasonOf(err), { cause: err })
      }
      throw err
    }
  }
  return walSnapshot(file, opts)
}

/**
 * A WAL database (Pacer's are) is read with its -shm index, which SQLite creates beside the file;
 * in a folder the user may not write, with no -shm there, it cannot. The file alone is then the
 * whole database if no write-ahead log holds commits: read a copy of it in memory (its header
 * marked as rollback-journal, which a copy may be). A log with commits in it cannot be read so.
 */
function walSnapshot(file: string, opts: OpenDatabaseOptions): Database.Database {
  const log = `${file}-wal`
  if (existsSync(log) && statSync(log).size > 0) {
    throw new DatabaseOpenError(
      file,
      `its write-ahead log ${log} holds commits this user cannot read without writing beside ` +
        'the file: copy the database with its -wal file somewhere writable, or ask its owner to ' +
        'open it once with Pacer (that folds the log in)',
    )
  }
  const image = readFileSync(file)
  // Bytes 18 and 19: the file format's write and read versions, 2 for WAL, 1 for a journal.
  if (image.length >= 20) image[18] = image[19] = 1
  const db = new Database(image, { readonly: true, nativeBinding: bindingOf(opts) })
  try {
    checkReadableVersion(db, file, opts)
  } catch (err) {
    db.close()
    throw err
  }
  return db
}

function writable(file: string): boolean {
  try {
    accessSync(file, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** A read-only open reads only a database of this Pacer's schema: an upgrade is a write. */
function checkReadableVersion(
  db: Database.Database,
  file: string,
  opts: OpenDatabaseOptions,
): void {
  const known = (opts.migrations ?? MIGRATIONS).at(-1)?.version ?? 0
  const current = currentVersion(db)
  if (current > known) throw new SchemaTooNewError(file, current, known)
  if (current < known) {
    throw new DatabaseOpenError(
      file,
      `written by an older Pacer (schema v${current}, this one reads v${known}): open it once ` +
        'with a command that writes (pacer run, pacer serve) to upgrade it, on a copy if the ' +
        'file is read-only',
    )
  }
}

/** Applies every pending migration in order, each in its own BEGIN IMMEDIATE transaction. */
export function migrate(
  db: Database.Database,
  migrations: readonly Migration[],
  clock: Clock = systemClock,
): void {
  checkMigrationList(migrations)
  const known = migrations.at(-1)?.version ?? 0

  // Fast path with no write at all: re-opening an up-to-date file must not take the write lock.
  const current = currentVersion(db)
  if (current > known) throw new SchemaTooNewError(db.name, current, known)
  if (current === known) return

  for (const m of migrations) {
    if (m.version <= current) continue
    db.transaction(() => {
      db.exec(`CREATE TABLE IF NOT EXISTS migrations (
        version    INTEGER PRIMARY KEY,
        name       TEXT NOT NULL,
        applied_at INTEGER NOT NULL
      )`)
      // Re-read under the write lock: another process opening the same new file may have applied
      // this migration between our first read and BEGIN IMMEDIATE.
      const now = currentVersion(db)
      if (now > known) throw new SchemaTooNewError(db.name, now, known)
      if (now >= m.version) return
      try {
        db.exec(m.sql)
      } catch (err) {
        throw new MigrationError(db.name, m, err)
      }
      db.prepare('INSERT INTO migrations(version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        clock.now(),
      )
    }).immediate()
  }
}

function currentVersion(db: Database.Database): number {
  const table = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'")
    .get()
  if (table === undefined) return 0
  const row = db.prepare('SELECT MAX(version) AS v FROM migrations').get() as { v: number | null }
  return row.v ?? 0
}

function checkMigrationList(migrations: readonly Migration[]): void {
  let previous = 0
  for (const m of migrations) {
    if (!Number.isSafeInteger(m.version) || m.version <= previous) {
      throw new TypeError(
        `migrations must have increasing positive integer versions; got v${String(m.version)} ` +
          `after v${previous}`,
      )
    }
    previous = m.version
  }
}

/**
 * The folder Electron's app.getPath('userData') uses for `appName`, so the CLI and the desktop app
 * find the same database without Electron being loaded.
 */
export function defaultDataDir(
  appName = 'Pacer',
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  if (platform === 'win32') {
    return path.win32.join(env['APPDATA'] || path.win32.join(home, 'AppData', 'Roaming'), appName)
  }
  if (platform === 'darwin') {
    return path.posix.join(home, 'Library', 'Application Support', appName)
  }
  return path.posix.join(env['XDG_CONFIG_HOME'] || path.posix.join(home, '.config'), appName)
}

/** $PACER_DB if set, else pacer.db in the user data folder shared with the desktop app. */
export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env['PACER_DB']
  if (fromEnv) return fromEnv
  return path.join(defaultDataDir('Pacer', env), DEFAULT_DB_FILENAME)
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
