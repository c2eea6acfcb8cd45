// The statements that run per task or per console request must each find their rows through an
// index: a pass over a table that grows with the work makes the millionth task cost a million
// times the first. SQLite's own plan (EXPLAIN QUERY PLAN) is the judge.
import type Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { HOT_QUERIES } from '../../../helpers/hot-queries'
import { fullScans as scansOf } from '../../../helpers/query-plans'

let db: Database.Database
beforeEach(() => {
  db = openDatabase(':memory:')
})
afterEach(() => db.close())

const fullScans = (sql: string) => scansOf(db, sql)

describe('hot queries', () => {
  it.each(Object.entries(HOT_QUERIES))('%s reads no growing table end to end', (_name, sql) => {
    expect(fullScans(sql)).toEqual([])
  })

  it('covers the per-task steps: pick, claim, complete, ledger row, finish, counters, settle', () => {
    const names = Object.keys(HOT_QUERIES)
    for (const step of [
      'tasks.pickIn',
      'tasks.pickAny',
      'claims.claimQueued',
      'claims.complete',
      'ledger.insertKnown',
      'tasks.finishTask',
      'batches.getSettle',
      'batches.settleBatch',
    ]) {
      expect(names).toContain(step)
    }
  })
})

describe('the check itself', () => {
  it('sees a query that reads a whole table, by name or by alias', () => {
    expect(fullScans('SELECT id FROM task_queue WHERE error = ?')).toEqual(['SCAN task_queue'])
    expect(fullScans('SELECT t.id FROM task_queue t WHERE t.error = ?')).toEqual(['SCAN t'])
    // A small table may be read whole: a handful of batches, names, labels.
    expect(fullScans("SELECT key FROM batches WHERE state = 'running'")).toEqual([])
  })

  it('fails the pick once its index is gone', () => {
    const pick = HOT_QUERIES['tasks.pickIn'] as string
    expect(fullScans(pick)).toEqual([])
    db.exec('DROP INDEX task_queue_batch_status')
    expect(fullScans(pick)).not.toEqual([])
  })
})
