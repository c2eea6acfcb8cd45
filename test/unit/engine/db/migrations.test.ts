// Each shipped migration, tested the way it meets a user: a database written by the previous
// schema, with rows in it, opened by this build.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
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

describe('migration 5: compact storage', () => {
  const FP_A = 'a'.repeat(64)
  const FP_B = 'b'.repeat(64)

  /** A v2 database as Pacer wrote it: a batch whose duplicate reused the first task's result. */
  function v2Database(path: string): void {
    const v2 = openDatabase(path, { migrations: MIGRATIONS.slice(0, 2) })
    v2.exec(`
      INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at, driver)
        VALUES ('b1', 'jobs.jsonl', '/j.jsonl', 'h1', 'interrupted', 0, 100, 200, 'cli:1'),
               ('b2', 'console', 'console', NULL, 'running', 1, 300, 300, NULL);
      INSERT INTO tasks(id, batch_id, seq, type, payload, fp, key, steps, provider, model, status,
          attempts, worker, lease_until, result, error, created_at, started_at, finished_at)
        VALUES (1, 'b1', 1, 'sum', '{"n":1}', '${FP_A}', NULL, 3, 'sim', 'sim-small', 'succeeded',
                  1, NULL, NULL, '{"text":"one"}', NULL, 100, 110, 120),
               (2, 'b1', 2, 'sum', '{"n":1}', '${FP_A}', NULL, 3, 'sim', 'sim-small', 'reused',
                  1, NULL, NULL, '{"text":"one"}', NULL, 100, 111, 121),
               (3, 'b1', 3, 'tr', '{"n":2}', '${FP_B}', 'order-7', 1, 'sim', 'sim-small', 'running',
                  2, 'cli:1', 999, NULL, NULL, 100, 112, NULL),
               (4, 'b1', 4, 'tr', '{"n":3}', 'fp-text', NULL, 1, 'sim', 'sim-small', 'failed',
                  1, NULL, NULL, NULL, 'HTTP 400: no', 100, 113, 123),
               (5, 'b2', 1, 'tr', '{"n":3}', 'fp-text', NULL, 1, 'sim', 'sim-small', 'queued',
                  0, NULL, NULL, NULL, NULL, 300, NULL, NULL);
      INSERT INTO claims(fp, state, status, owner, epoch, lease_until, result, claimed_at, completed_at)
        VALUES ('${FP_A}', 'completed', 'succeeded', 'cli:1', 1, 150, '{"text":"one"}', 110, 120),
               ('${FP_B}', 'running', NULL, 'cli:1', 2, 999, NULL, 112, NULL),
               ('fp-text', 'completed', 'failed', 'cli:1', 1, 150, '{"error":"no"}', 113, 123);
      INSERT INTO idempotency_keys(key, payload_fp, created_at) VALUES ('order-7', '${FP_B}', 100);
      INSERT INTO ledger(id, ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
          input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_micros,
          saved_micros, outcome, latency_ms, status, epoch, price_version)
        VALUES (1, 110, 1, 'b1', '${FP_A}', 'cli:1', 'sum', 'sim', 'sim-small', 1, 10, 0, 0, 5, 105, NULL, 'executed', 9, 200, 1, 'v1'),
               (2, 115, 1, 'b1', '${FP_A}', 'cli:1', 'sum', 'sim', 'sim-small', 2, 20, 0, 0, 5, 135, NULL, 'executed', 9, 200, 1, 'v1'),
               (3, 116, 2, 'b1', '${FP_A}', 'cli:1', 'sum', 'sim', 'sim-small', 0, 0, 0, 0, 0, 0, 240, 'reused', NULL, NULL, 1, 'v1'),
               (4, 117, 3, 'b1', '${FP_B}', 'cli:1', 'tr', 'sim', 'sim-small', 1, 0, 0, 0, 0, 0, NULL, 'throttled', 3, 429, 2, 'v1'),
               (5, 118, NULL, NULL, 'fp-text', 'console', 'tr', 'openai', 'gpt-x', 1, 7, 0, 0, 1, NULL, NULL, 'error', 4, 400, NULL, NULL);
    `)
    v2.close()
  }

  const snapshot = (db: ReturnType<typeof openDatabase>) => ({
    batches: db
      .prepare(
        'SELECT id, name, source, source_hash, state, audit, created_at, updated_at, driver FROM batches ORDER BY id',
      )
      .all(),
    // params (migration 6) is the tasks view's one column v2 did not have.
    tasks: db
      .prepare('SELECT * FROM tasks ORDER BY id')
      .all()
      .map((r) => {
        const { params: _params, ...v2 } = r as Record<string, unknown>
        return v2
      }),
    claims: db.prepare('SELECT * FROM claims ORDER BY fp').all(),
    // fp_id (an index key for joins by execution) and estimated (migration 6) are the ledger
    // view's columns v2 did not have.
    ledger: db
      .prepare('SELECT * FROM ledger ORDER BY id')
      .all()
      .map((r) => {
        const { fp_id: _fpId, estimated: _estimated, ...v2 } = r as Record<string, unknown>
        return v2
      }),
    keys: db.prepare('SELECT * FROM idempotency_keys').all(),
  })

  it('keeps every row, readable through views of the same names and columns', () => {
    const path = file()
    v2Database(path)
    const before = new Database(path, { readonly: true })
    const expected = snapshot(before as never)
    before.close()

    // Up to this migration: migration 6 adds the ledger's cache-effect columns to the view.
    const upTo = MIGRATIONS.findIndex((m) => m.name.startsWith('compact storage')) + 1
    const v3 = openDatabase(path, { migrations: MIGRATIONS.slice(0, upTo) })
    try {
      expect(snapshot(v3)).toEqual(expected)
      expect(expected.tasks).toHaveLength(5)
      expect(expected.ledger).toHaveLength(5)
    } finally {
      v3.close()
    }
  })

  it('stores each fingerprint, payload and result once, with counters and costs filled in', () => {
    const path = file()
    v2Database(path)
    const v3 = openDatabase(path)
    try {
      // Three distinct fingerprints for five tasks and five ledger rows; hex digests as 32 bytes.
      const fps = v3.prepare('SELECT fp, typeof(fp) AS kind FROM fingerprints ORDER BY id').all()
      expect(fps).toEqual([
        { fp: Buffer.from(FP_A, 'hex'), kind: 'blob' },
        { fp: Buffer.from(FP_B, 'hex'), kind: 'blob' },
        { fp: 'fp-text', kind: 'text' },
      ])
      // The duplicate points at its original's result: two result rows, not four copies.
      expect(v3.prepare('SELECT body FROM results ORDER BY id').pluck().all()).toEqual([
        '{"error":"no"}',
        '{"text":"one"}',
      ])
      const shared = v3.prepare('SELECT DISTINCT result_id FROM task_queue WHERE id IN (1, 2)')
      expect(shared.all()).toHaveLength(1)
      // The batch counters equal a count of the tasks.
      expect(
        v3
          .prepare(
            'SELECT id, queued, running, succeeded, reused, failed, cancelled FROM batches ORDER BY id',
          )
          .all(),
      ).toEqual([
        { id: 'b1', queued: 0, running: 1, succeeded: 1, reused: 1, failed: 1, cancelled: 0 },
        { id: 'b2', queued: 1, running: 0, succeeded: 0, reused: 0, failed: 0, cancelled: 0 },
      ])
      // Each batch knows where its tasks start: a page of them is a range of ids.
      expect(v3.prepare('SELECT id, first_task FROM batches ORDER BY id').all()).toEqual([
        { id: 'b1', first_task: 1 },
        { id: 'b2', first_task: 5 },
      ])
      // A completed claim keeps what its latest execution cost (both steps of task 1: 105 + 135).
      const costs = v3.prepare(
        `SELECT CASE typeof(fp) WHEN 'blob' THEN lower(hex(fp)) ELSE fp END AS fp, cost_micros AS cost
         FROM fingerprints WHERE state = 'completed' ORDER BY id`,
      )
      expect(costs.all()).toEqual([
        { fp: FP_A, cost: 240 },
        { fp: 'fp-text', cost: null },
      ])
      // The ledger stays append-only through the view and the table.
      expect(() => v3.prepare('DELETE FROM ledger').run()).toThrow(/immutable/)
      expect(() => v3.prepare('UPDATE ledger_rows SET step = 9').run()).toThrow(/immutable/)
      // Rows written to the view by hand land in the table and read back the same.
      v3.prepare(
        `INSERT INTO ledger(ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
           input_tokens, output_tokens, cost_micros, outcome, epoch, price_version)
         VALUES (200, 5, 'b2', 'fp-text', 'w9', 'tr', 'sim', 'sim-small', 1, 3, 4, 69, 'executed', 1, 'v2')`,
      ).run()
      expect(v3.prepare('SELECT * FROM ledger WHERE id = 6').get()).toMatchObject({
        batch_id: 'b2',
        fp: 'fp-text',
        worker: 'w9',
        task_type: 'tr',
        outcome: 'executed',
        cost_micros: 69,
        price_version: 'v2',
      })
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

describe('migration 6: request params and estimated usage', () => {
  it('keeps every v5 row: no params, nothing estimated, rollups continued', () => {
    const path = file()
    const v5 = openDatabase(path, { migrations: MIGRATIONS.slice(0, 5) })
    v5.exec(`
      INSERT INTO batches(id, name, source, state, audit, created_at, updated_at, first_task, queued)
        VALUES ('b1', 'jobs.jsonl', '/j.jsonl', 'running', 0, 100, 100, 1, 1);
      INSERT INTO fingerprints(fp, type, payload, steps, provider, model)
        VALUES (X'${'ab'.repeat(32)}', 'sum', '{"n":1}', 1, 'sim', 'sim-small');
      INSERT INTO task_queue(id, batch, seq, fp_id, status) VALUES (1, 1, 1, 1, 0);
    `)
    const insert = v5.prepare(
      `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
         input_tokens, output_tokens, cost_micros, outcome, epoch)
       VALUES (?, 1, 'b1', ?, 'w', 'sum', 'sim', 'sim-small', 1, ?, 5, ?, 'executed', 1)`,
    )
    insert.run(1_000, 'ab'.repeat(32), 10, 105)
    insert.run(2_000, 'ab'.repeat(32), 20, 135)
    // Folded into v5's rollup table as a v5 Pacer folds them (the two rows: one execution).
    const sums = { row_count: 2, input_tokens: 30, output_tokens: 10, cost_micros: 240 }
    const more = { priced_calls: 2, executed: 1, execution_input_tokens: 30 }
    const columns = Object.keys({ ...sums, ...more })
    v5.prepare(
      `INSERT INTO ledger_batch_rollup (batch_id, task_type, ${columns.join(', ')}, reused,
         cached_input_tokens, cache_write_tokens, unpriced_calls, saved_micros, unpriced_reuses,
         throttled, errors, abandoned, duplicates, wasted_micros)
       VALUES ('b1', 'sum', ${columns.map(() => '?').join(', ')}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)`,
    ).run(...Object.values({ ...sums, ...more }))
    v5.exec('UPDATE ledger_rollup_state SET covered_id = 2')
    const before = {
      tasks: v5.prepare('SELECT * FROM tasks').all(),
      ledger: v5.prepare('SELECT * FROM ledger ORDER BY id').all(),
      rollup: v5.prepare('SELECT * FROM ledger_batch_rollup').all(),
    }
    v5.close()

    // Up to the rollups' refold of migration 10 (tested below): this is about what v6 keeps.
    const upTo = MIGRATIONS.filter((m) => m.version < 10)
    const db = openDatabase(path, { migrations: upTo })
    try {
      expect(db.prepare('SELECT MAX(version) FROM migrations').pluck().get()).toBe(
        upTo.at(-1)!.version,
      )
      const added = (rows: unknown[], extra: Record<string, unknown>) =>
        rows.map((r) => ({ ...(r as object), ...extra }))
      expect(db.prepare('SELECT * FROM tasks').all()).toEqual(added(before.tasks, { params: null }))
      expect(db.prepare('SELECT * FROM ledger ORDER BY id').all()).toEqual(
        added(before.ledger, {
          estimated: 0,
          cache_saved_micros: null,
          cache_write_extra_micros: null,
          reason: null,
        }),
      )
      expect(db.prepare('SELECT * FROM ledger_batch_rollup').all()).toEqual(
        added(before.rollup, {
          estimated_calls: 0,
          cache_saved_micros: 0,
          cache_write_extra_micros: 0,
          replayed: 0,
        }),
      )
      // The view's insert trigger was made again with the flag; the ledger stays append-only.
      db.prepare(
        `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
           input_tokens, output_tokens, cost_micros, outcome, epoch, estimated)
         VALUES (3000, 1, 'b1', ?, 'w', 'sum', 'sim', 'sim-small', 1, 8, 2, 40, 'executed', 1, 1)`,
      ).run('ab'.repeat(32))
      expect(() => db.exec('UPDATE ledger_rows SET estimated = 0')).toThrow(/immutable/)
      expect(() => db.exec('DELETE FROM ledger WHERE id = 1')).toThrow(/immutable/)
      const ledger = new Ledger({ db, prices: new Prices() })
      expect(ledger.totals({ batchId: 'b1' })).toMatchObject({
        inputTokens: 38,
        costMicros: 280,
        estimatedCalls: 1,
      })
    } finally {
      db.close()
    }
  })
})

describe('migration 7: the ledger cache effect', () => {
  it('keeps earlier rows (effect unknown: NULL) and rolls up what later rows saved', () => {
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

describe('migration 8: the timeout outcome; why a batch was stopped', () => {
  it('keeps every ledger row and batch, reads the timeout code as a word, and writes it back', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 8)
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    old
      .prepare(
        `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at)
         VALUES ('b1', 'n', NULL, NULL, 'interrupted', 0, 1, 1)`,
      )
      .run()
    const insert = old.prepare(
      `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
         input_tokens, output_tokens, cost_micros, outcome, epoch)
       VALUES (?, 1, 'b1', 'fa', 'w', 't', 'sim', 'sim-small', 1, 0, 0, NULL, ?, 1)`,
    )
    insert.run(1_000, 'executed')
    insert.run(2_000, 'error')
    // A row with the new code, as this build writes it, read through the old view: no word yet.
    old
      .prepare(
        `INSERT INTO ledger_rows(ts, task_id, batch, fp_id, worker, label, step, input_tokens,
           cached_input_tokens, cache_write_tokens, output_tokens, outcome)
         SELECT 3000, 1, batch, fp_id, worker, label, 1, 0, 0, 0, 0, 7 FROM ledger_rows LIMIT 1`,
      )
      .run()
    expect(old.prepare('SELECT outcome FROM ledger ORDER BY id').pluck().all()).toEqual([
      'executed',
      'error',
      null,
    ])
    old.close()

    const db = openDatabase(path)
    try {
      expect(db.prepare('SELECT outcome FROM ledger ORDER BY id').pluck().all()).toEqual([
        'executed',
        'error',
        'timeout',
      ])
      // Written through the view by hand, as tools do: the word becomes the code.
      db.prepare(
        `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
           input_tokens, output_tokens, cost_micros, outcome, epoch)
         VALUES (4000, 1, 'b1', 'fa', 'w', 't', 'sim', 'sim-small', 1, 0, 0, NULL, 'timeout', 1)`,
      ).run()
      expect(db.prepare('SELECT outcome FROM ledger_rows ORDER BY id').pluck().all()).toEqual([
        1, 5, 7, 7,
      ])
      expect(db.prepare('SELECT id, state, stop_reason FROM batches').all()).toEqual([
        { id: 'b1', state: 'interrupted', stop_reason: null },
      ])
      // Timeouts count among the errors of the totals.
      expect(new Ledger({ db, prices: new Prices() }).totals()).toMatchObject({ errors: 3 })
    } finally {
      db.close()
    }
  })
})

describe('migration 9: the call journal, replayed rows, reasons, task logs', () => {
  it('keeps every ledger row and rollup, reads the replayed code as a word, and saves with it', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 9)
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    old
      .prepare(
        `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at)
         VALUES ('b1', 'n', NULL, NULL, 'done', 0, 1, 1)`,
      )
      .run()
    const insert = old.prepare(
      `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
         input_tokens, output_tokens, cost_micros, outcome, epoch)
       VALUES (?, 1, 'b1', 'fa', 'w', 't', 'sim', 'sim-small', ?, 10, 5, 40, ?, 1)`,
    )
    insert.run(1_000, 1, 'executed')
    insert.run(2_000, 2, 'timeout')
    const rows = old.prepare('SELECT * FROM ledger ORDER BY id').all()
    const rollup = old.prepare('SELECT * FROM ledger_batch_rollup').all()
    old.close()

    const db = openDatabase(path)
    try {
      const added = (list: unknown[], extra: Record<string, unknown>) =>
        list.map((r) => ({ ...(r as object), ...extra }))
      expect(db.prepare('SELECT * FROM ledger ORDER BY id').all()).toEqual(
        added(rows, { reason: null }),
      )
      expect(db.prepare('SELECT * FROM ledger_batch_rollup').all()).toEqual(
        added(rollup, { replayed: 0 }),
      )
      expect(db.prepare('SELECT COUNT(*) FROM call_journal').pluck().get()).toBe(0)
      expect(db.prepare('SELECT COUNT(*) FROM task_log').pluck().get()).toBe(0)
      // Written through the view by hand, as tools do: the word becomes the code, the reason stays.
      db.prepare(
        `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
           input_tokens, output_tokens, cost_micros, saved_micros, outcome, epoch, reason)
         VALUES (3000, 1, 'b1', 'fa', 'w', 't', 'sim', 'sim-small', 1, 0, 0, 0, 40, 'replayed', 2,
           NULL), (4000, 1, 'b1', 'fa', 'w', 't', 'sim', 'sim-small', 2, 10, 5, 40, NULL,
           'duplicate', NULL, 'answer lost')`,
      ).run()
      expect(db.prepare('SELECT outcome, reason FROM ledger_rows ORDER BY id').all()).toEqual([
        { outcome: 1, reason: null },
        { outcome: 7, reason: null },
        { outcome: 8, reason: null },
        { outcome: 3, reason: 'answer lost' },
      ])
      expect(db.prepare('SELECT outcome FROM ledger ORDER BY id').pluck().all()).toEqual([
        'executed',
        'timeout',
        'replayed',
        'duplicate',
      ])
      // A replayed call is counted and its saving is in what was saved; the lost answer wasted 40
      // (waste of its own, not a duplicate execution).
      expect(new Ledger({ db, prices: new Prices() }).totals()).toMatchObject({
        replayed: 1,
        savedMicros: 40,
        duplicates: 0,
        wastedMicros: 40,
      })
    } finally {
      db.close()
    }
  })
})

describe('migration 10: the worker registry; a resumed task is one run', () => {
  it('keeps every batch, adds an empty registry, and folds the rollups again with one run per task', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 10)
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    old
      .prepare(
        `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at,
           driver)
         VALUES ('b1', 'n', '/tmp/n.jsonl', 'h', 'running', 0, 1, 1, 'gone-host:4242:abcdef')`,
      )
      .run()
    const insert = old.prepare(
      `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
         input_tokens, output_tokens, cost_micros, outcome, epoch)
       VALUES (?, 1, 'b1', 'fa', 'w', 't', 'sim', 'sim-small', ?, 10, 5, 100, 'executed', ?)`,
    )
    // Step 1 at epoch 1, killed; the task resumed at epoch 2 runs both steps.
    insert.run(1_000, 1, 1)
    insert.run(2_000, 1, 2)
    insert.run(3_000, 2, 2)
    // Folded as the builds before it folded them: two executions, one per epoch.
    new Ledger({ db: old, prices: new Prices() }).totals()
    old.exec('UPDATE ledger_rollup SET executed = 2; UPDATE ledger_batch_rollup SET executed = 2')
    expect(new Ledger({ db: old, prices: new Prices() }).totals()).toMatchObject({ executed: 2 })
    old.close()

    const db = openDatabase(path)
    try {
      expect(db.prepare('SELECT id, state, driver FROM batches').all()).toEqual([
        { id: 'b1', state: 'running', driver: 'gone-host:4242:abcdef' },
      ])
      expect(db.prepare('SELECT COUNT(*) FROM workers').pluck().get()).toBe(0)
      const ledger = new Ledger({ db, prices: new Prices() })
      expect(ledger.totals()).toMatchObject({ executed: 1, runs: 1, duplicates: 0 })
      expect(ledger.totals({ batchId: 'b1' })).toMatchObject({ executed: 1, runs: 1 })
    } finally {
      db.close()
    }
  })
})

describe('migration 11: the agent module of a batch', () => {
  it('keeps every batch, with no agent module, and stores one for new batches', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 11)
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    old
      .prepare(
        `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at)
         VALUES ('b1', 'n', 'f.jsonl', 'h', 'interrupted', 0, 1, 1)`,
      )
      .run()
    old.close()

    const db = openDatabase(path)
    try {
      expect(db.prepare('SELECT id, source_hash, state, agents FROM batches').all()).toEqual([
        { id: 'b1', source_hash: 'h', state: 'interrupted', agents: null },
      ])
      db.prepare("UPDATE batches SET agents = '{}' WHERE id = 'b1'").run()
      expect(db.prepare('SELECT agents FROM batches').pluck().get()).toBe('{}')
    } finally {
      db.close()
    }
  })
})

describe("migration 12: the ledger's source id", () => {
  it('keeps every ledger row and gives the database one stable id, distinct per database', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 12)
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    const ledger = new Ledger({ db: old, prices: new Prices() })
    ledger.record({
      ts: 5,
      taskId: null,
      batchId: null,
      fp: 'fp',
      worker: 'w',
      taskType: 't',
      provider: 'sim',
      model: 'sim-small',
      step: 1,
      usage: { inputTokens: 3, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1 },
      outcome: 'executed',
      latencyMs: 1,
      status: 200,
      epoch: 1,
    })
    void ledger.close()
    old.close()

    const db = openDatabase(path)
    const other = openDatabase(file())
    try {
      const id = db.prepare('SELECT id FROM ledger_source').pluck().get() as string
      expect(id).toMatch(/^[0-9a-f]{16}$/)
      expect(other.prepare('SELECT id FROM ledger_source').pluck().get()).not.toBe(id)
      expect(db.prepare('SELECT COUNT(*) FROM ledger').pluck().get()).toBe(1)
      expect(() => db.prepare("INSERT INTO ledger_source VALUES (2, 'x')").run()).toThrow(/CHECK/)
    } finally {
      db.close()
      other.close()
    }
  })
})

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
