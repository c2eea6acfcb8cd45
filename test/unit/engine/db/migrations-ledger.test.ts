// Each shipped migration, tested the way it meets a user: a database written by the previous
// schema, with rows in it, opened by this build.
// Here the ledger's: rollups, params and estimates, cache effect, outcomes, the journal, source id.
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/migrations'
import { Ledger } from '../../../../src/main/engine/ledger/ledger'
import { executedCall } from '../../../helpers/ledger-db'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import { file } from './migration-files'

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
    } finally {
      db.close()
    }
    // This build's Ledger writes the columns of every migration: read the totals at the latest.
    const latest = openDatabase(path)
    try {
      const ledger = new Ledger({ db: latest, prices: new Prices() })
      expect(ledger.totals({ batchId: 'b1' })).toMatchObject({
        inputTokens: 38,
        costMicros: 280,
        estimatedCalls: 1,
      })
    } finally {
      latest.close()
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
      ledger.record(
        executedCall({
          ts: 2000,
          taskId: 2,
          fp: 'fb',
          taskType: 'classify',
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          usage,
        }),
      )
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
        added(rows, { reason: null, batch_saved_micros: null }),
      )
      expect(db.prepare('SELECT * FROM ledger_batch_rollup').all()).toEqual(
        added(rollup, { replayed: 0, batch_calls: 0, batch_cost_micros: 0, batch_saved_micros: 0 }),
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

describe("migration 12: the ledger's source id", () => {
  it('keeps every ledger row and gives the database one stable id, distinct per database', () => {
    const path = file()
    const before = MIGRATIONS.findIndex((m) => m.version === 12)
    const old = openDatabase(path, { migrations: MIGRATIONS.slice(0, before) })
    // Written as that schema's writers did (this build's Ledger writes columns of later ones).
    old
      .prepare(
        `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
           input_tokens, output_tokens, cost_micros, outcome, latency_ms, status, epoch)
         VALUES (5, NULL, NULL, 'fp', 'w', 't', 'sim', 'sim-small', 1, 3, 1, 1, 'executed', 1, 200, 1)`,
      )
      .run()
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
