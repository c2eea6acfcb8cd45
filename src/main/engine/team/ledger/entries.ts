// The team ledger's stream entries: one per local ledger row, as flat field/value strings (what
// XADD takes and XRANGE gives back). Each carries the machine and source it came from, the local
// row id, the row's fields, and what the row adds to the execution-level counts as the local
// ledger computes them (ledger-rollups.ts executionDeltas): summing entries is then the local
// summary, with no execution's rows kept in memory by a reader of a million of them.
import type Database from 'better-sqlite3'
import type { LedgerRow } from '../../ledger/ledger'
import {
  countExecution,
  DUPLICATES,
  EXECUTED,
  FOLD_SQL,
  priorRuns,
  SUM_COLUMNS,
  taskKey,
  WASTED,
  type PriorRow,
  type RunRow,
} from '../../ledger/rollups'

/** A ledger row as the team ledger holds it. */
export interface TeamRow extends LedgerRow {
  machine: string
  /** machine/database id: one SQLite file (team-ledger/source.ts). */
  source: string
  /** What this row adds to the counts of executions (−1 when it turns one into a duplicate). */
  executed: number
  duplicates: number
  /** What it adds to what duplicates wasted: earlier rows of its execution too, once it turns. */
  wastedMicros: number
}

type Kind = 'text' | 'nullableText' | 'int' | 'nullableInt'

/**
 * The row's fields in the entry's `data` (a JSON array, in this order; names as the CSV's
 * columns). One field instead of one per column: Redis and the client handle an entry's strings
 * one by one, and 30 of them per row made appends and reads several times slower.
 */
const DATA: readonly (readonly [string, keyof TeamRow, Kind])[] = [
  ['ts', 'ts', 'int'],
  ['task_id', 'taskId', 'nullableInt'],
  ['batch_id', 'batchId', 'nullableText'],
  ['fp', 'fp', 'text'],
  ['worker', 'worker', 'text'],
  ['task_type', 'taskType', 'text'],
  ['provider', 'provider', 'text'],
  ['model', 'model', 'text'],
  ['step', 'step', 'int'],
  ['outcome', 'outcome', 'text'],
  ['input_tokens', 'inputTokens', 'int'],
  ['cached_input_tokens', 'cachedInputTokens', 'int'],
  ['cache_write_tokens', 'cacheWriteTokens', 'int'],
  ['output_tokens', 'outputTokens', 'int'],
  ['cost_micros', 'costMicros', 'nullableInt'],
  ['saved_micros', 'savedMicros', 'nullableInt'],
  ['cache_saved_micros', 'cacheSavedMicros', 'nullableInt'],
  ['cache_write_extra_micros', 'cacheWriteExtraMicros', 'nullableInt'],
  ['latency_ms', 'latencyMs', 'nullableInt'],
  ['status', 'status', 'nullableInt'],
  ['epoch', 'epoch', 'nullableInt'],
  ['price_version', 'priceVersion', 'nullableText'],
  ['estimated', 'estimated', 'int'],
  ['reason', 'reason', 'nullableText'],
  ['executed', 'executed', 'int'],
  ['duplicates', 'duplicates', 'int'],
  ['wasted_micros', 'wastedMicros', 'int'],
]

/** The layout of `data`: a later Pacer that changes it writes another version. */
const LAYOUT = '1'

/** Strings per entry: machine, source, row (the local id), v (the layout), data. */
export const ENTRY_STRINGS = 10

const OUTCOMES = new Set<string>([
  'executed',
  'reused',
  'duplicate',
  'throttled',
  'error',
  'abandoned',
  'timeout',
  'replayed',
])

/** A stream entry that is not one Pacer wrote: named by its id and field. */
class TeamLedgerEntryError extends Error {}

/** An entry as XRANGE gives it back; fields it does not know (a later Pacer's) are left out. */
export function decodeEntry(id: string, flat: readonly string[]): TeamRow {
  const f: Record<string, string> = {}
  // As the appender writes them (in this order), read without a lookup.
  if (flat.length === ENTRY_STRINGS && flat[0] === 'machine' && flat[8] === 'data') {
    f.machine = flat[1]!
    f.source = flat[3]!
    f.row = flat[5]!
    f.v = flat[7]!
    f.data = flat[9]!
  } else for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!
  const bad = (what: string) => new TeamLedgerEntryError(`team ledger entry ${id}: ${what}`)
  if (f.v !== LAYOUT) throw bad(`layout v=${JSON.stringify(f.v)}, this Pacer reads v=${LAYOUT}`)
  const { machine, source } = f
  if (machine === undefined || source === undefined) throw bad('no machine or source')
  const rowId = Number(f.row)
  if (!Number.isSafeInteger(rowId) || rowId < 1) throw bad(`row ${JSON.stringify(f.row)}`)
  let data: unknown
  try {
    data = JSON.parse(f.data ?? '')
  } catch {
    throw bad('data is not JSON')
  }
  if (!Array.isArray(data) || data.length < DATA.length) throw bad('data is not its row')
  const row: Record<string, unknown> = { machine, source, id: rowId }
  // A plain loop: a million entries go through here for one export.
  for (let i = 0; i < DATA.length; i++) {
    const v: unknown = data[i]
    const kind = DATA[i]![2]
    const ok =
      v === null
        ? kind === 'nullableText' || kind === 'nullableInt'
        : typeof v === 'string'
          ? kind === 'text' || kind === 'nullableText'
          : Number.isSafeInteger(v) && (kind === 'int' || kind === 'nullableInt')
    if (!ok) throw bad(`field "${DATA[i]![0]}" is ${JSON.stringify(v)}`)
    row[DATA[i]![1]] = v
  }
  // Entries appended before it was carried have no batch saving: the reader derives it.
  const batchSaved: unknown = data[DATA.length]
  if (batchSaved === null || Number.isSafeInteger(batchSaved)) row.batchSavedMicros = batchSaved
  if (!OUTCOMES.has(row.outcome as string)) {
    throw bad(`outcome ${JSON.stringify(row.outcome)} is not a ledger outcome`)
  }
  return row as unknown as TeamRow
}

