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
import { Ledger } from '../../../../src/main/engine/ledger'
import { Prices } from '../../../../src/main/engine/prices'

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
describe('migration 4: ledger rollups', () => {
  it('folds the ledger a database already holds, the first time a ledger is opened on it', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.name.startsWith('ledger rollups'))
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    const insert = old.prepare(
      `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
         input_tokens, output_tokens, cost_micros, saved_micros, outcome, epoch)
       VALUES (?, ?, 'b1', ?, 'w', 'classify', 'sim', 'sim-small', 1, ?, 0, ?, ?, ?, ?)`,
    )
    insert.run(1_000, 1, 'fa', 1_000, 3_000, null, 'executed', 1)
    insert.run(2_000, 2, 'fa', 0, 0, 3_000, 'reused', null)
    insert.run(3_000, 3, 'fb', 500, 1_500, null, 'duplicate', 1)
    old.close()

    const db = openDatabase(path)
    try {
      expect(db.prepare('SELECT covered_id FROM ledger_rollup_state').pluck().get()).toBe(0)
      const ledger = new Ledger({ db, prices: new Prices() })
      expect(db.prepare('SELECT covered_id FROM ledger_rollup_state').pluck().get()).toBe(3)
      expect(ledger.totals()).toMatchObject({
        runs: 3,
        executed: 1,
        reused: 1,
        duplicates: 1,
        costMicros: 4_500,
        savedMicros: 3_000,
        wastedMicros: 1_500,
      })
      expect(ledger.totals({ batchId: 'b1' })).toEqual(ledger.totals())
    } finally {
      db.close()
    }
  })
})

describe('migration 5: the ledger cache effect', () => {
  it('keeps v4 rows (effect unknown: NULL) and rolls up what later rows saved', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.name.startsWith('ledger cache effect'))
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    old
      .prepare(
        `INSERT INTO ledger (ts, task_id, fp, worker, task_type, provider, model, step,
           input_tokens, cached_input_tokens, output_tokens, cost_micros, outcome, epoch)
         VALUES (1000, 1, 'fa', 'w', 'classify', 'anthropic', 'claude-sonnet-4-5', 1,
           1000, 800, 0, 540, 'executed', 1)`,
      )
      .run()
    old.close()

    const db = openDatabase(path)
    try {
      const ledger = new Ledger({ db, prices: new Prices(), foldEvery: 1 })
      const cols = db.prepare(
        'SELECT cache_saved_micros AS s, cache_write_extra_micros AS w FROM ledger',
      )
      expect(cols.all()).toEqual([{ s: null, w: null }])
      expect(ledger.totals()).toMatchObject({ cachedInputTokens: 800, cacheSavedMicros: 0 })
      const usage = {
        inputTokens: 3000,
        cachedInputTokens: 2000,
        cacheWriteTokens: 400,
        outputTokens: 0,
      }
      ledger.record({
        ts: 2000,
        taskId: 2,
        batchId: null,
        fp: 'fb',
        worker: 'w',
        taskType: 'classify',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        step: 1,
        usage,
        outcome: 'executed',
        latencyMs: 1,
        status: 200,
        epoch: 1,
      })
      // 2,000 read × ($3 − $0.30) = 5,400 µ$ saved; 400 written × ($3.75 − $3) = 300 µ$ extra.
      expect(cols.all()).toEqual([
        { s: null, w: null },
        { s: 5_400, w: 300 },
      ])
      expect(ledger.totals()).toMatchObject({
        cachedInputTokens: 2_800,
        cacheWriteTokens: 400,
        cacheSavedMicros: 5_400,
        cacheWriteExtraMicros: 300,
      })
    } finally {
      db.close()
    }
  })
})
