// The answers' statements (results.ts runs them), by name: what
// test/unit/engine/db/query-plans.test.ts checks, through db/hot-queries.ts.
import { TASK_STATUSES } from '../db/codes'

/** Tasks per page of a results export: one statement, the connection free in between. */
export const RESULTS_PAGE_ROWS = 500

const ANSWER_COLUMNS = `t.id, t.seq, t.status, t.error, f.type, f.key, r.body,
  f.cost_micros AS fp_cost, t.result_id IS NOT NULL AND t.result_id = f.result_id AS current_result`

export const RESULTS_SQL = {
  // A batch's tasks are the id range from first_task on (queue-batches.ts): a page is a range of
  // the primary key in input order, never a sort. (+t.batch: the range is the way in.)
  page: `
    SELECT ${ANSWER_COLUMNS}
    FROM task_queue t JOIN fingerprints f ON f.id = t.fp_id LEFT JOIN results r ON r.id = t.result_id
    WHERE t.id > @after AND t.id < @end AND +t.batch = @batch
    ORDER BY t.id LIMIT ${RESULTS_PAGE_ROWS}`,
  batchRange: `
    SELECT key, id, first_task AS first, first_task + ${TASK_STATUSES.join(' + ')} AS end
    FROM batches WHERE id = ?`,
  latestBatch: 'SELECT id FROM batches ORDER BY created_at DESC, key DESC LIMIT 1',
  allBatches: 'SELECT id FROM batches ORDER BY created_at, key',
  // The console's task detail: one task, its batch id and content.
  task: `
    SELECT ${ANSWER_COLUMNS}, t.fp_id, b.id AS batch_id, b.agents, f.payload, f.params, f.steps,
      f.provider, f.model
    FROM task_queue t JOIN batches b ON b.key = t.batch JOIN fingerprints f ON f.id = t.fp_id
    LEFT JOIN results r ON r.id = t.result_id
    WHERE t.id = ?`,
  // Its ledger rows, found through the execution's index (ledger_rows_fp) and then by task.
  taskLedger: `
    SELECT id, ts, step, outcome, model, reason, input_tokens, cached_input_tokens,
      cache_write_tokens, output_tokens, cost_micros, saved_micros, latency_ms, status, epoch, worker
    FROM ledger WHERE fp_id = ? AND task_id = ? ORDER BY id LIMIT 500`,
  // Its execution's journal, by the primary key (fp_id, idx); bounded as the ledger rows are.
  taskJournal: `
    SELECT idx, kind, state, ts, body, cost_micros FROM call_journal
    WHERE fp_id = ? ORDER BY idx LIMIT 500`,
  // `pacer run`'s closing line: the batch's tasks whose answer the output cap cut short. A body
  // is JSON.stringify's, where the key is written as it is: the substring test spares parsing
  // every other answer (json_extract was ~3 µs a task at the end of a big batch).
  truncatedInBatch: `
    SELECT COUNT(*) AS n FROM task_queue t JOIN results r ON r.id = t.result_id
    WHERE t.batch = (SELECT key FROM batches WHERE id = ?) AND t.result_id IS NOT NULL
      AND instr(r.body, '"truncated"') > 0 AND json_extract(r.body, '$.truncated') = 1`,
} as const
