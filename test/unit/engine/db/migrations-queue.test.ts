// Each shipped migration, tested the way it meets a user: a database written by the previous
// schema, with rows in it, opened by this build.
// Here the queue's: batches, tasks and their compact storage, the worker registry, agent modules.
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/migrations'
import { Ledger } from '../../../../src/main/engine/ledger/ledger'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import { file, rollupRow } from './migration-files'

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
    // Folded as the builds before it folded them: two executions, one per epoch. (Written by
    // hand: this build's Ledger folds the columns of later migrations too.)
    const sums = { row_count: 3, input_tokens: 30, output_tokens: 15, cost_micros: 300 }
    const more = { priced_calls: 3, executed: 2, execution_input_tokens: 30 }
    const fold = (table: 'ledger_rollup' | 'ledger_batch_rollup', keys: Record<string, unknown>) =>
      rollupRow(old, table, { ...keys, ...sums, ...more })
    for (const span of [15_000, 3_600_000])
      fold('ledger_rollup', { span, bucket: 0, task_type: 't' })
    fold('ledger_batch_rollup', { batch_id: 'b1', task_type: 't' })
    old.exec('UPDATE ledger_rollup_state SET covered_id = 3')
    expect(old.prepare('SELECT executed FROM ledger_batch_rollup').pluck().get()).toBe(2)
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
