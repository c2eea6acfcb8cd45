// The statements that run per task or per console request must each find their rows through an
// index: a pass over a table that grows with the work makes the millionth task cost a million
// times the first. SQLite's own plan (EXPLAIN QUERY PLAN) is the judge.
import type Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { GROWING_TABLES, HOT_QUERIES } from '../../../../src/main/engine/db/hot-queries'

let db: Database.Database
beforeEach(() => {
  db = openDatabase(':memory:')
})
afterEach(() => db.close())

/** The plan's lines that read a growing table from end to end (by name or by its alias). */
function fullScans(sql: string): string[] {
  const positional = (sql.match(/\?/g) ?? []).length
  const named = [...new Set([...sql.matchAll(/@(\w+)/g)].map((m) => m[1] as string))]
  const params = named.length
    ? [Object.fromEntries(named.map((n) => [n, null]))]
    : Array<null>(positional).fill(null)
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]
  return plan
    .map((p) => p.detail)
    .filter((detail) => {
      const scanned = /^SCAN (\w+)/.exec(detail)?.[1]
      if (!scanned) return false
      if (GROWING_TABLES.includes(scanned)) return true
      const aliasOf = new RegExp(`\\b(${GROWING_TABLES.join('|')})\\s+(AS\\s+)?${scanned}\\b`, 'i')
      return aliasOf.test(sql)
    })
}

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
