// The team ledger's stream entries: one per local ledger row, as flat field/value strings (what
// XADD takes and XRANGE gives back). Each carries the machine and source it came from, the local
// row id, the row's fields, and what the row adds to the execution-level counts as the local
// ledger computes them (ledger-rollups.ts executionDeltas): summing entries is then the local
// summary, with no execution's rows kept in memory by a reader of a million of them.
import type Database from 'better-sqlite3'
import type { LedgerRow } from '../ledger'
import { ROW_COLUMNS } from '../ledger-queries'
import { executionDeltas, FOLD_SQL, type RunRow } from '../ledger-rollups'

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

/** Entry fields in the order they are written; names as the CSV's columns where there is one. */
const FIELDS: readonly (readonly [string, keyof TeamRow, Kind])[] = [
  ['machine', 'machine', 'text'],
  ['source', 'source', 'text'],
  ['row', 'id', 'int'],
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

/** Strings per entry (field, value, ...). */
export const ENTRY_STRINGS = FIELDS.length * 2

const BY_NAME = new Map(FIELDS.map((f) => [f[0], f] as const))
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
export class TeamLedgerEntryError extends Error {}

/** One row as XADD's field/value arguments (null as an empty string). */
export function encodeEntry(row: TeamRow): string[] {
  const out = new Array<string>(ENTRY_STRINGS)
  let i = 0
  for (const [name, key] of FIELDS) {
    const v = row[key]
    out[i++] = name
    out[i++] = v === null || v === undefined ? '' : String(v)
  }
  return out
}

/** An entry as XRANGE gives it back; unknown fields (a later Pacer's) are left out. */
export function decodeEntry(id: string, flat: readonly string[]): TeamRow {
  const row: Record<string, unknown> = {}
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = BY_NAME.get(flat[i]!)
    if (field) row[field[1]] = valueOf(id, field, flat[i + 1]!)
  }
  for (const field of FIELDS) {
    if (!(field[1] in row)) {
      throw new TeamLedgerEntryError(`team ledger entry ${id}: no field "${field[0]}"`)
    }
  }
  if (!OUTCOMES.has(row.outcome as string)) {
    throw new TeamLedgerEntryError(
      `team ledger entry ${id}: outcome ${JSON.stringify(row.outcome)} is not a ledger outcome`,
    )
  }
  return row as unknown as TeamRow
}

function valueOf(id: string, [name, , kind]: (typeof FIELDS)[number], v: string): unknown {
  if (kind === 'text') return v
  if (v === '') {
    if (kind === 'nullableText' || kind === 'nullableInt') return null
  } else if (kind === 'nullableText') return v
  else if (/^-?\d{1,16}$/.test(v) && Number.isSafeInteger(Number(v))) return Number(v)
  throw new TeamLedgerEntryError(
    `team ledger entry ${id}: field "${name}" must be an integer, got ${JSON.stringify(v)}`,
  )
}

/** The appender's page of local rows (by id; rows are immutable and ids only grow). */
export const ENTRY_PAGE_SQL = `SELECT ${ROW_COLUMNS}, fp_id AS fpId FROM ledger
  WHERE id > @after ORDER BY id LIMIT @limit`

/**
 * Reads local ledger rows after a row id and turns them into team rows, with the execution-level
 * deltas the local rollups would fold for them. Its statements find rows by id and by
 * fingerprint (db/hot-queries.ts).
 */
export class EntryReader {
  readonly #page: Database.Statement
  readonly #prior: Database.Statement
  readonly #maxId: Database.Statement<[], number>

  constructor(db: Database.Database) {
    this.#page = db.prepare(ENTRY_PAGE_SQL)
    this.#prior = db.prepare(FOLD_SQL.prior!)
    this.#maxId = db.prepare<[], number>('SELECT COALESCE(MAX(id), 0) FROM ledger_rows').pluck()
  }

  /** The last committed row id this connection sees. */
  maxId(): number {
    return this.#maxId.get() ?? 0
  }

  /** Up to `limit` rows after `after`, oldest first, each with its machine, source and deltas. */
  rows(after: number, limit: number, machine: string, source: string): TeamRow[] {
    // No snapshot needed between the page and its tasks' earlier rows: rows are immutable, and
    // the earlier ones (id <= after) were all committed before any of the page.
    const rows = this.#page.all({ after, limit }) as (LedgerRow & { fpId: number })[]
    const runs: RunRow[] = []
    const runIndex: number[] = []
    for (const [i, r] of rows.entries()) {
      // RUN_ROW (ledger-rollups.ts): the rows execution-level counting reads.
      if ((r.outcome === 'executed' || r.outcome === 'duplicate') && r.reason === null) {
        runs.push({
          fp: r.fpId,
          taskId: r.taskId,
          epoch: r.epoch,
          taskType: r.taskType,
          ts: r.ts,
          batchId: r.batchId,
          dup: r.outcome === 'duplicate' ? 1 : 0,
          cost: r.costMicros,
        })
        runIndex.push(i)
      }
    }
    const deltas = executionDeltas(
      runs,
      (json) => this.#prior.all({ runs: json, covered: after }) as never,
    )
    const out = rows.map((r): TeamRow => {
      const { fpId: _fpId, ...row } = r
      // An answer paid again after it was lost is waste of its own (ledger-rollups.ts LOST_WASTED).
      const lost = r.reason === 'answer lost' ? (r.costMicros ?? 0) : 0
      return { ...row, machine, source, executed: 0, duplicates: 0, wastedMicros: lost }
    })
    for (const [k, i] of runIndex.entries()) {
      const d = deltas[k]!
      const row = out[i]!
      row.executed = d.executed
      row.duplicates = d.duplicates
      row.wastedMicros += d.wastedMicros
    }
    return out
  }
}
