import type { Migration } from './migration'

// Issue 21, per-run caps. The cap and the settled spend live on the batch (a resumed run keeps
// them); what is reserved for calls in flight lives in a table of its own, one row per call, keyed
// by the task and the worker that sends it: the rows of a dead worker are stale as soon as its
// task is no longer running under it, and the next reservation on the batch deletes them.
export const spendBudgetsMigration: Migration = {
  version: 14,
  name: 'spend budgets: a per-run cap on the batch, and the reservations of the calls in flight',
  sql: `
      -- The run's cap in micro-dollars (pacer run --budget); NULL: none.
      ALTER TABLE batches ADD COLUMN budget_micros INTEGER;
      -- What the batch's settled calls cost, kept in the transaction of each ledger row while a
      -- cap is set (pacing/spend-budget.ts); refolded from the ledger when a cap is set.
      ALTER TABLE batches ADD COLUMN budget_spent_micros INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE budget_reservations (
        id       INTEGER PRIMARY KEY,
        batch    INTEGER NOT NULL,  -- batches.key
        task_id  INTEGER NOT NULL,  -- task_queue.id
        worker   TEXT NOT NULL,     -- the worker that holds the task's lease and sends the call
        micros   INTEGER NOT NULL,  -- the call's worst case
        at       INTEGER NOT NULL
      );
      CREATE INDEX budget_reservations_batch ON budget_reservations(batch);
    `,
}
