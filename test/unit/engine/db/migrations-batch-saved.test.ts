// Migration 20, tested the way it meets a user: a database written by schema 19 with live rows,
// rows priced at the batch rate (one of an unpriced model) and rollups already folded, opened by
// this build: each batch row gets what the discount saved (its cost, at the 50 % both vendors
// bill), the folded rollups get the batch sums, and later rows are priced exactly as recorded.
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/migrations'
import { Ledger } from '../../../../src/main/engine/ledger/ledger'
import { executedCall } from '../../../helpers/ledger-db'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import { file, rollupRow } from './migration-files'

const HOUR = 3_600_000

describe('migration 20: what the batch discount saved', () => {
  it('backfills v19 batch rows and folded rollups; rows recorded later store list − batch', () => {
    const path = file()
    const v19 = openDatabase(path, { migrations: MIGRATIONS.filter((m) => m.version <= 19) })
    const insert = v19.prepare(
      `INSERT INTO ledger (ts, task_id, batch_id, fp, worker, task_type, provider, model, step,
         input_tokens, output_tokens, cost_micros, outcome, epoch, price_version)
       VALUES (?, ?, 'b1', ?, 'w', 'label', 'openai', 'gpt-4o-mini', 1, 100, 10, ?, 'executed', 1, ?)`,
    )
    insert.run(1_000, 1, 'f1', 300, '2026-12-01')
    insert.run(2_000, 2, 'f2', 150, '2026-12-01+batch')
    insert.run(HOUR + 5, 3, 'f3', 200, '2026-12-01+batch')
    insert.run(HOUR + 6, 4, 'f4', null, '2026-12-01+batch')
    // Not folded yet when this build opens the file: its own fold sums it.
    insert.run(HOUR + 7, 5, 'f5', 50, '2026-12-01+batch')
    // The four rows folded as schema 19 folded them: only the keys and a count matter here.
    const rollup = (
      table: 'ledger_rollup' | 'ledger_batch_rollup',
      keys: Record<string, unknown>,
    ) => rollupRow(v19, table, keys)
    for (const span of [15_000, HOUR]) {
      rollup('ledger_rollup', { span, bucket: 0, task_type: 'label' })
      rollup('ledger_rollup', { span, bucket: HOUR, task_type: 'label' })
    }
    rollup('ledger_batch_rollup', { batch_id: 'b1', task_type: 'label' })
    v19.exec('UPDATE ledger_rollup_state SET covered_id = 4')
    v19.close()

    const db = openDatabase(path)
    try {
      expect(db.prepare('SELECT batch_saved_micros FROM ledger ORDER BY id').pluck().all()).toEqual(
        [null, 150, 200, null, 50],
      )
      const sums = db.prepare(
        `SELECT span, bucket, batch_calls AS calls, batch_cost_micros AS cost,
           batch_saved_micros AS saved FROM ledger_rollup ORDER BY span, bucket`,
      )
      expect(sums.all()).toEqual([
        { span: 15_000, bucket: 0, calls: 1, cost: 150, saved: 150 },
        { span: 15_000, bucket: HOUR, calls: 2, cost: 200, saved: 200 },
        { span: HOUR, bucket: 0, calls: 1, cost: 150, saved: 150 },
        { span: HOUR, bucket: HOUR, calls: 2, cost: 200, saved: 200 },
      ])
      expect(
        db
          .prepare(
            `SELECT batch_calls AS calls, batch_cost_micros AS cost, batch_saved_micros AS saved
             FROM ledger_batch_rollup`,
          )
          .all(),
      ).toEqual([{ calls: 3, cost: 350, saved: 350 }])
      // The rows stay immutable once the backfill is done.
      expect(() => db.exec('UPDATE ledger_rows SET batch_saved_micros = 0')).toThrow(/immutable/)

      // This build folds row 5 and records a call via batch at the exact list − batch price.
      const prices = new Prices()
      const ledger = new Ledger({ db, prices, foldEvery: 1 })
      const usage = {
        inputTokens: 1234,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 77,
      }
      const { costMicros } = ledger.record(
        executedCall({
          ts: HOUR + 8,
          taskId: 6,
          batchId: 'b1',
          fp: 'f6',
          taskType: 'label',
          provider: 'openai',
          model: 'gpt-4o-mini',
          usage,
          tier: 'batch',
        }),
      )
      // gpt-4o-mini: $0.15 / $0.60 per 1M list; the batch rate half of it.
      const list = Math.round(1234 * 0.15 + 77 * 0.6)
      expect(costMicros).toBe(Math.round(1234 * 0.075 + 77 * 0.3))
      expect(db.prepare('SELECT batch_saved_micros FROM ledger WHERE id = 6').pluck().get()).toBe(
        list - costMicros!,
      )
      expect(ledger.totals()).toMatchObject({
        batchCalls: 5,
        batchCostMicros: 400 + costMicros!,
        batchSavedMicros: 400 + list - costMicros!,
      })
      expect(ledger.totals({ batchId: 'b1' })).toMatchObject({ batchCalls: 5 })
      void ledger.close()
    } finally {
      db.close()
    }
  })
})
