// The CSV exports: their columns, one line per ledger row ('events') or per task type ('summary'),
// and the events export's page loop.
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type Database from 'better-sqlite3'
import { csvRecords, plainCsvRecords, type CsvColumn } from '../core/csv'
import type { ReadQuery } from '../db/read-worker'
import type { LedgerRow, TypeRollup } from './ledger'
import { microsToUsdString as usd } from '../../../shared/money'
import { batchSavedOf } from './batch-discount'

export const EVENT_COLUMNS: readonly CsvColumn<LedgerRow>[] = [
  { header: 'id', value: (r) => r.id },
  { header: 'ts', value: (r) => r.ts },
  // Finance reads dates, not epoch ms; UTC so the file means the same everywhere.
  { header: 'time_utc', value: (r) => new Date(r.ts).toISOString() },
  { header: 'task_id', value: (r) => r.taskId },
  { header: 'batch_id', value: (r) => r.batchId },
  { header: 'fp', value: (r) => r.fp },
  { header: 'worker', value: (r) => r.worker },
  { header: 'task_type', value: (r) => r.taskType },
  { header: 'provider', value: (r) => r.provider },
  { header: 'model', value: (r) => r.model },
  { header: 'step', value: (r) => r.step },
  { header: 'outcome', value: (r) => r.outcome },
  { header: 'input_tokens', value: (r) => r.inputTokens },
  { header: 'cached_input_tokens', value: (r) => r.cachedInputTokens },
  { header: 'cache_write_tokens', value: (r) => r.cacheWriteTokens },
  { header: 'output_tokens', value: (r) => r.outputTokens },
  { header: 'cost_usd', value: (r) => usd(r.costMicros), numeric: true },
  { header: 'saved_usd', value: (r) => usd(r.savedMicros), numeric: true },
  // Before the last cell: an empty last cell would send every page down the careful path.
  { header: 'cache_saved_usd', value: (r) => usd(r.cacheSavedMicros), numeric: true },
  { header: 'cache_write_extra_usd', value: (r) => usd(r.cacheWriteExtraMicros), numeric: true },
  { header: 'latency_ms', value: (r) => r.latencyMs },
  { header: 'status', value: (r) => r.status },
  { header: 'epoch', value: (r) => r.epoch },
  { header: 'price_version', value: (r) => r.priceVersion },
  // Why the row is what it is, when the outcome alone does not say (a duplicate's 'answer lost').
  { header: 'reason', value: (r) => r.reason },
  // 1: tokens and cost are Pacer's estimate (the provider reported no usage).
  { header: 'estimated', value: (r) => r.estimated },
  // Migration 20, last so column positions hold: a call via batch, its list price minus its cost;
  // 0 on a live call (no discount), empty on an unpriced one.
  { header: 'batch_saved_usd', value: (r) => usd(batchSavedOf(r)), numeric: true },
]

export const SUMMARY_COLUMNS: readonly CsvColumn<TypeRollup>[] = [
  { header: 'task_type', value: (r) => r.taskType },
  { header: 'runs', value: (r) => r.runs },
  { header: 'executed', value: (r) => r.executed },
  { header: 'reused', value: (r) => r.reused },
  { header: 'duplicates', value: (r) => r.duplicates },
  { header: 'avg_input_tokens', value: (r) => r.avgInputTokens },
  { header: 'input_tokens', value: (r) => r.inputTokens },
  { header: 'cached_input_tokens', value: (r) => r.cachedInputTokens },
  { header: 'cache_write_tokens', value: (r) => r.cacheWriteTokens },
  { header: 'output_tokens', value: (r) => r.outputTokens },
  { header: 'total_tokens', value: (r) => r.totalTokens },
  { header: 'cost_usd', value: (r) => usd(r.costMicros), numeric: true },
  { header: 'unpriced_calls', value: (r) => r.unpricedCalls },
  { header: 'saved_usd', value: (r) => usd(r.savedMicros), numeric: true },
  { header: 'wasted_usd', value: (r) => usd(r.wastedMicros), numeric: true },
  { header: 'cache_saved_usd', value: (r) => usd(r.cacheSavedMicros), numeric: true },
  { header: 'cache_write_extra_usd', value: (r) => usd(r.cacheWriteExtraMicros), numeric: true },
  { header: 'throttled', value: (r) => r.throttled },
  { header: 'errors', value: (r) => r.errors },
  { header: 'abandoned', value: (r) => r.abandoned },
  { header: 'estimated_calls', value: (r) => r.estimatedCalls },
  { header: 'replayed', value: (r) => r.replayed },
  // Migration 20: calls via batch, their cost at the batch rate, what the discount saved.
  { header: 'batch_calls', value: (r) => r.batchCalls },
  { header: 'batch_cost_usd', value: (r) => usd(r.batchCostMicros), numeric: true },
  { header: 'batch_saved_usd', value: (r) => usd(r.batchSavedMicros), numeric: true },
]

/** A row of the team ledger (team-ledger/entries.ts): the machine and database it came from. */
type TeamCsvRow = LedgerRow & { machine: string; source: string }

/** The team ledger's events export: the machine and source, then the local columns. */
export const TEAM_EVENT_COLUMNS: readonly CsvColumn<TeamCsvRow>[] = [
  { header: 'machine', value: (r) => r.machine },
  // machine/database id: `id` is the row's id in that database.
  { header: 'source', value: (r) => r.source },
  ...EVENT_COLUMNS,
]

