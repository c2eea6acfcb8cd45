// Migration 7: what prompt-cache reads saved and cache writes cost above the plain input price,
// per ledger row, priced when the row is recorded (as cost_micros), and summed by the rollups.
import type { Migration } from './migration'
import { ledgerViewSql, V5_OUTCOME_CODES } from './views'

const LEDGER_CACHE_EFFECT_SQL = `
  -- Reads x (input - cached input), writes x (cache write - input). NULL on an unpriced row and on
  -- rows from before this migration (their effect was never priced).
  ALTER TABLE ledger_rows ADD COLUMN cache_saved_micros INTEGER;
  ALTER TABLE ledger_rows ADD COLUMN cache_write_extra_micros INTEGER;
  ALTER TABLE ledger_rollup ADD COLUMN cache_saved_micros INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE ledger_rollup ADD COLUMN cache_write_extra_micros INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE ledger_batch_rollup ADD COLUMN cache_saved_micros INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE ledger_batch_rollup ADD COLUMN cache_write_extra_micros INTEGER NOT NULL DEFAULT 0;
  -- Its INSTEAD OF triggers go with the view.
  DROP VIEW ledger;
  ${ledgerViewSql({ codes: V5_OUTCOME_CODES, estimated: true, cacheEffect: true })}`

export const ledgerCacheEffectMigration: Migration = {
  version: 7,
  name: 'ledger cache effect: what prompt-cache reads saved and cache writes cost extra, per row',
  sql: LEDGER_CACHE_EFFECT_SQL,
}
