// Migration 14, tested as it meets a user: a v13 database with a batch in it, opened by this build.
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/migrations'
import { file } from './migration-files'

describe('migration 14: spend budgets', () => {
  it('keeps every batch, uncapped with nothing spent, and adds the empty reservations table', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 14)
    const v13 = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    v13
      .prepare(
        `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at)
         VALUES ('b1', 'run.jsonl', '/tmp/run.jsonl', 'h', 'interrupted', 0, 1, 2)`,
      )
      .run()
    v13.close()

    const v14 = openDatabase(path)
    try {
      expect(
        v14.prepare('SELECT id, state, budget_micros, budget_spent_micros FROM batches').all(),
      ).toEqual([{ id: 'b1', state: 'interrupted', budget_micros: null, budget_spent_micros: 0 }])
      expect(v14.prepare('SELECT COUNT(*) FROM budget_reservations').pluck().get()).toBe(0)
      v14
        .prepare(
          'INSERT INTO budget_reservations(batch, task_id, worker, micros, at) VALUES (1, 1, ?, 5, 0)',
        )
        .run('w1')
      expect(v14.prepare('SELECT batch, micros FROM budget_reservations').all()).toEqual([
        { batch: 1, micros: 5 },
      ])
    } finally {
      v14.close()
    }
  })
})

describe('migration 17: spend caps', () => {
  it('keeps the reservations in flight (not sent) and adds the empty caps tables', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 17)
    const v16 = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    v16
      .prepare(
        'INSERT INTO budget_reservations(batch, task_id, worker, micros, at) VALUES (1, 7, ?, 5, 0)',
      )
      .run('w1')
    v16.close()

    const v17 = openDatabase(path)
    try {
      expect(v17.prepare('SELECT task_id, micros, sent FROM budget_reservations').all()).toEqual([
        { task_id: 7, micros: 5, sent: 0 },
      ])
      for (const t of ['spend_caps', 'spend_cap_periods', 'budget_holds', 'spend_cap_alerts']) {
        expect(v17.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get()).toBe(0)
      }
    } finally {
      v17.close()
    }
  })
})
