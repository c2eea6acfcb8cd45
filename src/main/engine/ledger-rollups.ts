// The ledger's maintained rollups: sums per task type and time bucket (ledger_rollup) and per batch
// (ledger_batch_rollup), folded in as rows are appended, so a rollup reads a few hundred rows
// whatever the size of the ledger. Tables: schema.ts, migration 'ledger rollups'. How reads
// combine them: ledger-rollup-plans.ts.
//
// What a bucket holds, so that any run of buckets adds up exactly:
// - row sums (tokens, cost, reuses, throttles...) in the bucket of the row's ts;
// - each execution (fp, task id, epoch, task type) counted once, as executed or as a duplicate, in
//   the bucket of its latest row: a later row moves it, a 'duplicate' row turns it into one;
// - what a duplicate execution wasted in the buckets of its rows (earlier rows too, once it turns).
import type Database from 'better-sqlite3'

/** Bucket widths kept, in ms: fine ones for short ranges and charts, hourly ones for the rest. */
export const FINE_MS = 15_000
export const COARSE_MS = 3_600_000

/** The summed columns of both rollup tables, in their table order. */
export const SUM_COLUMNS = [
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
] as const

/** A folded 'executed' or 'duplicate' row, as execution-level counting needs it. */
interface PriorRow {
  ts: number
  batchId: string | null
  /** 1 for a 'duplicate' row. */
  dup: number
  cost: number | null
}

/** A row of the page being folded, with its execution's identity. */
interface RunRow extends PriorRow {
  fp: string
  taskId: number | null
  epoch: number | null
  taskType: string
}

/** Start of the bucket of width `span` holding `ts` (floor, also below 0). */
export function bucketOf(ts: number, span: number): number {
  return ts - (((ts % span) + span) % span)
}

const ROW_SUMS = `
  COUNT(*), SUM(outcome = 'reused'), SUM(input_tokens), SUM(cached_input_tokens),
  SUM(cache_write_tokens), SUM(output_tokens), COALESCE(SUM(cost_micros), 0),
  SUM(cost_micros IS NOT NULL AND input_tokens + output_tokens > 0),
  SUM(cost_micros IS NULL AND input_tokens + output_tokens > 0),
  COALESCE(SUM(CASE WHEN outcome = 'reused' THEN saved_micros END), 0),
  SUM(outcome = 'reused' AND saved_micros IS NULL), SUM(outcome = 'throttled'),
  SUM(outcome = 'error'), SUM(outcome = 'abandoned'), 0, 0,
  SUM(CASE WHEN outcome IN ('executed', 'duplicate') THEN input_tokens ELSE 0 END), 0`

const addSums = SUM_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')
const sumOf = SUM_COLUMNS.map((c) => `SUM(${c})`).join(', ')

// A page's row sums, added up by SQLite (no row crosses into JS for them) in one pass over its rows,
// per fine bucket, task type and batch; each rollup table is then added from these few rows.
const PAGE_TABLE_SQL = `
  CREATE TEMP TABLE IF NOT EXISTS rollup_page (
    bucket INTEGER NOT NULL, task_type TEXT NOT NULL, batch_id TEXT,
    ${SUM_COLUMNS.map((c) => `${c} INTEGER NOT NULL`).join(', ')})`
const PAGE_SUMS_SQL = `
  INSERT INTO temp.rollup_page
  SELECT ts - ((ts % ${FINE_MS}) + ${FINE_MS}) % ${FINE_MS}, task_type, batch_id, ${ROW_SUMS}
  FROM ledger WHERE id > @covered AND id <= @upto
  GROUP BY 1, 2, 3`
const FOLD_TIME_SQL = (span: number) => `
  INSERT INTO ledger_rollup (span, bucket, task_type, ${SUM_COLUMNS.join(', ')})
  SELECT ${span}, bucket - ((bucket % ${span}) + ${span}) % ${span}, task_type, ${sumOf}
  FROM temp.rollup_page WHERE true
  GROUP BY 2, 3
  ON CONFLICT (span, bucket, task_type) DO UPDATE SET ${addSums}`
const FOLD_BATCH_SQL = `
  INSERT INTO ledger_batch_rollup (batch_id, task_type, ${SUM_COLUMNS.join(', ')})
  SELECT batch_id, task_type, ${sumOf}
  FROM temp.rollup_page WHERE batch_id IS NOT NULL
  GROUP BY 1, 2
  ON CONFLICT (batch_id, task_type) DO UPDATE SET ${addSums}`

