// The ledger's maintained rollups: sums per task type and time bucket (ledger_rollup) and per batch
// (ledger_batch_rollup), folded in as rows are appended, so a rollup reads a few hundred rows
// whatever the size of the ledger. Tables: db/migrations/004-ledger-rollups.ts. How reads
// combine them: ledger-rollup-plans.ts.
//
// What a bucket holds, so that any run of buckets adds up exactly:
// - row sums (tokens, cost, reuses, throttles...) in the bucket of the row's ts;
// - each execution (fp, task id, epoch, task type) that has a 'duplicate' row counted once as a
//   duplicate, in the bucket of its latest row, and what it wasted in the buckets of its rows
//   (earlier rows too, once it turns);
// - each task's other executions (the same task resumed or taken over at a later epoch, after a
//   Ctrl-C or a kill) counted once together as executed, in the bucket of their latest row: a
//   task of a file is one run however many times its batch was resumed. (Without a task id, the
//   epoch still tells executions apart.)
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
  // Migration 6.
  'estimated_calls',
  // Migration 7.
  'cache_saved_micros',
  'cache_write_extra_micros',
  // Migration 9: calls the journal answered.
  'replayed',
  // Migration 20: calls answered through a provider batch, their cost, what the discount saved.
  'batch_calls',
  'batch_cost_micros',
  'batch_saved_micros',
] as const

/** A folded 'executed' or 'duplicate' row, as execution-level counting needs it. */
export interface PriorRow {
  epoch: number | null
  ts: number
  batchId: string | null
  /** 1 for a 'duplicate' row. */
  dup: number
  cost: number | null
}

/** A row of the page being folded, with its execution's identity. */
export interface RunRow extends PriorRow {
  /** The fingerprint's row id (ledger_rows.fp_id). */
  fp: number
  taskId: number | null
  epoch: number | null
  taskType: string
}

/** Start of the bucket of width `span` holding `ts` (floor, also below 0). */
export function bucketOf(ts: number, span: number): number {
  return ts - (((ts % span) + span) % span)
}

// A call paid again because its first answer was lost (runner/call.ts ANSWER_LOST) is waste of its
// own: not an execution (the task's run is the execution that sent it again), so it is left out
// of execution-level counting and its cost goes straight into what was wasted.
export const RUN_ROW = `outcome IN ('executed', 'duplicate') AND reason IS NULL`
export const LOST_WASTED = `COALESCE(SUM(CASE WHEN reason = 'answer lost' THEN cost_micros END), 0)`

/** A row answered through a provider batch: priced at the batch rate (batch-rates.ts). */
export const VIA_BATCH = `price_version LIKE '%+batch'`

const ROW_SUMS = `
  COUNT(*), SUM(outcome = 'reused'), SUM(input_tokens), SUM(cached_input_tokens),
  SUM(cache_write_tokens), SUM(output_tokens), COALESCE(SUM(cost_micros), 0),
  SUM(cost_micros IS NOT NULL AND input_tokens + output_tokens > 0),
  SUM(cost_micros IS NULL AND input_tokens + output_tokens > 0),
  COALESCE(SUM(CASE WHEN outcome IN ('reused', 'replayed') THEN saved_micros END), 0),
  SUM(outcome = 'reused' AND saved_micros IS NULL), SUM(outcome = 'throttled'),
  SUM(outcome IN ('error', 'timeout')), SUM(outcome = 'abandoned'), 0, 0,
  SUM(CASE WHEN outcome IN ('executed', 'duplicate') AND reason IS NULL THEN input_tokens ELSE 0 END),
  ${LOST_WASTED},
  SUM(estimated),
  COALESCE(SUM(cache_saved_micros), 0), COALESCE(SUM(cache_write_extra_micros), 0),
  SUM(outcome = 'replayed'),
  SUM(${VIA_BATCH} AND input_tokens + output_tokens > 0),
  COALESCE(SUM(CASE WHEN ${VIA_BATCH} THEN cost_micros END), 0), COALESCE(SUM(batch_saved_micros), 0)`

// A page's row sums, added up by SQLite (no row crosses into JS for them) per 15 s bucket, task
// type and batch: a few dozen rows for thousands of ledger rows.
const PAGE_SUMS_SQL = `
  SELECT ts - ((ts % ${FINE_MS}) + ${FINE_MS}) % ${FINE_MS}, task_type, batch_id, ${ROW_SUMS}
  FROM ledger WHERE id > @covered AND id <= @upto
  GROUP BY 1, 2, 3`

