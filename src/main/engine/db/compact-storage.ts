// Migration 5, "storage sized for millions": each fingerprint, payload and result stored once,
// integer keys instead of repeated strings, a counters row per batch, and only the indexes the
// queries use. The v2 tables become views of the same names and columns (`tasks`, `claims`,
// `ledger`), so every query written against them still reads the same rows.
import { codeToWordSql, fpKeySql, fpTextSql, TASK_STATUS_CODES, wordToCodeSql } from './codes'

const COUNTS = Object.keys(TASK_STATUS_CODES)

const TABLES = `
  -- Repeated strings of the ledger (batch ids, worker ids), stored once.
  CREATE TABLE names (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
  );

  -- What a ledger row was about: a few dozen combinations, not one copy per row.
  CREATE TABLE ledger_labels (
    id            INTEGER PRIMARY KEY,
    task_type     TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    price_version TEXT NOT NULL DEFAULT '',
    UNIQUE (task_type, provider, model, price_version)
  );

  -- One row per result an execution produced; tasks and claims point at it (duplicates share it).
  CREATE TABLE results (
    id   INTEGER PRIMARY KEY,
    body TEXT NOT NULL
  );

  -- One row per distinct execution identity: the fingerprint, what runs (every task with this
  -- fingerprint runs the same type, payload, steps, provider and model: that is what it hashes),
  -- and its claim. A NULL state has never been claimed.
  CREATE TABLE fingerprints (
    id           INTEGER PRIMARY KEY,
    fp           BLOB NOT NULL UNIQUE,     -- sha256 as 32 bytes (codes.ts fpKey)
    type         TEXT NOT NULL DEFAULT '', -- '' until a task with this fingerprint is queued
    payload      TEXT,                     -- canonical JSON
    key          TEXT,
    steps        INTEGER NOT NULL DEFAULT 1,
    provider     TEXT NOT NULL DEFAULT '',
    model        TEXT NOT NULL DEFAULT '',
    state        TEXT,                     -- running | completed | released
    status       TEXT,                     -- when completed: succeeded | failed
    owner        TEXT,
    epoch        INTEGER NOT NULL DEFAULT 0,
    lease_until  INTEGER,
    result_id    INTEGER,                  -- results.id
    cost_micros  INTEGER,                  -- what the completing execution cost; NULL = unknown
    claimed_at   INTEGER,
    completed_at INTEGER
  );

  CREATE TABLE task_queue (
    id          INTEGER PRIMARY KEY,       -- never deleted, so never reused
    batch       INTEGER NOT NULL REFERENCES batches(key),
    seq         INTEGER NOT NULL,          -- position in the batch (line number for files)
    fp_id       INTEGER NOT NULL,          -- fingerprints.id (rows never deleted: no FK check)
    status      INTEGER NOT NULL,          -- codes.ts TASK_STATUS_CODES
    attempts    INTEGER NOT NULL DEFAULT 0,
    worker      TEXT,                      -- who runs it now (task lease, not the claim)
    lease_until INTEGER,
    result_id   INTEGER,                   -- results.id: the result this task got
    error       TEXT,
    started_at  INTEGER,
    finished_at INTEGER
  );

  CREATE TABLE ledger_rows (
    id                  INTEGER PRIMARY KEY,  -- append-only: ids only grow
    ts                  INTEGER NOT NULL,
    task_id             INTEGER,
    batch               INTEGER,           -- names.id of the batch id
    fp_id               INTEGER NOT NULL,  -- fingerprints.id
    worker              INTEGER NOT NULL,  -- names.id
    label               INTEGER NOT NULL,  -- ledger_labels.id
    step                INTEGER NOT NULL,
    input_tokens        INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens       INTEGER NOT NULL DEFAULT 0,
    cost_micros         INTEGER,           -- NULL = unpriced model, never 0 for "unknown"
    saved_micros        INTEGER,
    outcome             INTEGER NOT NULL,  -- codes.ts OUTCOME_CODES
    latency_ms          INTEGER,
    status              INTEGER,
    epoch               INTEGER
  );`

const BATCHES = `
  CREATE TABLE batches (
    key          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    source       TEXT,
    source_hash  TEXT,
    state        TEXT NOT NULL,
    audit        INTEGER NOT NULL DEFAULT 0,
    driver       TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    -- A batch's tasks are queued in one transaction: their ids are first_task, first_task + 1, ...
    -- so a page of them is a range of task ids, not a sort of the batch.
    first_task   INTEGER,
    -- The batch's status counts, kept by TaskTable in the transaction of every status change
    -- (queue-tasks.ts; a trigger cost twice as much per change): reading them costs the same
    -- for a million tasks as for ten.
    ${COUNTS.map((s) => `${s} INTEGER NOT NULL DEFAULT 0`).join(',\n    ')}
  );`

