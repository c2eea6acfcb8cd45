import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { stringify } from 'csv-stringify'
import { stringify as stringifySync } from 'csv-stringify/sync'

/** One CSV cell: null and undefined are written as an empty cell. */
export type CsvCell = string | number | null | undefined

/**
 * First characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection": = + - @
 * tab CR), plus their full-width forms, which Apple Numbers normalizes to ASCII before evaluating.
 */
const FORMULA_START = new Set([
  '=',
  '+',
  '-',
  '@',
  '\t',
  '\r',
  '\uFF1D',
  '\uFF0B',
  '\uFF0D',
  '\uFF20',
])

// A plain decimal number in a numeric column (e.g. money as '-0.500000') is data, not a formula.
const DECIMAL = /^-?\d+(?:\.\d+)?$/

/**
 * Guards a cell against spreadsheet formula injection: a string starting with a formula character
 * gets a leading single quote, which spreadsheets display as text. Numbers are returned untouched:
 * -3 is a value, not an injection.
 */
export function neutralizeCell(value: CsvCell): string | number | null {
  if (value === null || value === undefined) return null
  if (typeof value === 'number') return value
  return value.length > 0 && FORMULA_START.has(value[0] as string) ? `'${value}` : value
}

/** How one column is read from a row. */
export interface CsvColumn<T> {
  header: string
  value: (row: T) => CsvCell
  /**
   * Numeric columns may carry decimal strings (money with fixed decimals) that must not be
   * prefixed; anything else in them is still neutralized.
   * @default false
   */
  numeric?: boolean
}

/**
 * Streams rows to `out` as RFC 4180 CSV: a header row, CRLF between records, fields containing a
 * comma, quote, CR or LF quoted with quotes doubled, every text cell passed through neutralizeCell.
 * Rows are pulled only as fast as `out` accepts them (backpressure), so memory stays flat whatever
 * the row count. `out` is ended when the rows are done; resolves once it has finished.
 */
export async function csvStream<T>(
  rows: Iterable<T> | AsyncIterable<T>,
  columns: readonly CsvColumn<T>[],
  out: NodeJS.WritableStream,
): Promise<{ rows: number }> {
  let written = 0
  async function* records(): AsyncGenerator<(string | number | null)[]> {
    for await (const row of rows) {
      written++
      yield cellsOf(row, columns)
    }
  }
  const stringifier = stringify({
    ...STRINGIFY,
    header: true,
    columns: columns.map((c) => c.header),
  })
  await pipeline(Readable.from(records()), stringifier, out)
  return { rows: written }
}

const STRINGIFY = {
  record_delimiter: '\r\n',
  // csv-stringify stops quoting lone CR / LF once a record_delimiter is given; RFC 4180 (and any
  // parser) needs them quoted, or a note with a newline splits a ledger row in two.
  quote_record_delimiter: true,
  // Our own guard above applies; do not prefix twice.
  escape_formulas: false,
} as const

function cellsOf<T>(row: T, columns: readonly CsvColumn<T>[]): (string | number | null)[] {
  return columns.map((c) => {
    const v = c.value(row)
    return c.numeric && typeof v === 'string' && DECIMAL.test(v) ? v : neutralizeCell(v)
  })
}

/** Rows as CSV records, each ended by CRLF, without a header: what csvStream writes for them. */
export function csvRecords<T>(rows: readonly T[], columns: readonly CsvColumn<T>[]): string {
  return stringifySync(
    rows.map((r) => cellsOf(r, columns)),
    STRINGIFY,
  )
}

/**
 * csvRecords, faster for rows none of whose cells needs quoting or a guard (most ledger rows):
 * the cells joined by commas, checked by plainCsvRecords; a page that fails the check goes
 * through csvRecords whole.
 */
export function csvRecordsQuick<T>(rows: readonly T[], columns: readonly CsvColumn<T>[]): string {
  const records = rows.map((r) => columns.map((c) => c.value(r) ?? '').join(','))
  return plainCsvRecords(records, columns.length) ?? csvRecords(rows, columns)
}

const FORMULA_AFTER_SEPARATOR = new RegExp(
  `(?:^|[,\n])[${[...FORMULA_START].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`,
)

function count(text: string, ch: string): number {
  let n = 0
  for (let i = text.indexOf(ch); i >= 0; i = text.indexOf(ch, i + 1)) n++
  return n
}

/**
 * Records written by plain concatenation (cells joined by commas: no quoting, no guard) as
 * csvStream would write them, each ended by CRLF; null when that would not be the same: a cell
 * holds a comma, quote, CR or LF (the separators then do not count `cells` - 1 per record) or
 * starts like a formula. Null only sends the records the slow way (a negative number also looks
 * like a formula here).
 */
export function plainCsvRecords(records: readonly string[], cells: number): string | null {
  const text = `${records.join('\r\n')}\r\n`
  const n = records.length
  const plain =
    count(text, ',') === n * (cells - 1) &&
    count(text, '\n') === n &&
    count(text, '\r') === n &&
    !text.includes('"') &&
    !FORMULA_AFTER_SEPARATOR.test(text)
  return plain ? text : null
}