// What execution-level counting needs of a page's 'executed' and 'duplicate' rows.
const PAGE_RUN_ROWS_SQL = `
  SELECT fp_id AS fp, task_id AS taskId, epoch, task_type AS taskType, ts, batch_id AS batchId,
    outcome = 'duplicate' AS dup, cost_micros AS cost
  FROM ledger
  WHERE id > @covered AND id <= @upto AND ${RUN_ROW}
  ORDER BY id`

// The rows folded before the page of the tasks on it ([fp, task id, epoch, task type] each; every
// epoch of a task, only the one given without a task id): one statement per page, each task's few
// rows found through ledger_rows_fp.
const PRIOR_SQL = `
  SELECT j.key AS run, l.epoch, l.ts, l.batch_id AS batchId, l.outcome = 'duplicate' AS dup,
    l.cost_micros AS cost
  FROM json_each(@runs) j
  JOIN ledger l ON l.fp_id = j.value ->> 0 AND l.task_id IS j.value ->> 1
    AND (l.task_id IS NOT NULL OR l.epoch IS j.value ->> 2) AND l.task_type = j.value ->> 3
  WHERE l.id <= @covered AND l.${RUN_ROW}`

/** The fold's reads of the ledger, by name (db/hot-queries.ts checks they find rows by index). */
export const FOLD_SQL: Readonly<Record<string, string>> = {
  pageSums: PAGE_SUMS_SQL,
  pageRunRows: PAGE_RUN_ROWS_SQL,
  prior: PRIOR_SQL,
}

const upsertSql = (table: string, keys: string[]) => `
  INSERT INTO ${table} (${[...keys, ...SUM_COLUMNS].join(', ')})
  VALUES (${[...keys, ...SUM_COLUMNS].map(() => '?').join(', ')})
  ON CONFLICT (${keys.join(', ')}) DO UPDATE SET
    ${SUM_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`

/** Rows appended through one connection between two folds. */
const FOLD_EVERY = 1000
// Rows per fold transaction: a first fold of a big ledger commits as it goes, so other writers
// get their turn in between.
const PAGE_ROWS = 20_000
// Beyond this many rows not folded in, a read first tries to fold them (if the lock is free).
const READ_FOLD_ROWS = 20_000

export const EXECUTED = SUM_COLUMNS.indexOf('executed')
export const DUPLICATES = SUM_COLUMNS.indexOf('duplicates')
export const WASTED = SUM_COLUMNS.indexOf('wasted_micros')

/** Where a change lands: a time bucket of one span, or a batch; and the task type. */
export type RollupKey =
  | { table: 'time'; span: number; bucket: number; taskType: string }
  | { table: 'batch'; batchId: string; taskType: string }

/** Changes to rollup rows, one array of sums (SUM_COLUMNS' order) per row changed. */
export class RollupDeltas {
  readonly #byKey = new Map<string, { key: RollupKey; sums: number[] }>()

  /** The sums to add at a rollup row (created at zero). */
  at(key: RollupKey): number[] {
    const id =
      key.table === 'time'
        ? `t${key.span}\u0000${key.bucket}\u0000${key.taskType}`
        : `b${key.batchId}\u0000${key.taskType}`
    let d = this.#byKey.get(id)
    if (!d) {
      d = { key, sums: new Array<number>(SUM_COLUMNS.length).fill(0) }
      this.#byKey.set(id, d)
    }
    return d.sums
  }

  /** Every change that is not all zeros (an execution that moved within one bucket). */
  *entries(): Generator<{ key: RollupKey; sums: number[] }> {
    for (const d of this.#byKey.values()) if (d.sums.some((v) => v !== 0)) yield d
  }
}

/**
 * Keeps the rollup tables in step with the ledger. Rows are folded in by id, a page at a time: the
 * writer folds every FOLD_EVERY rows it appends, and opening a ledger folds whatever it holds that
 * is not folded yet: all of it, once, on a database from before the rollups. A read adds what is
 * not folded yet (rows another process appended since its last fold) to what it read, computed the
 * same way (`pending`), so it never takes the write lock. Folding each row in its own insert cost
 * three times the insert; per page, SQLite sums the rows and only each execution's rows cross into
 * JS. Rows written by anything that does not fold (an older Pacer left open during an upgrade, a
 * bulk insert) are folded the same way, later.
 */
export class LedgerRollups {
  readonly #db: Database.Database
  readonly #covered: Database.Statement<[], { coveredId: number }>
  readonly #maxId: Database.Statement<[], { maxId: number }>
  readonly #pageSums: Database.Statement<[{ covered: number; upto: number }], unknown[]>
  readonly #runRows: Database.Statement<[{ covered: number; upto: number }], RunRow>
  readonly #prior: Database.Statement<
    [{ runs: string; covered: number }],
    PriorRow & { run: number }
  >
  readonly #foldPage: () => boolean
  #appended = 0