// Created after the copy: building an index once is cheaper than growing it row by row.
const INDEXES = `
  CREATE INDEX batches_by_source ON batches(source_hash, state);
  -- The pick (next queued task of a batch in seq order), retries and the console's status filter.
  CREATE INDEX task_queue_batch_status ON task_queue(batch, status, seq);
  CREATE INDEX ledger_rows_ts ON ledger_rows(ts);
  CREATE INDEX ledger_rows_batch ON ledger_rows(batch);
  -- An execution's rows (fingerprint, task, epoch): what a reuse saved, and the read side's
  -- execution-level rollups, find them here.
  CREATE INDEX ledger_rows_fp ON ledger_rows(fp_id);`

const TRIGGERS = `
  -- The ledger is append-only: a row, once written, is never changed.
  CREATE TRIGGER ledger_rows_immutable_update BEFORE UPDATE ON ledger_rows
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;
  CREATE TRIGGER ledger_rows_immutable_delete BEFORE DELETE ON ledger_rows
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;`

// The outcome codes as migration 5 shipped them: its view must not change when a code is added
// (migration 8 rebuilds the view with the codes of its time).
export const V5_OUTCOME_CODES = {
  executed: 1,
  reused: 2,
  duplicate: 3,
  throttled: 4,
  error: 5,
  abandoned: 6,
}

// Migration 8's codes: the timeout outcome. Migration 9 rebuilds the view with 'replayed'.
export const V8_OUTCOME_CODES = { ...V5_OUTCOME_CODES, timeout: 7 }

/** The v2 tables' names and columns, read from the compact ones. */
const COMPAT_VIEWS = `
  ${tasksViewSql(false)}

  CREATE VIEW claims AS
    SELECT ${fpTextSql('f.fp')} AS fp, f.state, f.status, f.owner, f.epoch, f.lease_until,
      r.body AS result, f.claimed_at, f.completed_at
    FROM fingerprints f LEFT JOIN results r ON r.id = f.result_id
    WHERE f.state IS NOT NULL;

  ${ledgerViewSql({ codes: V5_OUTCOME_CODES, estimated: false, cacheEffect: false })}`

/** The `tasks` view: as migration 5 made it, and with the request params (migration 6). */
export function tasksViewSql(params: boolean): string {
  return `
  CREATE VIEW tasks AS
    SELECT t.id, b.id AS batch_id, t.seq, f.type, f.payload, ${fpTextSql('f.fp')} AS fp, f.key,
      f.steps, f.provider, f.model, ${codeToWordSql(TASK_STATUS_CODES, 't.status')} AS status,
      t.attempts, t.worker, t.lease_until, r.body AS result, t.error, b.created_at,
      t.started_at, t.finished_at${params ? ', f.params' : ''}
    FROM task_queue t
    JOIN batches b ON b.key = t.batch
    JOIN fingerprints f ON f.id = t.fp_id
    LEFT JOIN results r ON r.id = t.result_id;`
}

/**
 * The `ledger` view over ledger_rows, and its triggers, as a migration makes it: with the outcome
 * codes of its time (a code added later must not change a shipped view) and the columns it had.
 * Migration 5: the v5 codes; 6: with the estimated flag (migration-6.ts); 7: with what cache
 * reads saved and writes cost extra (ledger-cache-effect.ts); 8: with the timeout code; 9: with
 * the replayed code and the reason column (migration-9.ts).
 */
