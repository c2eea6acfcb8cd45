import type { Migration } from './migration'

// Issue 20, concurrency history: the console's chart opened after a run (or in a fresh `pacer
// serve`) shows each partition's last hour. One row per partition per second that it was busy
// (pacing/history.ts folds the scheduler's samples), and each pause with its reason. Keyed by
// partition then time, so an hour of one partition is one range of the primary key.
export const pacingHistoryMigration: Migration = {
  version: 15,
  name: "pacing history: each partition's samples per second and its pauses, for the console's chart",
  sql: `
      CREATE TABLE pacing_samples (
        partition   TEXT NOT NULL,
        ts          INTEGER NOT NULL,  -- the second's start (epoch ms)
        limit_value REAL NOT NULL,     -- the limit at the second's last sample
        concurrency INTEGER NOT NULL,
        inflight    INTEGER NOT NULL,  -- the most in flight during the second (summed over processes)
        waiting     INTEGER NOT NULL,
        throttles   INTEGER NOT NULL,  -- throttles during the second
        PRIMARY KEY (partition, ts)
      ) WITHOUT ROWID;

      CREATE TABLE pacing_pauses (
        partition TEXT NOT NULL,
        ts        INTEGER NOT NULL,    -- when the pause began
        until     INTEGER NOT NULL,
        reason    TEXT NOT NULL,
        PRIMARY KEY (partition, ts)
      ) WITHOUT ROWID;
    `,
}