  readonly #foldEvery: number

  /** `foldEvery`: rows appended through this connection between two folds. */
  constructor(db: Database.Database, foldEvery = FOLD_EVERY) {
    if (!Number.isSafeInteger(foldEvery) || foldEvery < 1) {
      throw new TypeError(`foldEvery must be a positive integer of rows, got ${foldEvery}`)
    }
    this.#db = db
    this.#foldEvery = foldEvery
    this.#covered = db.prepare('SELECT covered_id AS coveredId FROM ledger_rollup_state')
    this.#maxId = db.prepare('SELECT COALESCE(MAX(id), 0) AS maxId FROM ledger')
    this.#pageSums = db.prepare<[{ covered: number; upto: number }], unknown[]>(PAGE_SUMS_SQL).raw()
    this.#runRows = db.prepare(PAGE_RUN_ROWS_SQL)
    this.#prior = db.prepare(PRIOR_SQL)
    const upsert = {
      time: db.prepare(upsertSql('ledger_rollup', ['span', 'bucket', 'task_type'])),
      batch: db.prepare(upsertSql('ledger_batch_rollup', ['batch_id', 'task_type'])),
    }
    const setCovered = db.prepare('UPDATE ledger_rollup_state SET covered_id = ?')
    const fold = db.transaction((): boolean => {
      const covered = this.#coveredId()
      const maxId = this.#maxId.get()?.maxId ?? 0
      if (covered >= maxId) return false
      const upto = Math.min(maxId, covered + PAGE_ROWS)
      for (const { key, sums } of this.#deltas(covered, upto).entries()) {
        if (key.table === 'time') upsert.time.run(key.span, key.bucket, key.taskType, ...sums)
        else upsert.batch.run(key.batchId, key.taskType, ...sums)
      }
      setCovered.run(upto)
      return upto < maxId
    })
    // IMMEDIATE: the write lock before the first read, so no other writer folds the same page.
    this.#foldPage = () => fold.immediate()
    this.#tryFold()
  }

