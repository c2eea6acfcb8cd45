import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  DatabaseOpenError,
  DEFAULT_DB_FILENAME,
  defaultDataDir,
  defaultDbPath,
  migrate,
  MigrationError,
  openDatabase,
  RECOVERY_HINT,
  SchemaTooNewError,
} from '../../../../src/main/engine/db'
import { MIGRATIONS, type Migration } from '../../../../src/main/engine/db/migrations'

// The newest schema version (versions may skip numbers that other branches hold).
const LATEST = MIGRATIONS.at(-1)!.version

const fixedClock = (t: number) => ({ now: () => t })

let dir: string
const open: Database.Database[] = []
function track(db: Database.Database): Database.Database {
  open.push(db)
  return db
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pacer-db-'))
})
afterEach(() => {
  for (const db of open.splice(0)) if (db.open) db.close()
  rmSync(dir, { recursive: true, force: true })
})

/** The tables and views a query can read. */
function tables(db: Database.Database): string[] {
  return (
    db
      .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
      .all() as {
      name: string
    }[]
  )
    .map((r) => r.name)
    .filter((n) => !n.startsWith('sqlite_'))
}

describe('openDatabase', () => {
  it('creates the folder, the schema tables and the migrations rows on a fresh file', () => {
    const file = path.join(dir, 'nested', 'deeper', 'pacer.db')
    const db = track(openDatabase(file, { clock: fixedClock(1234) }))
    // claims, ledger and tasks are views of the compact tables since migration 5 (same names, same columns).
    expect(tables(db)).toEqual([
      'batches',
      // Migration 17: a call's holds under the kept spend caps.
      'budget_holds',
      'budget_reservations',
      'call_journal',
      'claims',
      'fingerprints',
      'idempotency_keys',
      'ledger',
      'ledger_batch_rollup',
      'ledger_labels',
      'ledger_rollup',
      'ledger_rollup_state',
      'ledger_rows',
      // Migration 12: the database's id as a source of the team ledger.
      'ledger_source',
      'migrations',
      'names',
      'pacing_partitions',
      // Migration 15: the Concurrency chart's history.
      'pacing_pauses',
      'pacing_samples',
      'pacing_workers',
      // Migration 16: the journal of provider batch submissions.
      'provider_batch_lines',
      'provider_batches',
      'results',
      'settings',
      // Migration 17: the kept spend caps, their spend per period and warnings said.
      'spend_cap_alerts',
      'spend_cap_periods',
      'spend_caps',
      'task_log',
      'task_queue',
      'tasks',
      'workers',
    ])
    expect(db.prepare('SELECT version, name, applied_at FROM migrations').all()).toEqual(
      MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: 1234 })),
    )
  })

  it('sets WAL, synchronous NORMAL, foreign keys and the busy timeout', () => {
    const db = track(openDatabase(path.join(dir, 'p.db'), { busyTimeoutMs: 1234 }))
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(db.pragma('synchronous', { simple: true })).toBe(1)
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(db.pragma('busy_timeout', { simple: true })).toBe(1234)
    const defaults = track(openDatabase(path.join(dir, 'q.db')))
    expect(defaults.pragma('busy_timeout', { simple: true })).toBe(5000)
  })

  it('re-opening an up-to-date file changes nothing', () => {
    const file = path.join(dir, 'p.db')
    const first = openDatabase(file, { clock: fixedClock(1) })
    first.prepare("INSERT INTO settings(key, value) VALUES ('theme', '\"dark\"')").run()
    first.close()
    const again = track(openDatabase(file, { clock: fixedClock(2) }))
    expect(again.prepare('SELECT version, applied_at FROM migrations').all()).toEqual(
      MIGRATIONS.map((m) => ({ version: m.version, applied_at: 1 })),
    )
    expect(again.prepare('SELECT value FROM settings').all()).toEqual([{ value: '"dark"' }])

    // No write at all: opening must not need the write lock while another process holds it.
    const writer = track(new Database(file))
    writer.exec('BEGIN IMMEDIATE')
    const meanwhile = track(openDatabase(file, { busyTimeoutMs: 0 }))
    expect(meanwhile.prepare('SELECT COUNT(*) AS n FROM migrations').get()).toEqual({
      n: MIGRATIONS.length,
    })
    writer.exec('ROLLBACK')
  })

  it('refuses a file written by a newer schema, naming both versions', () => {
    const file = path.join(dir, 'newer.db')
    const db = openDatabase(file)
    // One past the newest this build knows, whatever that is.
    db.prepare("INSERT INTO migrations(version, name, applied_at) VALUES (?, 'future', 0)").run(
      LATEST + 1,
    )
    db.close()
    expect(() => openDatabase(file)).toThrow(SchemaTooNewError)
    expect(() => openDatabase(file)).toThrow(
      `database ${file} was written by a newer Pacer (schema v${LATEST + 1}); this build knows up to v${LATEST}. ` +
        'Upgrade Pacer or use another --db.',
    )
  })

  it('reports an unusable path as DatabaseOpenError naming the path', () => {
    const blocker = path.join(dir, 'a-file')
    writeFileSync(blocker, 'not a folder')
    const under = path.join(blocker, 'sub', 'pacer.db')
    expect(() => openDatabase(under)).toThrow(DatabaseOpenError)
    expect(() => openDatabase(under)).toThrow(`cannot open database at ${under}: `)

    // A folder where the file should be.
    expect(() => openDatabase(dir)).toThrow(`cannot open database at ${dir}: `)
  })

  it('reports a file that is not SQLite as DatabaseOpenError', () => {
    const file = path.join(dir, 'notes.db')
    writeFileSync(file, 'these are my notes, not a database '.repeat(100))
    let err: unknown
    try {
      openDatabase(file)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(DatabaseOpenError)
    expect((err as Error).message).toBe(
      `cannot open database at ${file}: file is not a database: ${RECOVERY_HINT}`,
    )
  })

  it('works in memory, for tests of other modules', () => {
    const db = track(openDatabase(':memory:'))
    expect(tables(db)).toContain('claims')
  })
})