export function ledgerViewSql(view: {
  codes: Readonly<Record<string, number>>
  estimated: boolean
  cacheEffect: boolean
  /** Migration 9: why a row is what it is (a duplicate's 'answer lost'). */
  reason?: boolean
}): string {
  const { codes, estimated, cacheEffect } = view
  const reasonView = view.reason ? ', r.reason' : ''
  const reasonCols = view.reason ? ', reason' : ''
  const reasonVals = view.reason ? ', NEW.reason' : ''
  const cacheView = cacheEffect ? ', r.cache_saved_micros, r.cache_write_extra_micros' : ''
  const cacheCols = cacheEffect ? ', cache_saved_micros, cache_write_extra_micros' : ''
  const cacheVals = cacheEffect ? ', NEW.cache_saved_micros, NEW.cache_write_extra_micros' : ''
  return `
  -- LEFT JOINs throughout: a row is never hidden by a missing name.
  CREATE VIEW ledger AS
    SELECT r.id, r.ts, r.task_id, nb.name AS batch_id, ${fpTextSql('f.fp')} AS fp,
      nw.name AS worker, l.task_type, l.provider, l.model, r.step, r.input_tokens,
      r.cached_input_tokens, r.cache_write_tokens, r.output_tokens, r.cost_micros,
      r.saved_micros, ${codeToWordSql(codes, 'r.outcome')} AS outcome, r.latency_ms,
      r.status, r.epoch, NULLIF(l.price_version, '') AS price_version,${estimated ? '\n      r.estimated,' : ''}
      -- Not a v2 column: what joins of ledger rows by execution use, so they find them by index.
      r.fp_id${cacheView}${reasonView}
    FROM ledger_rows r
    LEFT JOIN ledger_labels l ON l.id = r.label
    LEFT JOIN fingerprints f ON f.id = r.fp_id
    LEFT JOIN names nw ON nw.id = r.worker
    LEFT JOIN names nb ON nb.id = r.batch;

  -- Rows written to the view by hand (tools, tests) land in ledger_rows, and stay immutable.
  CREATE TRIGGER ledger_insert INSTEAD OF INSERT ON ledger
  BEGIN
    INSERT OR IGNORE INTO names(name) VALUES (NEW.worker);
    INSERT OR IGNORE INTO names(name) SELECT NEW.batch_id WHERE NEW.batch_id IS NOT NULL;
    INSERT OR IGNORE INTO ledger_labels(task_type, provider, model, price_version)
      VALUES (NEW.task_type, NEW.provider, NEW.model, COALESCE(NEW.price_version, ''));
    INSERT OR IGNORE INTO fingerprints(fp) VALUES (${fpKeySql('NEW.fp')});
    INSERT INTO ledger_rows(id, ts, task_id, batch, fp_id, worker, label, step, input_tokens,
      cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, saved_micros, outcome,
      latency_ms, status, epoch${estimated ? ', estimated' : ''}${cacheCols}${reasonCols})
    VALUES (NEW.id, NEW.ts, NEW.task_id, (SELECT id FROM names WHERE name = NEW.batch_id),
      (SELECT id FROM fingerprints WHERE fp = ${fpKeySql('NEW.fp')}),
      (SELECT id FROM names WHERE name = NEW.worker),
      (SELECT id FROM ledger_labels WHERE task_type = NEW.task_type AND provider = NEW.provider
        AND model = NEW.model AND price_version = COALESCE(NEW.price_version, '')),
      NEW.step, COALESCE(NEW.input_tokens, 0), COALESCE(NEW.cached_input_tokens, 0),
      COALESCE(NEW.cache_write_tokens, 0), COALESCE(NEW.output_tokens, 0), NEW.cost_micros,
      NEW.saved_micros, ${wordToCodeSql(codes, 'NEW.outcome')}, NEW.latency_ms,
      NEW.status, NEW.epoch${estimated ? ', COALESCE(NEW.estimated, 0)' : ''}${cacheVals}${reasonVals});
  END;
  CREATE TRIGGER ledger_immutable_update INSTEAD OF UPDATE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;
  CREATE TRIGGER ledger_immutable_delete INSTEAD OF DELETE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;`
}

// What a completed claim's execution cost, as ledger-record.ts's ORIGINAL_COST_SQL (v2) found it:
// the latest 'executed' task+epoch of the fingerprint. Stored on the claim from now on, so a reuse
// reads it instead of searching the ledger.
const ORIGINAL_COSTS_V2 = `
  CREATE TEMP TABLE exec_cost (fp TEXT PRIMARY KEY, cost INTEGER);
  INSERT INTO temp.exec_cost
    SELECT l.fp, CASE WHEN SUM(l.cost_micros IS NULL AND l.input_tokens + l.output_tokens > 0) > 0
      THEN NULL ELSE COALESCE(SUM(l.cost_micros), 0) END
    FROM (SELECT fp, task_id, epoch FROM ledger_v2 WHERE id IN (
            SELECT MAX(id) FROM ledger_v2 WHERE outcome = 'executed' GROUP BY fp)) last
    JOIN ledger_v2 l ON l.fp = last.fp AND l.task_id IS last.task_id AND l.epoch IS last.epoch
    WHERE l.outcome = 'executed'
    GROUP BY l.fp;`

