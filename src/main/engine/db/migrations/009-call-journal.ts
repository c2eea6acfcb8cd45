// Migration 9, "the call journal": every effect of an execution (a provider call, an agent's
// ctx.step) kept by execution fingerprint and call index until the execution's result is stored,
// so a rerun (resume, takeover, retry) replays what was answered instead of paying for it again
// (journal.ts). Ledger rows get the 'replayed' outcome and a reason (a duplicate's 'answer lost');
// tasks get their log lines (task-log.ts). The rollups count replayed calls.
import type { Migration } from './migration'
import { ledgerViewSql, V8_OUTCOME_CODES } from './views'

// This migration's codes: a code added later must not change the view it made.
const V9_OUTCOME_CODES = { ...V8_OUTCOME_CODES, replayed: 8 }

const CALL_JOURNAL_SQL = `
  -- One row per effect of an execution still under way: written as an intent (state 0) before a
  -- request goes out, answered (state 1) in the transaction of its ledger row. Deleted when the
  -- execution's result is stored: the ledger keeps the record of each call, the journal only what
  -- a rerun needs.
  CREATE TABLE call_journal (
    fp_id       INTEGER NOT NULL,          -- fingerprints.id: the execution's identity
    idx         INTEGER NOT NULL,          -- 1, 2, ... in the order the execution made them
    kind        INTEGER NOT NULL,          -- 1 provider call, 2 step (journal.ts EFFECT_KINDS)
    hash        BLOB NOT NULL,             -- the exact request's digest (journal.ts requestHash)
    state       INTEGER NOT NULL,          -- 0 sent (no answer yet), 1 answered
    epoch       INTEGER,                   -- the claim epoch that wrote it
    task_id     INTEGER,
    ts          INTEGER NOT NULL,
    body        TEXT,                      -- answered: the answer as JSON (journal.ts)
    cost_micros INTEGER,                   -- answered call: what it cost; NULL = unpriced
    PRIMARY KEY (fp_id, idx)
  ) WITHOUT ROWID;

  -- A task's log lines (an agent's ctx.log, replay divergences, answers lost), bounded per task.
  CREATE TABLE task_log (
    task_id INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    ts      INTEGER NOT NULL,
    kind    INTEGER NOT NULL,              -- task-log.ts LOG_KINDS
    message TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
  ) WITHOUT ROWID;

  ALTER TABLE ledger_rows ADD COLUMN reason TEXT;
  ALTER TABLE ledger_rollup ADD COLUMN replayed INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE ledger_batch_rollup ADD COLUMN replayed INTEGER NOT NULL DEFAULT 0;

  -- Its INSTEAD OF triggers go with the view.
  DROP VIEW ledger;
  ${ledgerViewSql({ codes: V9_OUTCOME_CODES, estimated: true, cacheEffect: true, reason: true })}`

export const callJournalMigration: Migration = {
  version: 9,
  name: 'call journal: each effect of an execution kept for replay; replayed ledger rows; task logs',
  sql: CALL_JOURNAL_SQL,
}
