import type { Migration } from './migration'

export const pacingPartitionsMigration: Migration = {
  version: 3,
  name: "pacing: each partition's budget shared by every process on the database",
  sql: `
      -- One row per provider:model: what every worker's controller continues from (pacing/store.ts).
      CREATE TABLE pacing_partitions (
        partition    TEXT PRIMARY KEY,
        params       TEXT NOT NULL,    -- JSON AimdParams: a slider moved anywhere applies to all
        limit_value  REAL NOT NULL,    -- the real-valued limit
        last_cut_at  INTEGER,          -- one cut per congestion episode across processes
        memory       TEXT,             -- JSON: what the controller learned, for one of its kind
        concurrency  INTEGER NOT NULL, -- max(min, floor(limit)): what admission compares with
        paused_until INTEGER NOT NULL DEFAULT 0,
        last_change  TEXT,             -- JSON LimitChange, with its reason
        version      INTEGER NOT NULL, -- +1 on every change: workers re-read the row when it moved
        session_at   INTEGER NOT NULL  -- when the first worker of the current session joined
      );

      -- Slots in flight, per worker, held under a lease: a worker that dies stops counting when
      -- its lease runs out. Counters are per worker; the console sums them.
      CREATE TABLE pacing_workers (
        partition   TEXT NOT NULL,
        worker      TEXT NOT NULL,
        slots       INTEGER NOT NULL DEFAULT 0,
        waiting     INTEGER NOT NULL DEFAULT 0,
        lease_until INTEGER NOT NULL,
        throttles   INTEGER NOT NULL DEFAULT 0,
        successes   INTEGER NOT NULL DEFAULT 0,
        errors      INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (partition, worker)
      ) WITHOUT ROWID;
    `,
}
