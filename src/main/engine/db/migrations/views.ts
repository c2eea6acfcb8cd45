// The views migrations 5 to 9 make over the compact tables (005-compact-storage.ts), each as it
// shipped: a later migration drops a view and makes it again with its own columns and codes.
import { codeToWordSql, fpKeySql, fpTextSql, TASK_STATUS_CODES, wordToCodeSql } from '../codes'

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
 * Migration 5: the v5 codes; 6: with the estimated flag; 7: with what cache reads saved and
 * writes cost extra; 8: with the timeout code; 9: with the replayed code and the reason column;
 * 20: with what the batch discount saved.
 */
export function ledgerViewSql(view: {
  codes: Readonly<Record<string, number>>
  estimated: boolean
  cacheEffect: boolean
  /** Migration 9: why a row is what it is (a duplicate's 'answer lost'). */
  reason?: boolean
  /** Migration 20: what the batch APIs' discount saved on a row priced at the batch rate. */
  batchSaved?: boolean
}): string {
  const { codes, estimated, cacheEffect } = view
  const reasonView = view.reason ? ', r.reason' : ''
  const reasonCols = view.reason ? ', reason' : ''
  const reasonVals = view.reason ? ', NEW.reason' : ''
  const batchView = view.batchSaved ? ', r.batch_saved_micros' : ''
  const batchCols = view.batchSaved ? ', batch_saved_micros' : ''
  const batchVals = view.batchSaved ? ', NEW.batch_saved_micros' : ''
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
      r.fp_id${cacheView}${reasonView}${batchView}
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
      latency_ms, status, epoch${estimated ? ', estimated' : ''}${cacheCols}${reasonCols}${batchCols})
    VALUES (NEW.id, NEW.ts, NEW.task_id, (SELECT id FROM names WHERE name = NEW.batch_id),
      (SELECT id FROM fingerprints WHERE fp = ${fpKeySql('NEW.fp')}),
      (SELECT id FROM names WHERE name = NEW.worker),
      (SELECT id FROM ledger_labels WHERE task_type = NEW.task_type AND provider = NEW.provider
        AND model = NEW.model AND price_version = COALESCE(NEW.price_version, '')),
      NEW.step, COALESCE(NEW.input_tokens, 0), COALESCE(NEW.cached_input_tokens, 0),
      COALESCE(NEW.cache_write_tokens, 0), COALESCE(NEW.output_tokens, 0), NEW.cost_micros,
      NEW.saved_micros, ${wordToCodeSql(codes, 'NEW.outcome')}, NEW.latency_ms,
      NEW.status, NEW.epoch${estimated ? ', COALESCE(NEW.estimated, 0)' : ''}${cacheVals}${reasonVals}${batchVals});
  END;
  CREATE TRIGGER ledger_immutable_update INSTEAD OF UPDATE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;
  CREATE TRIGGER ledger_immutable_delete INSTEAD OF DELETE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable'); END;`
}