const COPY = `
  INSERT INTO batches(id, name, source, source_hash, state, audit, driver, created_at, updated_at)
    SELECT id, name, source, source_hash, state, audit, driver, created_at, updated_at
    FROM batches_v2 ORDER BY created_at, rowid;

  INSERT INTO fingerprints(fp, state, status, owner, epoch, lease_until, claimed_at, completed_at)
    SELECT ${fpKeySql('fp')}, state, status, owner, epoch, lease_until, claimed_at, completed_at
    FROM claims_v2 ORDER BY rowid;
  INSERT INTO fingerprints(fp, type, payload, key, steps, provider, model)
    SELECT ${fpKeySql('fp')}, type, payload, key, steps, provider, model FROM tasks_v2
    WHERE id IN (SELECT MIN(id) FROM tasks_v2 GROUP BY fp) ORDER BY id
    ON CONFLICT(fp) DO UPDATE SET type = excluded.type, payload = excluded.payload,
      key = excluded.key, steps = excluded.steps, provider = excluded.provider,
      model = excluded.model;
  INSERT OR IGNORE INTO fingerprints(fp) SELECT DISTINCT ${fpKeySql('fp')} FROM ledger_v2;

  CREATE TEMP TABLE fp_ids (fp TEXT PRIMARY KEY, id INTEGER NOT NULL);
  INSERT INTO temp.fp_ids SELECT ${fpTextSql('fp')}, id FROM fingerprints;

  -- Identical bodies become one row: a reuse copied its original's result word for word.
  INSERT INTO results(body)
    SELECT result FROM claims_v2 WHERE result IS NOT NULL
    UNION SELECT result FROM tasks_v2 WHERE result IS NOT NULL;
  CREATE TEMP TABLE result_ids (body TEXT PRIMARY KEY, id INTEGER NOT NULL);
  INSERT INTO temp.result_ids SELECT body, id FROM results;

  ${ORIGINAL_COSTS_V2}
  UPDATE fingerprints SET
    result_id = (SELECT r.id FROM claims_v2 c JOIN temp.result_ids r ON r.body = c.result
                 WHERE c.fp = ${fpTextSql('fingerprints.fp')}),
    cost_micros = CASE WHEN state = 'completed' THEN
      (SELECT cost FROM temp.exec_cost WHERE fp = ${fpTextSql('fingerprints.fp')}) END
  WHERE state IS NOT NULL;

  INSERT INTO task_queue(id, batch, seq, fp_id, status, attempts, worker, lease_until, result_id,
      error, started_at, finished_at)
    SELECT t.id, b.key, t.seq, m.id, ${wordToCodeSql(TASK_STATUS_CODES, 't.status')}, t.attempts,
      t.worker, t.lease_until, (SELECT r.id FROM temp.result_ids r WHERE r.body = t.result),
      t.error, t.started_at, t.finished_at
    FROM tasks_v2 t JOIN batches b ON b.id = t.batch_id JOIN temp.fp_ids m ON m.fp = t.fp
    ORDER BY t.id;

  UPDATE batches SET first_task = (SELECT MIN(id) FROM task_queue WHERE batch = batches.key),
    ${COUNTS.map(
      (s) =>
        `${s} = (SELECT COUNT(*) FROM task_queue WHERE batch = batches.key AND status = ${TASK_STATUS_CODES[s as 'queued']})`,
    ).join(',\n    ')};

  INSERT OR IGNORE INTO names(name) SELECT DISTINCT worker FROM ledger_v2;
  INSERT OR IGNORE INTO names(name) SELECT DISTINCT batch_id FROM ledger_v2
    WHERE batch_id IS NOT NULL;
  INSERT OR IGNORE INTO ledger_labels(task_type, provider, model, price_version)
    SELECT DISTINCT task_type, provider, model, COALESCE(price_version, '') FROM ledger_v2;
  INSERT INTO ledger_rows(id, ts, task_id, batch, fp_id, worker, label, step, input_tokens,
      cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, saved_micros, outcome,
      latency_ms, status, epoch)
    SELECT l.id, l.ts, l.task_id, nb.id, m.id, nw.id, lb.id, l.step, l.input_tokens,
      l.cached_input_tokens, l.cache_write_tokens, l.output_tokens, l.cost_micros, l.saved_micros,
      ${wordToCodeSql(V5_OUTCOME_CODES, 'l.outcome')}, l.latency_ms, l.status, l.epoch
    FROM ledger_v2 l
    JOIN temp.fp_ids m ON m.fp = l.fp
    JOIN names nw ON nw.name = l.worker
    LEFT JOIN names nb ON nb.name = l.batch_id
    JOIN ledger_labels lb ON lb.task_type = l.task_type AND lb.provider = l.provider
      AND lb.model = l.model AND lb.price_version = COALESCE(l.price_version, '')
    ORDER BY l.id;

  DROP TABLE temp.fp_ids;
  DROP TABLE temp.result_ids;
  DROP TABLE temp.exec_cost;`

/** Migration 5: the v2 tables moved aside, the compact ones filled from them, the v2 ones dropped. */
export const COMPACT_STORAGE_SQL = `
  DROP TRIGGER ledger_immutable_update;
  DROP TRIGGER ledger_immutable_delete;
  ALTER TABLE ledger RENAME TO ledger_v2;
  ALTER TABLE claims RENAME TO claims_v2;
  ALTER TABLE tasks RENAME TO tasks_v2;
  ALTER TABLE batches RENAME TO batches_v2;
  ${BATCHES}
  ${TABLES}
  ${COPY}
  DROP TABLE ledger_v2;
  DROP TABLE claims_v2;
  DROP TABLE tasks_v2;
  DROP TABLE batches_v2;
  ${INDEXES}
  ${TRIGGERS}
  ${COMPAT_VIEWS}`
