import type { Migration } from './migration'

export const initialMigration: Migration = {
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
}
