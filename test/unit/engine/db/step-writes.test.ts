// The runner's group commit, on real files with a second connection looking on as another process
// would: what it sees, and when, is what a crash would leave behind.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import {
  commitOpenScopes,
  scopedDataVersion,
  StepWrites,
} from '../../../../src/main/engine/db/step-writes'
import { until } from '../../../helpers/until'

let dir: string
let file: string
let db: Database.Database
let other: Database.Database
let errors: Error[]
let scope: StepWrites

const write = (n: number) =>
  scope.run(() => db.prepare('INSERT INTO names(name) VALUES (?)').run(`n${n}`))
/** What another process sees: committed rows only. */
const seen = () => (other.prepare('SELECT COUNT(*) AS n FROM names').get() as { n: number }).n
const turn = () => new Promise((r) => setImmediate(r))

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pacer-steps-'))
  file = path.join(dir, 'pacer.db')
  db = openDatabase(file)
  other = openDatabase(file)
  errors = []
  scope = new StepWrites(db, { onError: (err) => errors.push(err) })
})
afterEach(() => {
  scope.commit()
  db.close()
  other.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('StepWrites', () => {
  it('alone on the file, commits the writes of one turn of the event loop together', async () => {
    write(1)
    await Promise.resolve()
    write(2)
    expect(seen()).toBe(0)
    await turn()
    expect(seen()).toBe(2)
    expect(errors).toEqual([])
  })

  it("gives the open transaction's data_version, and moves it only when another connection committed", async () => {
    const fresh = () => db.prepare('PRAGMA data_version').pluck().get() as number
    expect(scopedDataVersion(db)).toBeUndefined()
    write(1)
    const first = scopedDataVersion(db)
    expect(first).toBe(fresh())
    await turn()
    expect(scopedDataVersion(db)).toBeUndefined()
    other.prepare('INSERT INTO names(name) VALUES (?)').run('elsewhere')
    write(2)
    expect(scopedDataVersion(db)).toBe(fresh())
    expect(scopedDataVersion(db)).not.toBe(first)
    // A transaction that is not the scope's: read it afresh.
    await turn()
    db.exec('BEGIN')
    expect(scopedDataVersion(db)).toBeUndefined()
    db.exec('COMMIT')
  })

  it('durable() resolves once what was written is on disk, for another process to see', async () => {
    write(1)
    expect(seen()).toBe(0)
    await scope.durable()
    expect(seen()).toBe(1)
    // Nothing open: at once.
    await scope.durable()
  })

  it('once another connection writes too, commits each step as soon as it is done', async () => {
    write(1)
    await turn()
    other.prepare("INSERT INTO names(name) VALUES ('elsewhere')").run()
    write(2)
    expect(scope.grouping).toBe(false)
    // The step (this callback and its promise continuations) ends: committed before the turn does.
    await new Promise<void>((resolve) => process.nextTick(resolve))
    await Promise.resolve()
    await new Promise<void>((resolve) => process.nextTick(resolve))
    expect(seen()).toBe(3)
  })

  it('a transaction rolled back behind its back is reported, and its waiters told', async () => {
    const forgotten: string[] = []
    scope.onRollback(() => forgotten.push('refs'))
    write(1)
    const waiting = scope.durable()
    db.exec('ROLLBACK')
    scope.commit()
    await expect(waiting).rejects.toThrow(/rolled back/)
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/writes are lost/)])
    expect(forgotten).toEqual(['refs'])
    expect(seen()).toBe(0)
    // The next write starts a fresh transaction.
    write(2)
    await scope.durable()
    expect(seen()).toBe(1)
  })

  it('a second scope of this process commits the first before it writes, instead of waiting on it', () => {
    const mine = new StepWrites(other, { onError: (err) => errors.push(err) })
    write(1)
    const started = performance.now()
    mine.run(() => other.prepare("INSERT INTO names(name) VALUES ('second')").run())
    expect(performance.now() - started).toBeLessThan(4000)
    mine.commit()
    expect(seen()).toBe(2)
    write(3)
    commitOpenScopes()
    expect(seen()).toBe(3)
    expect(errors).toEqual([])
  })

  it('waits for another process that holds the write lock, then writes', async () => {
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const D = require(${JSON.stringify(require.resolve('better-sqlite3'))});
         const db = new D(${JSON.stringify(file)}, { timeout: 5000 });
         db.exec('BEGIN IMMEDIATE');
         process.stdout.write('held\\n');
         setTimeout(() => { db.exec('COMMIT'); db.close() }, 300);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let out = ''
    holder.stdout!.on('data', (d: Buffer) => (out += d.toString()))
    await until(() => out.includes('held'))
    write(1)
    await scope.durable()
    expect(seen()).toBe(1)
    expect(scope.grouping).toBe(false)
    await new Promise((r) => holder.on('close', r))
  })
})