// What execution-level counting needs of a page's 'executed' and 'duplicate' rows.
const PAGE_RUN_ROWS_SQL = `
  SELECT fp, task_id AS taskId, epoch, task_type AS taskType, ts, batch_id AS batchId,
    outcome = 'duplicate' AS dup, cost_micros AS cost
  FROM ledger
  WHERE id > @covered AND id <= @upto AND outcome IN ('executed', 'duplicate')
  ORDER BY id`

// The rows folded before the page of the executions on it ([fp, task id, epoch, task type] each):
// one statement per page, each execution's few rows found through ledger_fp.
const PRIOR_SQL = `
  SELECT j.key AS run, l.ts, l.batch_id AS batchId, l.outcome = 'duplicate' AS dup,
    l.cost_micros AS cost
  FROM json_each(@runs) j
  JOIN ledger l ON l.fp = j.value ->> 0 AND l.task_id IS j.value ->> 1
    AND l.epoch IS j.value ->> 2 AND l.task_type = j.value ->> 3
  WHERE l.id <= @covered AND l.outcome IN ('executed', 'duplicate')`

const COUNT_TIME_SQL = `
  UPDATE ledger_rollup SET executed = executed + ?, duplicates = duplicates + ?,
    wasted_micros = wasted_micros + ?
  WHERE span = ? AND bucket = ? AND task_type = ?`
const COUNT_BATCH_SQL = `
  UPDATE ledger_batch_rollup SET executed = executed + ?, duplicates = duplicates + ?,
    wasted_micros = wasted_micros + ?
  WHERE batch_id = ? AND task_type = ?`

/** Rows appended through one connection between two folds (reads fold whatever is left first). */
export const FOLD_EVERY = 1000
// Rows per fold transaction: a first fold of a big ledger commits as it goes, so other writers
// get their turn in between.
const PAGE_ROWS = 20_000

/** executed, duplicates, wasted micros: the execution-level change at one rollup row. */
type Counts = [number, number, number]

/**
 * Keeps the rollup tables in step with the ledger. Rows are folded in by id, a page at a time: the
 * writer folds every FOLD_EVERY rows it appends, every rollup read first folds what is left (so a
 * read covers every committed row), and opening a ledger folds whatever it holds that is not
 * folded yet: all of it, once, on a database from before the rollups. Folding each row in its own
 * insert cost three times the insert; per page, SQLite sums the rows and only each execution's
 * rows cross into JS. Rows written by anything that does not fold (an older Pacer left open during
 * an upgrade, a bulk insert) are simply folded later.
 */
export class LedgerRollups {
  readonly #covered: Database.Statement<[], { coveredId: number }>
  readonly #maxId: Database.Statement<[], { maxId: number }>
  readonly #foldPage: () => boolean
  #appended = 0

  constructor(db: Database.Database) {
    this.#covered = db.prepare('SELECT covered_id AS coveredId FROM ledger_rollup_state')
    this.#maxId = db.prepare('SELECT COALESCE(MAX(id), 0) AS maxId FROM ledger')
    db.exec(PAGE_TABLE_SQL)
    const stmts = {
      clearPage: db.prepare('DELETE FROM temp.rollup_page'),
      pageSums: db.prepare(PAGE_SUMS_SQL),
      fine: db.prepare(FOLD_TIME_SQL(FINE_MS)),
      coarse: db.prepare(FOLD_TIME_SQL(COARSE_MS)),
      batch: db.prepare(FOLD_BATCH_SQL),
      runRows: db.prepare<{ covered: number; upto: number }, RunRow>(PAGE_RUN_ROWS_SQL),
      prior: db.prepare<{ runs: string; covered: number }, PriorRow & { run: number }>(PRIOR_SQL),
      countTime: db.prepare(COUNT_TIME_SQL),
      countBatch: db.prepare(COUNT_BATCH_SQL),
      setCovered: db.prepare('UPDATE ledger_rollup_state SET covered_id = ?'),
    }
    const fold = db.transaction((): boolean => {
      const covered = this.#coveredId()
      const maxId = this.#maxId.get()?.maxId ?? 0
      if (covered >= maxId) return false
      const page = { covered, upto: Math.min(maxId, covered + PAGE_ROWS) }
      stmts.clearPage.run()
      stmts.pageSums.run(page)
      stmts.fine.run()
      stmts.coarse.run()
      stmts.batch.run()
      const rows = stmts.runRows.all(page)
      const runs = priorRuns(rows, (json) => stmts.prior.all({ runs: json, covered }))
      const { time, batch } = countExecutions(rows, runs)
      for (const [key, c] of time) if (c.some((v) => v !== 0)) stmts.countTime.run(...c, ...key)
      for (const [key, c] of batch) if (c.some((v) => v !== 0)) stmts.countBatch.run(...c, ...key)
      stmts.setCovered.run(page.upto)
      return page.upto < maxId
    })
    // IMMEDIATE: the write lock before the first read, so no other writer folds the same page.
    this.#foldPage = () => fold.immediate()
    this.catchUp()
  }

