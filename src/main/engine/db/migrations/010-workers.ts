// Migration 10: the worker registry (queue/workers.ts), which a rerun reads to tell a dead driver
// from a live one; the rollups folded again under the new count of runs.
import type { Migration } from './migration'

const WORKERS_MIGRATION_SQL = `
  CREATE TABLE workers (
    id          TEXT PRIMARY KEY,  -- the worker id of batches.driver, claims' owner, task_queue.worker
    host        TEXT NOT NULL,     -- os.hostname()
    boot        TEXT,              -- the machine's boot id (Linux): a pid means nothing after a reboot
    pid         INTEGER NOT NULL,
    proc_start  TEXT,              -- the process's start as the OS counts it (Linux): pids are reused
    started_at  INTEGER NOT NULL,
    alive_until INTEGER NOT NULL   -- the heartbeat, renewed every third of the lease
  ) WITHOUT ROWID;

  -- A task resumed at a later epoch is now one execution in the rollups (ledger-rollups.ts): they
  -- are folded again from the ledger, the first time a ledger is opened on it.
  DELETE FROM ledger_rollup;
  DELETE FROM ledger_batch_rollup;
  UPDATE ledger_rollup_state SET covered_id = 0;
`

export const workersMigration: Migration = {
  version: 10,
  name: 'workers: each process on the database (host, pid, heartbeat), so a killed run is resumed at once',
  sql: WORKERS_MIGRATION_SQL,
}
