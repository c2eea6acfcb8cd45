// Every statement that runs once per task, or once per console request, by name: the ones whose
// cost must not grow with the queue or the ledger. test/unit/engine/db/query-plans.test.ts reads
// each one's EXPLAIN QUERY PLAN and fails on a pass over a table that grows with the work. Add a
// statement here when you add a hot one; the SQL stays next to the module that owns its table.
import { AGENTS_SQL } from '../../src/main/engine/agents/registry'
import { CLAIM_SQL } from '../../src/main/engine/claims/claims-sql'
import { JOURNAL_SQL } from '../../src/main/engine/runner/durable/journal'
import { eventsPageSql } from '../../src/main/engine/ledger/queries'
import { rollupPlan } from '../../src/main/engine/ledger/rollup-plans'
import { FOLD_SQL } from '../../src/main/engine/ledger/rollups'
import {
  LEDGER_WRITE_SQL,
  ORIGINAL_COST_SQL,
  OWN_EXECUTION_SQL,
} from '../../src/main/engine/ledger/record'
import { BATCH_SQL } from '../../src/main/engine/queue/batches'
import { FAILURE_SQL } from '../../src/main/engine/queue/failures'
import { TASK_PAGE_FILTERS, TASK_SQL, taskPageSql } from '../../src/main/engine/queue/tasks'
import { RESULTS_SQL } from '../../src/main/engine/results/results-sql'
import { TASK_LOG_SQL } from '../../src/main/engine/runner/durable/task-log'
import { ENTRY_PAGE_SQL } from '../../src/main/engine/team/ledger/entries'
import { BUDGET_SQL } from '../../src/main/engine/pacing/store-sqlite-budget'
import { HISTORY_SQL } from '../../src/main/engine/pacing/history'

const named = (prefix: string, sqls: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(sqls).map(([name, sql]) => [`${prefix}.${name}`, sql]))

export const HOT_QUERIES: Readonly<Record<string, string>> = {
  ...named('tasks', TASK_SQL),
  ...named('batches', BATCH_SQL),
  // Once per batch a process runs (cached), and once when a batch is queued with a module.
  'agents.get': AGENTS_SQL.get,
  'agents.set': AGENTS_SQL.set,
  ...named('claims', CLAIM_SQL),
  // Every admission and release of a partition paced by an announced budget.
  ...named('pacing.budget', BUDGET_SQL),
  // Once a second per busy partition, and the Concurrency view's opening read of the last hour.
  ...named('pacing.history', HISTORY_SQL),
  // `pacer run`'s closing report: one batch's failed tasks, not the queue.
  ...named('failures', FAILURE_SQL),
  ...named('ledger', LEDGER_WRITE_SQL),
  'ledger.originalCost': ORIGINAL_COST_SQL,
  // A task picked again (after a full disk lost its end) looking for its own execution.
  'ledger.ownExecution': OWN_EXECUTION_SQL,
  // The console's pages.
  'console.tasksOfBatch': taskPageSql(TASK_PAGE_FILTERS.batch),
  'console.tasksOfBatchByStatus': taskPageSql(TASK_PAGE_FILTERS.batchAndStatus),
  'console.ledgerPage': eventsPageSql(''),
  'console.ledgerPageOfBatch': eventsPageSql('WHERE batch_id = @batchId'),
  // `pacer results` and the console's task detail: a page of answers, one task and its rows.
  'results.page': RESULTS_SQL.page,
  'results.batchRange': RESULTS_SQL.batchRange,
  'results.task': RESULTS_SQL.task,
  'results.taskLedger': RESULTS_SQL.taskLedger,
  'results.taskJournal': RESULTS_SQL.taskJournal,
  // The rollups' upkeep as rows are appended, and `pacer run`'s closing totals of its batch.
  ...named('rollups', FOLD_SQL),
  // Team mode: the appender's page of rows after its cursor (the earlier rows of their tasks are
  // rollups.prior's statement).
  'teamLedger.page': ENTRY_PAGE_SQL,
  'run.batchTotals': rollupPlan({ batchId: 'b' }).queries[0]!.sql,
  // Every effect of an execution: its intent, its answer, a rerun's read, the drop at completion.
  ...named('journal', JOURNAL_SQL),
  // An agent's ctx.log and the task detail's log.
  ...named('taskLog', TASK_LOG_SQL),
}

/** The tables that grow with the work: no hot statement may read one from end to end. */
export const GROWING_TABLES: readonly string[] = [
  'task_queue',
  'fingerprints',
  'results',
  'ledger_rows',
  'call_journal',
  'task_log',
  'pacing_samples',
  'pacing_pauses',
]