  /** Notes a row just appended through this connection; folds every FOLD_EVERY of them. */
  appended(): void {
    if (++this.#appended < FOLD_EVERY) return
    this.catchUp()
  }

  /** Whether committed rows are not folded in yet (checked before every rollup read). */
  stale(): boolean {
    return (this.#maxId.get()?.maxId ?? 0) > this.#coveredId()
  }

  /** Folds in every row not folded in yet, a page per write transaction. */
  catchUp(): void {
    this.#appended = 0
    while (this.#foldPage()) {
      // next page
    }
  }

  #coveredId(): number {
    return this.#covered.get()?.coveredId ?? 0
  }
}

const keyOf = (parts: readonly (string | number | null)[]) => parts.join('\u0000')

/** Each execution on the page, with its rows folded before it. */
function priorRuns(
  rows: readonly RunRow[],
  query: (runsJson: string) => (PriorRow & { run: number })[],
): Map<string, PriorRow[]> {
  const ids = new Map<string, [string, number | null, number | null, string]>()
  for (const r of rows)
    ids.set(keyOf([r.fp, r.taskId, r.epoch, r.taskType]), [r.fp, r.taskId, r.epoch, r.taskType])
  const keys = [...ids.keys()]
  const runs = new Map<string, PriorRow[]>(keys.map((k) => [k, []]))
  if (keys.length > 0)
    for (const p of query(JSON.stringify([...ids.values()]))) runs.get(keys[p.run]!)!.push(p)
  return runs
}

/**
 * The execution-level changes of a page's rows, in id order, per rollup row (time buckets keyed
 * [span, bucket, task type], batches [batch, task type]).
 */
function countExecutions(rows: readonly RunRow[], runs: Map<string, PriorRow[]>) {
  const time = new Map<string, { key: (string | number)[]; c: Counts }>()
  const batch = new Map<string, { key: (string | number)[]; c: Counts }>()
  const at = (into: typeof time, key: (string | number)[]): Counts => {
    const id = keyOf(key)
    let e = into.get(id)
    if (!e) {
      e = { key, c: [0, 0, 0] }
      into.set(id, e)
    }
    return e.c
  }
  for (const row of rows) {
    const prior = runs.get(keyOf([row.fp, row.taskId, row.epoch, row.taskType]))!
    for (const span of [FINE_MS, COARSE_MS]) {
      countExecution(row, prior, (ts) => at(time, [span, bucketOf(ts, span), row.taskType]))
    }
    if (row.batchId !== null) {
      const c = at(batch, [row.batchId, row.taskType])
      countExecution(
        row,
        prior.filter((p) => p.batchId === row.batchId),
        () => c,
      )
    }
    prior.push(row)
  }
  const flat = (m: typeof time) => [...m.values()].map((e) => [e.key, e.c] as const)
  return { time: flat(time), batch: flat(batch) }
}

/**
 * The execution-level change one 'executed' or 'duplicate' row makes, given the execution's earlier
 * rows: the execution moves to the place of its latest row, becomes a duplicate on its first
 * 'duplicate' row (all it cost so far is then wasted), and a duplicate's every row is wasted.
 */
function countExecution(row: PriorRow, prior: readonly PriorRow[], place: (ts: number) => Counts) {
  const EXECUTED = 0
  const DUPLICATES = 1
  const WASTED = 2
  const cost = row.cost ?? 0
  if (prior.length === 0) {
    const c = place(row.ts)
    c[row.dup ? DUPLICATES : EXECUTED] += 1
    if (row.dup) c[WASTED] += cost
    return
  }
  const wasDup = prior.some((p) => p.dup === 1)
  const isDup = wasDup || row.dup === 1
  let lastTs = prior[0]!.ts
  for (const p of prior) if (p.ts > lastTs) lastTs = p.ts
  place(lastTs)[wasDup ? DUPLICATES : EXECUTED] -= 1
  place(Math.max(lastTs, row.ts))[isDup ? DUPLICATES : EXECUTED] += 1
  if (isDup) place(row.ts)[WASTED] += cost
  if (isDup && !wasDup) for (const p of prior) place(p.ts)[WASTED] += p.cost ?? 0
}
