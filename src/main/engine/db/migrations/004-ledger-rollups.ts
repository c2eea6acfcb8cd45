import type { Migration } from './migration'

// The summed columns of both rollup tables, as they shipped (ledger/rollups.ts keeps its own list
// for the statements it writes).
const ROLLUP_SUMS = [
  'row_count',
  'reused',
  'input_tokens',
  'cached_input_tokens',
  'cache_write_tokens',
  'output_tokens',
  'cost_micros',
  'priced_calls',
  'unpriced_calls',
  'saved_micros',
  'unpriced_reuses',
  'throttled',
  'errors',
  'abandoned',
  'executed',
  'duplicates',
  'execution_input_tokens',
  'wasted_micros',
]
  .map((c) => `${c.padEnd(22)} INTEGER NOT NULL,`)
  .join('\n        ')

export const ledgerRollupsMigration: Migration = {
  version: 4,
  name: 'ledger rollups: sums per task type and time bucket, and per batch, kept as rows are written',
  sql: `
      -- One row per (bucket width, bucket start, task type): 15 s and 1 h buckets. An execution is
      -- counted in the bucket of its latest row; row sums in the bucket of each row (see
      -- ledger-rollups.ts, which keeps these tables in step with the ledger).
      CREATE TABLE ledger_rollup (
        span                   INTEGER NOT NULL,
        bucket                 INTEGER NOT NULL,
        task_type              TEXT NOT NULL,
        ${ROLLUP_SUMS}
        PRIMARY KEY (span, bucket, task_type)
      ) WITHOUT ROWID;

      CREATE TABLE ledger_batch_rollup (
        batch_id               TEXT NOT NULL,
        task_type              TEXT NOT NULL,
        ${ROLLUP_SUMS}
        PRIMARY KEY (batch_id, task_type)
      ) WITHOUT ROWID;

      -- The highest ledger id folded in. Rows are folded by id in pages (ledger-rollups.ts): the
      -- ledger a database already holds is folded when a Pacer opens it (a page per transaction,
      -- so other writers are not held up); later rows as they are appended.
      CREATE TABLE ledger_rollup_state (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        covered_id INTEGER NOT NULL
      );
      INSERT INTO ledger_rollup_state (id, covered_id) VALUES (1, 0);
    `,
}
