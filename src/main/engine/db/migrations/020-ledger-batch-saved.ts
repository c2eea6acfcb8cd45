// Migration 20 (issue 22): what the batch APIs' discount saved, per ledger row priced at the
// batch rate (list price − batch price, priced when the row is recorded, as cost_micros), and per
// rollup bucket the calls sent through a provider batch, what they cost and what they saved, so
// summary, Spend and the CSVs show it beside what dedup saved without re-pricing the ledger.
import type { Migration } from './migration'
import { ledgerViewSql, V8_OUTCOME_CODES } from './views'

// The codes of migration 9, unchanged since: this view must not move when a code is added.
const V20_OUTCOME_CODES = { ...V8_OUTCOME_CODES, replayed: 8 }

// A row answered through a provider batch: its price version ends in '+batch'
// (pricing/batch-rates.ts BATCH_PRICE_SUFFIX, written here as it shipped).
const VIA_BATCH = `price_version LIKE '%+batch'`

// The rollup sums of a set of ledger rows (ledger/rollups.ts ROW_SUMS keeps the same three).
const BATCH_SUMS = `
  COALESCE(SUM(${VIA_BATCH} AND input_tokens + output_tokens > 0), 0) AS calls,
  COALESCE(SUM(CASE WHEN ${VIA_BATCH} THEN cost_micros END), 0) AS cost,
  COALESCE(SUM(batch_saved_micros), 0) AS saved`

const ROLLUP_COLUMNS = ['ledger_rollup', 'ledger_batch_rollup']
  .flatMap((t) =>
    ['batch_calls', 'batch_cost_micros', 'batch_saved_micros'].map(
      (c) => `ALTER TABLE ${t} ADD COLUMN ${c} INTEGER NOT NULL DEFAULT 0;`,
    ),
  )
  .join('\n  ')

const LEDGER_BATCH_SAVED_SQL = `
  -- NULL on a row not priced at the batch rate, and on an unpriced one.
  ALTER TABLE ledger_rows ADD COLUMN batch_saved_micros INTEGER;
  ${ROLLUP_COLUMNS}

  -- Backfill. Every family that sells batches has billed them at 50 % of the list price since
  -- Pacer first priced a batch row (batch-rates.ts, checked 2026-12-02), so what a row saved is
  -- list − batch = its batch cost (to the micro-dollar each price's rounding may move). The rows
  -- are immutable to everything else: the trigger is set aside for this one update only.
  DROP TRIGGER ledger_rows_immutable_update;
  UPDATE ledger_rows SET batch_saved_micros = cost_micros
    WHERE cost_micros IS NOT NULL
      AND label IN (SELECT id FROM ledger_labels WHERE ${VIA_BATCH});
  CREATE TRIGGER ledger_rows_immutable_update BEFORE UPDATE ON ledger_rows
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;

  -- Its INSTEAD OF triggers go with the view.
  DROP VIEW ledger;
  ${ledgerViewSql({ codes: V20_OUTCOME_CODES, estimated: true, cacheEffect: true, reason: true, batchSaved: true })}

  -- The rows already folded into the rollups (the fold adds the new sums for the later ones).
  UPDATE ledger_rollup AS r
    SET batch_calls = s.calls, batch_cost_micros = s.cost, batch_saved_micros = s.saved
    FROM (
      SELECT w.span, ts - ((ts % w.span) + w.span) % w.span AS bucket, task_type, ${BATCH_SUMS}
      FROM ledger, (SELECT 15000 AS span UNION ALL SELECT 3600000) w
      WHERE ${VIA_BATCH} AND id <= (SELECT covered_id FROM ledger_rollup_state)
      GROUP BY 1, 2, 3
    ) s
    WHERE r.span = s.span AND r.bucket = s.bucket AND r.task_type = s.task_type;
  UPDATE ledger_batch_rollup AS r
    SET batch_calls = s.calls, batch_cost_micros = s.cost, batch_saved_micros = s.saved
    FROM (
      SELECT batch_id, task_type, ${BATCH_SUMS}
      FROM ledger
      WHERE ${VIA_BATCH} AND batch_id IS NOT NULL
        AND id <= (SELECT covered_id FROM ledger_rollup_state)
      GROUP BY 1, 2
    ) s
    WHERE r.batch_id = s.batch_id AND r.task_type = s.task_type;`

export const ledgerBatchSavedMigration: Migration = {
  version: 20,
  name: 'ledger batch saved: what the batch discount saved, per row and in the rollups',
  sql: LEDGER_BATCH_SAVED_SQL,
}
