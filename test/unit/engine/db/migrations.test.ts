// Each shipped migration, tested the way it meets a user: a database written by the previous
// schema, with rows in it, opened by this build.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/schema'
import { SqlitePacingStore } from '../../../../src/main/engine/pacing/store-sqlite'
import { SEED_AIMD } from '../../../../src/main/engine/types'

const file = () => join(mkdtempSync(join(tmpdir(), 'pacer-mig-')), 'pacer.db')

describe('migration 2: batches.driver', () => {
  it('keeps every v1 batch and task, as console batches (driver NULL)', () => {
    const path = file()
    const v1 = openDatabase(path, { migrations: MIGRATIONS.slice(0, 1) })
    v1.prepare(
      `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at)
       VALUES ('b1', 'old.jsonl', '/tmp/old.jsonl', 'h', 'interrupted', 0, 1, 2)`,
    ).run()
    v1.prepare(
      `INSERT INTO tasks(batch_id, seq, type, payload, fp, steps, provider, model, status, created_at)
       VALUES ('b1', 1, 't', '{}', 'fp1', 1, 'sim', 'sim-small', 'queued', 1)`,
    ).run()
    v1.close()

    const v2 = openDatabase(path)
    try {
      expect(v2.prepare('SELECT version FROM migrations ORDER BY version').pluck().all()).toEqual(
        MIGRATIONS.map((m) => m.version),
      )
      expect(v2.prepare('SELECT id, name, state, driver FROM batches').all()).toEqual([
        { id: 'b1', name: 'old.jsonl', state: 'interrupted', driver: null },
      ])
      expect(v2.prepare('SELECT batch_id, fp, status FROM tasks').all()).toEqual([
        { batch_id: 'b1', fp: 'fp1', status: 'queued' },
      ])
      v2.prepare("UPDATE batches SET driver = 'host:1:abc' WHERE id = 'b1'").run()
      expect(v2.prepare('SELECT driver FROM batches').pluck().get()).toBe('host:1:abc')
    } finally {
      v2.close()
    }
  })
})

describe('migration 3: the shared pacing budget', () => {
  it('keeps every v2 row and adds the empty pacing tables a SqlitePacingStore runs on', () => {
    const path = file()
    const v2 = openDatabase(path, { migrations: MIGRATIONS.slice(0, 2) })
    v2.prepare(
      `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at, driver)
       VALUES ('b1', 'run.jsonl', '/tmp/run.jsonl', 'h', 'running', 0, 1, 2, 'host:7:abc')`,
    ).run()
    v2.prepare("INSERT INTO settings(key, value) VALUES ('audit', 'true')").run()
    v2.close()

    const v3 = openDatabase(path)
    try {
      expect(v3.prepare('SELECT version FROM migrations ORDER BY version').pluck().all()).toEqual(
        MIGRATIONS.map((m) => m.version),
      )
      expect(v3.prepare('SELECT id, state, driver FROM batches').all()).toEqual([
        { id: 'b1', state: 'running', driver: 'host:7:abc' },
      ])
      expect(v3.prepare('SELECT value FROM settings').pluck().all()).toEqual(['true'])
      expect(v3.prepare('SELECT COUNT(*) FROM pacing_partitions').pluck().get()).toBe(0)
      expect(v3.prepare('SELECT COUNT(*) FROM pacing_workers').pluck().get()).toBe(0)

      const store = new SqlitePacingStore({ db: v3 })
      const params = { ...SEED_AIMD, initial: 3 }
      const { created } = store.join('sim:a', 'w1', { params, controller: stateAt(3) }, 100)
      expect(created).toBe(true)
      expect(store.admit('sim:a', 'w1', 100, 0)).toMatchObject({ admitted: true, inflight: 1 })
      expect(
        v3.prepare('SELECT partition, limit_value, concurrency FROM pacing_partitions').all(),
      ).toEqual([{ partition: 'sim:a', limit_value: 3, concurrency: 3 }])
      // One slot row per worker and partition: a second insert must fail, not double-count.
      expect(() =>
        v3
          .prepare(
            "INSERT INTO pacing_workers(partition, worker, slots, lease_until) VALUES ('sim:a', 'w1', 1, 0)",
          )
          .run(),
      ).toThrow(/UNIQUE|PRIMARY/)
    } finally {
      v3.close()
    }
  })
})

function stateAt(limit: number) {
  return { limit, lastCutAt: null, memory: null }
}
