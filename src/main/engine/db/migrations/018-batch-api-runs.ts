import type { Migration } from './migration'

// Issue 22 in the console: a batch whose calls go through the vendors' batch APIs keeps that
// choice (a Resume continues at the batch price, never live at twice it), and each submission
// names the Pacer batch whose calls it carries, so the Queue view shows them per batch.
export const batchApiRunsMigration: Migration = {
  version: 18,
  name: 'batch API runs: the batches sent through provider batches, and each submission’s batch',
  sql: `
      ALTER TABLE batches ADD COLUMN batch_api INTEGER NOT NULL DEFAULT 0;  -- 1: via provider batches
      ALTER TABLE provider_batches ADD COLUMN batch_id TEXT;  -- batches.id; NULL before v18
      CREATE INDEX provider_batches_batch ON provider_batches(batch_id, id);
    `,
}
