// Each shipped migration, tested the way it meets a user: a database written by the previous
// schema, with rows in it, opened by this build.
// Here the pacing store's: its tables, and each partition's shared announced budget.
import type Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/migrations'
import { SqlitePacingStore } from '../../../../src/main/engine/pacing/store-sqlite'
import { SEED_AIMD } from '../../../../src/main/engine/core/types'
import { file } from './migration-files'

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

/** A partition's row as a store before migration 19 wrote it. */
function oldPartition(db: Database.Database, partition: string, limit: number, version: number) {
  db.prepare(
    `INSERT INTO pacing_partitions(partition, params, limit_value, concurrency, version, session_at)
     VALUES (?, ?, ?, ?, ?, 1)`,
  ).run(partition, JSON.stringify(SEED_AIMD), limit, limit, version)
}

function stateAt(limit: number) {
  return { limit, lastCutAt: null, memory: null }
}

describe("migration 13: each partition's shared announced budget", () => {
  it('keeps every pacing partition, with no budget yet, and stores one', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 13)
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    old
      .prepare(
        `INSERT INTO pacing_partitions(partition, params, limit_value, concurrency, version, session_at)
         VALUES ('openai:gpt', '{}', 4, 4, 3, 1)`,
      )
      .run()
    old.close()

    const db = openDatabase(path)
    try {
      expect(db.prepare('SELECT partition, version, budget FROM pacing_partitions').all()).toEqual([
        { partition: 'openai:gpt', version: 3, budget: null },
      ])
      db.prepare(`UPDATE pacing_partitions SET budget = '{"s":1,"c":{},"d":{}}'`).run()
      expect(db.prepare('SELECT budget FROM pacing_partitions').pluck().get()).toBe(
        '{"s":1,"c":{},"d":{}}',
      )
    } finally {
      db.close()
    }
  })
})

describe('migration 15: the Concurrency chart’s history', () => {
  it('keeps every v14 partition and adds the empty history tables the chart reads', () => {
    const path = file()
    const v14 = openDatabase(path, { migrations: MIGRATIONS.slice(0, 14) })
    // The row as v14's store wrote it (today's store writes migration 19's column too).
    oldPartition(v14, 'sim:a', 2, 1)
    v14.close()

    const v15 = openDatabase(path)
    try {
      expect(v15.prepare('SELECT partition FROM pacing_partitions').pluck().all()).toEqual([
        'sim:a',
      ])
      expect(v15.prepare('SELECT COUNT(*) FROM pacing_samples').pluck().get()).toBe(0)
      expect(v15.prepare('SELECT COUNT(*) FROM pacing_pauses').pluck().get()).toBe(0)
      // One row per partition and second: a second insert for the same second must fail.
      const insert = v15.prepare("INSERT INTO pacing_samples VALUES ('sim:a', 1000, 2, 2, 1, 0, 0)")
      insert.run()
      expect(() => insert.run()).toThrow(/UNIQUE|PRIMARY/)
    } finally {
      v15.close()
    }
  })
})

describe("migration 19: each partition's learned paces, shared by every process", () => {
  it('keeps every v17 partition with nothing learned, and a store then shares what it learns', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 19)
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    oldPartition(old, 'openai:gpt', 4, 3)
    old.close()

    const db = openDatabase(path)
    try {
      expect(db.prepare('SELECT partition, version, learned FROM pacing_partitions').all()).toEqual(
        [{ partition: 'openai:gpt', version: 3, learned: null }],
      )
      const store = new SqlitePacingStore({ db })
      expect(store.record('openai:gpt')?.learned).toBeUndefined()
      store.join('openai:gpt', 'w1', { params: SEED_AIMD, controller: stateAt(4) }, 10)
      const send = { burstMs: 0, scale: 0.8, scaleAt: 20, cutAt: 20 }
      store.update('openai:gpt', 20, () => ({ learned: { send } }))
      expect(
        JSON.parse(db.prepare('SELECT learned FROM pacing_partitions').pluck().get() as string),
      ).toEqual({ send })
      expect(new SqlitePacingStore({ db }).record('openai:gpt')?.learned).toEqual({ send })
    } finally {
      db.close()
    }
  })
})
