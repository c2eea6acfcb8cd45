import type { Migration } from './migration'
import { ledgerViewSql, V8_OUTCOME_CODES } from './views'

export const failuresMigration: Migration = {
  version: 8,
  name: 'failures: the timeout outcome in the ledger view; why a batch was stopped',
  sql: `
      DROP VIEW ledger;
      ${ledgerViewSql({ codes: V8_OUTCOME_CODES, estimated: true, cacheEffect: true })}
      -- The setup problem (bad key, unknown model, no credit, unreachable server) that stopped a
      -- batch's run, until it runs again: what the console and the next \`pacer run\` say.
      ALTER TABLE batches ADD COLUMN stop_reason TEXT;
    `,
}