// SQL names of the DATA columns but the three deltas, which the appender computes.
const DATA_SQL = DATA.slice(0, -3).map(([name]) => name)

/**
 * The appender's page of local rows (by id; rows are immutable and ids only grow): what
 * execution-level counting needs of each, and its `data` array built by SQLite (json_array), so
 * a row never becomes a JS object on its way to Redis.
 */
export const ENTRY_PAGE_SQL = `SELECT id, fp_id, task_id, epoch, task_type, ts, batch_id,
    outcome, reason, cost_micros, json_array(${DATA_SQL.join(', ')}) AS data, batch_saved_micros
  FROM ledger WHERE id > @after ORDER BY id LIMIT @limit`

type PageRow = [
  id: number,
  fpId: number,
  taskId: number | null,
  epoch: number | null,
  taskType: string,
  ts: number,
  batchId: string | null,
  outcome: string,
  reason: string | null,
  cost: number | null,
  data: string,
  batchSaved: number | null,
]

/** A batch of entries: XADD's field/value strings, ENTRY_STRINGS per entry. */
export interface EntryBatch {
  rows: number
  /** The last row id in it: the cursor once it is appended. */
  last: number
  flat: string[]
}

/**
 * What each 'executed' or 'duplicate' row adds to the execution-level counts, all time buckets
 * together, given the rows folded before the page (`query`: FOLD_SQL.prior): the team ledger's
 * entries carry it, so sums of entries are the local totals.
 */
function executionDeltas(
  rows: readonly RunRow[],
  query: (runsJson: string) => (PriorRow & { run: number })[],
): { executed: number; duplicates: number; wastedMicros: number }[] {
  const runs = priorRuns(rows, query)
  return rows.map((row) => {
    const prior = runs.get(taskKey(row))!
    const sums = new Array<number>(SUM_COLUMNS.length).fill(0)
    countExecution(row, prior, () => sums)
    prior.push(row)
    return { executed: sums[EXECUTED]!, duplicates: sums[DUPLICATES]!, wastedMicros: sums[WASTED]! }
  })
}

/**
 * Reads local ledger rows after a row id as stream entries, with the execution-level deltas the
 * local rollups would fold for them. Its statements find rows by id and by fingerprint
 * (db/hot-queries.ts).
 */
export class EntryReader {
  readonly #page: Database.Statement<[{ after: number; limit: number }], PageRow>
  readonly #prior: Database.Statement
  readonly #maxId: Database.Statement<[], number>

  constructor(db: Database.Database) {
    this.#page = db.prepare<[{ after: number; limit: number }], PageRow>(ENTRY_PAGE_SQL).raw()
    this.#prior = db.prepare(FOLD_SQL.prior!)
    this.#maxId = db.prepare<[], number>('SELECT COALESCE(MAX(id), 0) FROM ledger_rows').pluck()
  }

  /** The last committed row id this connection sees. */
  maxId(): number {
    return this.#maxId.get() ?? 0
  }

  /** Up to `limit` rows after `after`, oldest first, as entries of `machine` and `source`. */
  entries(after: number, limit: number, machine: string, source: string): EntryBatch {
    // No snapshot needed between the page and its tasks' earlier rows: rows are immutable, and
    // the earlier ones (id <= after) were all committed before any of the page.
    const rows = this.#page.all({ after, limit })
    const runs: RunRow[] = []
    for (const [, fp, taskId, epoch, taskType, ts, batchId, outcome, reason, cost] of rows) {
      // RUN_ROW (ledger-rollups.ts): the rows execution-level counting reads.
      if ((outcome === 'executed' || outcome === 'duplicate') && reason === null) {
        const dup = outcome === 'duplicate' ? 1 : 0
        runs.push({ fp, taskId, epoch, taskType, ts, batchId, dup, cost })
      }
    }
    const deltas = executionDeltas(
      runs,
      (json) => this.#prior.all({ runs: json, covered: after }) as never,
    )
    const flat = new Array<string>(rows.length * ENTRY_STRINGS)
    let k = 0
    let i = 0
    for (const [id, , , , , , , outcome, reason, cost, data, batchSaved] of rows) {
      let executed = 0
      let duplicates = 0
      // An answer paid again after it was lost is waste of its own (ledger-rollups.ts LOST_WASTED).
      let wasted = reason === 'answer lost' ? (cost ?? 0) : 0
      if ((outcome === 'executed' || outcome === 'duplicate') && reason === null) {
        const d = deltas[k++]!
        executed = d.executed
        duplicates = d.duplicates
        wasted += d.wastedMicros
      }
      flat[i++] = 'machine'
      flat[i++] = machine
      flat[i++] = 'source'
      flat[i++] = source
      flat[i++] = 'row'
      flat[i++] = String(id)
      flat[i++] = 'v'
      flat[i++] = LAYOUT
      flat[i++] = 'data'
      // After the deltas, what the batch discount saved (migration 20): a reader of layout 1
      // that knows it not leaves it out, one that knows it reads it when it is there.
      flat[i++] =
        `${data.slice(0, -1)},${executed},${duplicates},${wasted},${batchSaved ?? 'null'}]`
    }
    return { rows: rows.length, last: rows.at(-1)?.[0] ?? after, flat }
  }
}