/** The team ledger's summary export: one line per task type and machine. */
export const TEAM_SUMMARY_COLUMNS: readonly CsvColumn<TypeRollup & { machine: string }>[] = [
  { header: 'machine', value: (r) => r.machine },
  ...SUMMARY_COLUMNS,
]

// Micro-dollars as microsToUsdString writes them (integer arithmetic, no float); NULL is an empty
// cell, and anything but an integer a '"', which sends the page the slow way (below).
const usdSql = (x: string) => `CASE WHEN typeof(${x}) = 'integer' THEN
    CASE WHEN ${x} < 0 THEN '-' ELSE '' END || (abs(${x}) / 1000000) || '.'
      || substr('00000' || (abs(${x}) % 1000000), -6)
  WHEN ${x} IS NULL THEN '' ELSE '"' END`

const cell = (x: string) => `COALESCE(${x}, '')`

/**
 * EVENT_COLUMNS as one SQL expression per ledger row: the cells as they are, joined by commas,
 * with the time and the money formatted as the JS formats them. No quoting and no formula guard:
 * a page is written this way only when plainCsvRecords finds that none of its cells needed either
 * (a test holds the result to csvStream's). A time outside 1970-9999, whose ISO form changes
 * shape, or money that is not an integer makes that cell a '"': that page goes the slow way.
 */
export const EVENT_RECORD_SQL = [
  'id',
  'ts',
  `CASE WHEN ts >= 0 AND ts < 253402300800000 THEN
    replace(datetime(ts / 1000, 'unixepoch'), ' ', 'T') || '.' || substr('00' || (ts % 1000), -3)
      || 'Z' ELSE '"' END`,
  cell('task_id'),
  cell('batch_id'),
  'fp',
  'worker',
  'task_type',
  'provider',
  'model',
  'step',
  'outcome',
  'input_tokens',
  'cached_input_tokens',
  'cache_write_tokens',
  'output_tokens',
  usdSql('cost_micros'),
  usdSql('saved_micros'),
  usdSql('cache_saved_micros'),
  usdSql('cache_write_extra_micros'),
  cell('latency_ms'),
  cell('status'),
  cell('epoch'),
  cell('price_version'),
  cell('reason'),
  'estimated',
  usdSql(`CASE WHEN COALESCE(price_version, '') LIKE '%+batch' THEN batch_saved_micros ELSE 0 END`),
]
  // One call builds the record (a chain of || copies it once per cell). A time or money cell
  // SQLite cannot write as the JS does is a '"', which plainCsvRecords never lets through (it
  // counted commas before: a cell left out by concat_ws and a comma in another cell of the same
  // page passed the count, and the page went out a column short).
  .join(', ')
  .replace(/^/, "concat_ws(',', ")
  .concat(')')

/** Rows per page of an events export: one statement, about 200 KB of CSV. */
export const CSV_PAGE_ROWS = 1000

/** One page of an events export: its CSV records (each starting with its id) by id. */
export function eventsCsvPageSql(where: string): string {
  return `SELECT ${EVENT_RECORD_SQL} AS record
    FROM ledger ${where ? `${where} AND` : 'WHERE'} id > @after AND id <= @maxId
    ORDER BY id LIMIT ${CSV_PAGE_ROWS}`
}

const CHUNK = 64 * 1024

/**
 * The events export. SQLite writes each row's record (EVENT_RECORD_SQL), so a row crosses into
 * JS as one string instead of one value per cell, the bulk of the time before; a page with a
 * cell that needs quoting or a guard goes through csvRecords instead. Paged by id below the
 * starting max id, as Ledger.events() is, so the connection is free in between.
 */
export async function streamEventsCsv(
  pages: { records: Database.Statement; rows: Database.Statement },
  params: ReadQuery['params'],
  maxId: number,
  out: NodeJS.WritableStream,
): Promise<{ rows: number }> {
  let rows = 0
  function* chunks(): Generator<string> {
    yield `${EVENT_COLUMNS.map((c) => c.header).join(',')}\r\n`
    for (let after = 0; ;) {
      const records = pages.records.all({ ...params, after, maxId }) as (string | null)[]
      if (records.length === 0) return
      let text = records.includes(null)
        ? null
        : plainCsvRecords(records as string[], EVENT_COLUMNS.length)
      if (text !== null) {
        // Each record starts with its id: the last one's is where the next page starts.
        const last = records.at(-1)!
        after = Number(last.slice(0, last.indexOf(',')))
      } else {
        const same = pages.rows.all({ ...params, after, maxId }) as LedgerRow[]
        text = csvRecords(same, EVENT_COLUMNS)
        after = same.at(-1)?.id ?? maxId
      }
      // 64 KiB chunks: a file takes them 40 % faster than 16 KiB ones, and memory stays flat.
      for (let i = 0; i < text.length; i += CHUNK) yield text.slice(i, i + CHUNK)
      // Counted once handed on: a page SQLite cannot read stops the export with what it wrote.
      rows += records.length
      if (records.length < CSV_PAGE_ROWS) return
    }
  }
  try {
    await pipeline(Readable.from(chunks()), out)
  } catch (err) {
    const code = (err as { code?: unknown }).code
    if (typeof code === 'string' && code.startsWith('SQLITE_')) {
      throw new ExportIncomplete(rows, (err as Error).message, code, { cause: err })
    }
    throw err
  }
  return { rows }
}

/**
 * An export that could not read every row (a damaged page, a disk error): the rows it wrote
 * before, and SQLite's reason and code, so a caller says both and never reports it done.
 */
export class ExportIncomplete extends Error {
  override readonly name = 'ExportIncomplete'
  constructor(
    readonly rows: number,
    message: string,
    readonly code: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}