describe('migrate', () => {
  // A hypothetical next migration, after every shipped one.
  const next = LATEST + 1
  const v2: Migration = {
    version: next,
    name: 'claims get an attempts counter; settings get a scope',
    sql: `
      ALTER TABLE fingerprints ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
      UPDATE fingerprints SET attempts = epoch;
      CREATE TABLE settings_new (scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (scope, key));
      INSERT INTO settings_new SELECT 'global', key, value FROM settings;
      DROP TABLE settings;
      ALTER TABLE settings_new RENAME TO settings;
    `,
  }

  it('builds v1, then a v2 migration carries the existing rows over', () => {
    const file = path.join(dir, 'p.db')
    const v1db = openDatabase(file, { migrations: MIGRATIONS.slice(0, 1) })
    const insertClaim = v1db.prepare(
      `INSERT INTO claims(fp, state, owner, epoch, lease_until, claimed_at)
       VALUES (?, 'running', 'w', ?, 0, 0)`,
    )
    insertClaim.run('fp-a', 1)
    insertClaim.run('fp-b', 3)
    v1db.prepare("INSERT INTO settings(key, value) VALUES ('ttl', '900000')").run()
    v1db.close()

    const db = track(openDatabase(file, { migrations: [...MIGRATIONS, v2], clock: fixedClock(9) }))
    // (v1 was built alone above; the shipped migrations after it run too.)
    // (Since v3 a claim's columns live on its fingerprint's row.)
    expect(db.prepare('SELECT fp, epoch, attempts FROM fingerprints ORDER BY fp').all()).toEqual([
      { fp: 'fp-a', epoch: 1, attempts: 1 },
      { fp: 'fp-b', epoch: 3, attempts: 3 },
    ])
    expect(db.prepare('SELECT scope, key, value FROM settings').all()).toEqual([
      { scope: 'global', key: 'ttl', value: '900000' },
    ])
    expect(db.prepare('SELECT version, applied_at FROM migrations ORDER BY version').all()).toEqual(
      [
        { version: 1, applied_at: expect.any(Number) as number },
        ...MIGRATIONS.slice(1).map((m) => ({ version: m.version, applied_at: 9 })),
        { version: next, applied_at: 9 },
      ],
    )
    // This build (without the next migration) must now refuse the file.
    expect(() => openDatabase(file)).toThrow(SchemaTooNewError)
  })

  it('applies several pending migrations in order on a fresh file', () => {
    const order: string[] = []
    const db = track(new Database(path.join(dir, 'p.db')))
    db.function('mark', (s: unknown) => {
      order.push(String(s))
      return null
    })
    migrate(db, [
      { version: 1, name: 'one', sql: "CREATE TABLE a (x); SELECT mark('one');" },
      { version: 2, name: 'two', sql: "CREATE TABLE b (y); SELECT mark('two');" },
      { version: 5, name: 'five', sql: "SELECT mark('five');" },
    ])
    expect(order).toEqual(['one', 'two', 'five'])
    expect(tables(db)).toEqual(['a', 'b', 'migrations'])
    expect(db.prepare('SELECT version FROM migrations ORDER BY version').all()).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 5 },
    ])
  })

  it('rolls a failing migration back entirely and names it', () => {
    const file = path.join(dir, 'p.db')
    track(openDatabase(file)).close()
    const broken: Migration = {
      version: next,
      name: 'half-done',
      sql: 'CREATE TABLE extra (x); INSERT INTO no_such_table VALUES (1);',
    }
    expect(() => openDatabase(file, { migrations: [...MIGRATIONS, broken] })).toThrow(
      MigrationError,
    )
    expect(() => openDatabase(file, { migrations: [...MIGRATIONS, broken] })).toThrow(
      new RegExp(`migration v${next} \\(half-done\\) failed: no such table: no_such_table`),
    )
    const db = track(openDatabase(file))
    expect(tables(db)).not.toContain('extra')
    expect(db.prepare('SELECT MAX(version) AS v FROM migrations').get()).toEqual({
      v: LATEST,
    })
  })

  it('rejects a migration list that is out of order', () => {
    const db = track(new Database(':memory:'))
    const m = (version: number): Migration => ({ version, name: `m${version}`, sql: '' })
    expect(() => migrate(db, [m(1), m(1)])).toThrow(TypeError)
    expect(() => migrate(db, [m(2), m(1)])).toThrow(/increasing/)
    expect(() => migrate(db, [m(0)])).toThrow(TypeError)
    expect(tables(db)).toEqual([])
  })
})

