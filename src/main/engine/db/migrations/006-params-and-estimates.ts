// Migration 6, "request params and estimated usage": a task's request params (max_tokens,
// temperature, ...) stored with its fingerprint, and a flag on every ledger row whose usage Pacer
// estimated (the provider reported none, or its 2xx answer could not be read), counted in the
// rollups. Existing rows keep their values: none of them was flagged (the estimate never ran).
import type { Migration } from './migration'
import { ledgerViewSql, tasksViewSql, V5_OUTCOME_CODES } from './views'

const PARAMS_AND_ESTIMATES_SQL = `
  -- Canonical JSON of the params the execution sends; NULL: none (what every older task had).
  ALTER TABLE fingerprints ADD COLUMN params TEXT;
  -- 1: the tokens (and so the cost) are Pacer's estimate, not the provider's report.
  ALTER TABLE ledger_rows ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE ledger_rollup ADD COLUMN estimated_calls INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE ledger_batch_rollup ADD COLUMN estimated_calls INTEGER NOT NULL DEFAULT 0;

  -- Dropping a view drops its triggers: ledgerViewSql makes them again.
  DROP VIEW tasks;
  DROP VIEW ledger;
  ${tasksViewSql(true)}
  ${ledgerViewSql({ codes: V5_OUTCOME_CODES, estimated: true, cacheEffect: false })}`

export const paramsAndEstimatesMigration: Migration = {
  version: 6,
  name: 'request params with the fingerprint; estimated usage flagged on ledger rows and rollups',
  sql: PARAMS_AND_ESTIMATES_SQL,
}
