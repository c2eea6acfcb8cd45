import type { Migration } from './migration'

// Issue 19, three processes on one database: what a process learns from refusals about how fast
// to send (the announced rate's pace, the floor's learned pace: pacing/learned-pace.ts) is shared
// through the partition's record, so a refusal seen by one process cuts the pace once for all.
export const pacingLearnedMigration: Migration = {
  version: 19,
  name: "pacing: each partition's paces learned from refusals, shared by every process",
  // JSON (pacing/learned-pace.ts LearnedPaces); null: nothing learned this session. Part of the
  // record: a new session starts without it, as the controller starts from its params.
  sql: 'ALTER TABLE pacing_partitions ADD COLUMN learned TEXT;',
}