describe('default locations', () => {
  it("matches Electron's userData folder on each platform", () => {
    expect(defaultDataDir('Pacer', {}, 'linux', '/home/ana')).toBe('/home/ana/.config/Pacer')
    expect(defaultDataDir('Pacer', { XDG_CONFIG_HOME: '/xdg' }, 'linux', '/home/ana')).toBe(
      '/xdg/Pacer',
    )
    expect(defaultDataDir('Pacer', {}, 'darwin', '/Users/ana')).toBe(
      '/Users/ana/Library/Application Support/Pacer',
    )
    expect(
      defaultDataDir('Pacer', { APPDATA: 'C:\\Users\\ana\\AppData\\Roaming' }, 'win32', 'C:\\x'),
    ).toBe('C:\\Users\\ana\\AppData\\Roaming\\Pacer')
    expect(defaultDataDir('Pacer', {}, 'win32', 'C:\\Users\\ana')).toBe(
      'C:\\Users\\ana\\AppData\\Roaming\\Pacer',
    )
  })

  it('uses PACER_DB when set, else pacer.db in the data folder', () => {
    expect(defaultDbPath({ PACER_DB: '/data/team.db' })).toBe('/data/team.db')
    expect(defaultDbPath({ XDG_CONFIG_HOME: '/xdg' })).toBe(
      process.platform === 'linux' ? `/xdg/Pacer/${DEFAULT_DB_FILENAME}` : expect.any(String),
    )
  })
})