  /** Notes a row just appended through this connection; folds every `foldEvery` of them. */
  appended(): void {
    if (++this.#appended >= this.#foldEvery && this.#tryFold()) this.#appended = 0
  }

  /** Before a read: folds the rows missing from the rollups if they are many and the lock free. */
  relieve(): void {
    if ((this.#maxId.get()?.maxId ?? 0) - this.#coveredId() > READ_FOLD_ROWS) this.#tryFold()
  }

  /**
   * What the rows not folded in yet add to the rollups, for a read to merge into what it read
   * (in the same read transaction); null when there are none. Computed, never written.
   */
  pending(): RollupDeltas | null {
    const covered = this.#coveredId()
    const maxId = this.#maxId.get()?.maxId ?? 0
    return covered >= maxId ? null : this.#deltas(covered, maxId)
  }

  /**
   * Folds in every row not folded in yet, a page per write transaction, if the write lock is free
   * this instant (or already ours); false, folding nothing more, if another process holds it. No
   * caller waits for the lock: not a read, and not the append that happens to be the thousandth
   * (its row is written; the fold is tried again on the next).
   */
  #tryFold(): boolean {
    // A database opened read only is read as it is: reads add what is not folded yet (pending).
    if (this.#db.readonly) return false
    const wait = this.#db.pragma('busy_timeout', { simple: true }) as number
    this.#db.pragma('busy_timeout = 0')
    try {
      while (this.#foldPage()) {
        // next page
      }
      return true
    } catch (err) {
      if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) return false
      throw err
    } finally {
      this.#db.pragma(`busy_timeout = ${wait}`)
    }
  }

  #coveredId(): number {
    return this.#covered.get()?.coveredId ?? 0
  }

  /** Everything the rows (covered, upto] change, row sums and executions alike. */
  #deltas(covered: number, upto: number): RollupDeltas {
    const deltas = new RollupDeltas()
    const page = { covered, upto }
    const groups = this.#pageSums.all(page) as [number, string, string | null, ...number[]][]
    for (const [bucket, taskType, batchId, ...sums] of groups) {
      addInto(deltas.at({ table: 'time', span: FINE_MS, bucket, taskType }), sums)
      const hour = bucketOf(bucket, COARSE_MS)
      addInto(deltas.at({ table: 'time', span: COARSE_MS, bucket: hour, taskType }), sums)
      if (batchId !== null) addInto(deltas.at({ table: 'batch', batchId, taskType }), sums)
    }
    const rows = this.#runRows.all(page)
    const runs = priorRuns(rows, (json) => this.#prior.all({ runs: json, covered }))
    countExecutions(rows, runs, deltas)
    return deltas
  }
}

function addInto(into: number[], from: readonly number[]): void {
  for (let i = 0; i < from.length; i++) into[i]! += from[i]!
}

const keyOf = (parts: readonly (string | number | null)[]) => parts.join('\u0000')

/** The task a row belongs to: its epochs together, unless it has no task id. */
export const taskKey = (r: RunRow) =>
  keyOf([r.fp, r.taskId, r.taskId === null ? r.epoch : null, r.taskType])

/** Each task on the page, with its rows folded before it. */
export function priorRuns(
  rows: readonly RunRow[],
  query: (runsJson: string) => (PriorRow & { run: number })[],
): Map<string, PriorRow[]> {
  const ids = new Map<string, [number, number | null, number | null, string]>()
  for (const r of rows) ids.set(taskKey(r), [r.fp, r.taskId, r.epoch, r.taskType])
  const keys = [...ids.keys()]
  const runs = new Map<string, PriorRow[]>(keys.map((k) => [k, []]))
  if (keys.length > 0) {
    for (const p of query(JSON.stringify([...ids.values()]))) runs.get(keys[p.run]!)!.push(p)
  }
  return runs
}

/** The execution-level changes of a page's rows, in id order. */
function countExecutions(
  rows: readonly RunRow[],
  runs: Map<string, PriorRow[]>,
  deltas: RollupDeltas,
): void {
  for (const row of rows) {
    const prior = runs.get(taskKey(row))!
    const { taskType, batchId } = row
    for (const span of [FINE_MS, COARSE_MS]) {
      countExecution(row, prior, (ts) =>
        deltas.at({ table: 'time', span, bucket: bucketOf(ts, span), taskType }),
      )
    }
    if (batchId !== null) {
      const sums = deltas.at({ table: 'batch', batchId, taskType })
      countExecution(
        row,
        prior.filter((p) => p.batchId === batchId),
        () => sums,
      )
    }
    prior.push(row)
  }
}

/**
 * The execution-level change one 'executed' or 'duplicate' row makes, given its task's earlier
 * rows: what the task counts for with the row, less what it counted for without it.
 */
export function countExecution(
  row: PriorRow,
  prior: readonly PriorRow[],
  place: (ts: number) => number[],
) {
  countTask(prior, place, -1)
  countTask([...prior, row], place, 1)
}

/**
 * What one task's rows count for: each execution (epoch) with a 'duplicate' row is a duplicate at
 * its latest row, every row of it wasted; the others are together one execution, at the latest row
 * among them.
 */
function countTask(rows: readonly PriorRow[], place: (ts: number) => number[], sign: 1 | -1) {
  if (rows.length === 0) return
  const byEpoch = new Map<number | null, PriorRow[]>()
  for (const r of rows) {
    const same = byEpoch.get(r.epoch)
    if (same) same.push(r)
    else byEpoch.set(r.epoch, [r])
  }
  let executedAt: number | null = null
  for (const same of byEpoch.values()) {
    let last = same[0]!.ts
    for (const r of same) if (r.ts > last) last = r.ts
    if (same.some((r) => r.dup === 1)) {
      place(last)[DUPLICATES]! += sign
      for (const r of same) place(r.ts)[WASTED]! += sign * (r.cost ?? 0)
    } else if (executedAt === null || last > executedAt) {
      executedAt = last
    }
  }
  if (executedAt !== null) place(executedAt)[EXECUTED]! += sign
}
