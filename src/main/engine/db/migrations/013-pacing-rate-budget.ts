import type { Migration } from './migration'

export const pacingRateBudgetMigration: Migration = {
  version: 13,
  name: "pacing: each partition's header-announced rate budget shared by every process",
  // JSON (pacing/shared-budget.ts SharedBudget): the announced buckets and what was admitted
  // against them. null: nothing announced or spent yet. Kept across sessions: it is the provider's.
  sql: 'ALTER TABLE pacing_partitions ADD COLUMN budget TEXT;',
}
