import { COMPACT_STORAGE_SQL, ledgerViewSql, V8_OUTCOME_CODES } from './compact-storage'
import { CALL_JOURNAL_SQL } from './migrations/migration-9'
import { PARAMS_AND_ESTIMATES_SQL } from './migrations/migration-6'
import { LEDGER_CACHE_EFFECT_SQL } from './migrations/ledger-cache-effect'
import { WORKERS_MIGRATION_SQL } from '../queue/workers'

/**
 * Numbered migrations. Each entry is applied once, in order, inside a transaction, and recorded in
 * the `migrations` table. Never edit a migration that has shipped: add the next number.
 */
export interface Migration {
  version: number
  name: string
  sql: string
}

// The summed columns of both rollup tables of migration 4, as they shipped (ledger-rollups.ts keeps
// its own list for the statements it writes).
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

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial: batches, tasks, claims, idempotency keys, ledger, settings',
    sql: `
      CREATE TABLE batches (
        id           TEXT PRIMARY KEY,
        name         TEXT NOT NULL,
        source       TEXT,             -- file path or 'console'
        source_hash  TEXT,             -- sha256 of the imported file, to resume the same file
        state        TEXT NOT NULL,    -- running | paused | interrupted | cancelled | done
        audit        INTEGER NOT NULL DEFAULT 0,
        created_at   INTEGER NOT NULL,
        updated_at   INTEGER NOT NULL
      );
      CREATE INDEX batches_source_hash ON batches(source_hash, state);

      CREATE TABLE tasks (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        batch_id     TEXT NOT NULL REFERENCES batches(id),
        seq          INTEGER NOT NULL, -- position in the batch (line number for files)
        type         TEXT NOT NULL,
        payload      TEXT NOT NULL,    -- canonical JSON
        fp           TEXT NOT NULL,    -- fingerprint (sha256 hex) or derived from the explicit key
        key          TEXT,             -- explicit idempotency key, if the task carried one
        steps        INTEGER NOT NULL DEFAULT 1,
        provider     TEXT NOT NULL,
        model        TEXT NOT NULL,
        status       TEXT NOT NULL,    -- queued | running | succeeded | reused | failed | cancelled
        attempts     INTEGER NOT NULL DEFAULT 0,
        worker       TEXT,             -- who is running it now (task lease, not the claim)
        lease_until  INTEGER,
        result       TEXT,
        error        TEXT,
        created_at   INTEGER NOT NULL,
        started_at   INTEGER,
        finished_at  INTEGER
      );
      CREATE INDEX tasks_batch_status ON tasks(batch_id, status, seq);
      CREATE INDEX tasks_status_lease ON tasks(status, lease_until);
      CREATE INDEX tasks_fp ON tasks(fp);

      CREATE TABLE claims (
        fp           TEXT PRIMARY KEY,
        state        TEXT NOT NULL,    -- running | completed | released
        status       TEXT,             -- when completed: succeeded | failed (deterministic failure)
        owner        TEXT NOT NULL,
        epoch        INTEGER NOT NULL, -- fencing token, +1 on every takeover or re-claim
        lease_until  INTEGER NOT NULL,
        result       TEXT,
        claimed_at   INTEGER NOT NULL,
        completed_at INTEGER
      );

      CREATE TABLE idempotency_keys (
        key          TEXT PRIMARY KEY,
        payload_fp   TEXT NOT NULL,    -- fingerprint of {type, payload} first seen with this key
        created_at   INTEGER NOT NULL
      );

      CREATE TABLE ledger (
        id                  INTEGER PRIMARY KEY AUTOINCREMENT,
        ts                  INTEGER NOT NULL,
        task_id             INTEGER,
        batch_id            TEXT,
        fp                  TEXT NOT NULL,
        worker              TEXT NOT NULL,
        task_type           TEXT NOT NULL,
        provider            TEXT NOT NULL,
        model               TEXT NOT NULL,
        step                INTEGER NOT NULL,
        input_tokens        INTEGER NOT NULL DEFAULT 0,
        cached_input_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens  INTEGER NOT NULL DEFAULT 0,
        output_tokens       INTEGER NOT NULL DEFAULT 0,
        cost_micros         INTEGER,   -- NULL = unpriced model, never 0 for "unknown"
        saved_micros        INTEGER,   -- reused rows: what the original execution cost
        outcome             TEXT NOT NULL, -- executed | reused | duplicate | throttled | error | abandoned
        latency_ms          INTEGER,
        status              INTEGER,
        epoch               INTEGER,
        price_version       TEXT
      );
      CREATE INDEX ledger_type ON ledger(task_type, outcome);
      CREATE INDEX ledger_ts ON ledger(ts);
      CREATE INDEX ledger_fp ON ledger(fp);
      CREATE INDEX ledger_batch ON ledger(batch_id);

      -- The ledger is append-only: a row, once written, is never changed.
      CREATE TRIGGER ledger_immutable_update BEFORE UPDATE ON ledger
        BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;
      CREATE TRIGGER ledger_immutable_delete BEFORE DELETE ON ledger
        BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;

      CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL            -- JSON
      );
    `,
  },
  {
    version: 2,
    name: 'batches.driver: the CLI process that runs a batch; the console runs only its own',
    sql: `
      -- NULL: a console batch, run by whichever console engine is up. Otherwise the worker id of
      -- the \`pacer run\` process that queued it, with its own keys and limits: consoles leave it
      -- alone unless the operator resumes it from the console (which clears the driver).
      ALTER TABLE batches ADD COLUMN driver TEXT;
    `,
  },
  {
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
  },
  {
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
  },
  {
    version: 5,
    name: 'compact storage: fingerprints, payloads and results once; counters per batch; views of the v2 tables',
    // compact-storage.ts: the tables, the copy from v2, and the views that keep v2's names.
    sql: COMPACT_STORAGE_SQL,
  },
  {
    version: 6,
    name: 'request params with the fingerprint; estimated usage flagged on ledger rows and rollups',
    // migration-6.ts: the columns, and the tasks and ledger views made again with them.
    sql: PARAMS_AND_ESTIMATES_SQL,
  },
  {
    version: 7,
    name: 'ledger cache effect: what prompt-cache reads saved and cache writes cost extra, per row',
    // ledger-cache-effect.ts: the columns, and the ledger view and its triggers with them.
    sql: LEDGER_CACHE_EFFECT_SQL,
  },
  {
    version: 8,
    name: 'failures: the timeout outcome in the ledger view; why a batch was stopped',
    sql: `
      DROP VIEW ledger;
      ${ledgerViewSql({ codes: V8_OUTCOME_CODES, estimated: true, cacheEffect: true })}
      -- The setup problem (bad key, unknown model, no credit, unreachable server) that stopped a
      -- batch's run, until it runs again: what the console and the next \`pacer run\` say.
      ALTER TABLE batches ADD COLUMN stop_reason TEXT;
    `,
  },
  {
    version: 9,
    name: 'call journal: each effect of an execution kept for replay; replayed ledger rows; task logs',
    // migration-9.ts: the journal and log tables, the reason column, the ledger view with 'replayed'.
    sql: CALL_JOURNAL_SQL,
  },
  {
    version: 10,
    name: 'workers: each process on the database (host, pid, heartbeat), so a killed run is resumed at once',
    // workers.ts: the registry a rerun reads to tell a dead driver from a live one.
    sql: WORKERS_MIGRATION_SQL,
  },
  {
    version: 11,
    name: "agents: the agent module a batch's tasks run (path, identity, task types)",
    // JSON (agents/registry.ts BatchAgents); null: every task runs the built-in loop.
    sql: 'ALTER TABLE batches ADD COLUMN agents TEXT;',
  },
  {
    version: 12,
    name: "ledger source: the database's stable id, with the machine the team ledger's source of its rows",
    // team-ledger/source.ts: drawn once, here, so every process on the file appends as one source.
    sql: `CREATE TABLE ledger_source (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        id  TEXT NOT NULL
      );
      INSERT INTO ledger_source (one, id) VALUES (1, lower(hex(randomblob(8))));`,
  },
  {
    version: 13,
    name: "pacing: each partition's header-announced rate budget shared by every process",
    // JSON (pacing/shared-budget.ts SharedBudget): the announced buckets and what was admitted
    // against them. null: nothing announced or spent yet. Kept across sessions: it is the provider's.
    sql: 'ALTER TABLE pacing_partitions ADD COLUMN budget TEXT;',
  },
]
