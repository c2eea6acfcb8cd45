// Batch files read as rows: a whole text (the console's import), or a file streamed a chunk at a
// time (`pacer run`). JSON is read with its numbers as written (shared/exact-json.ts) and the
// bytes must be UTF-8: a bad byte is a line error naming its byte, never a U+FFFD that merges two
// tasks.
import { isUtf8 } from 'node:buffer'
import { createReadStream } from 'node:fs'
import { pipeline, Readable } from 'node:stream'
import { parse as parseCsvStream, type Parser } from 'csv-parse'
import { parse as parseCsv } from 'csv-parse/sync'
import type { BatchFormat, LineError } from '../../../shared/contract'
import { invalidUtf8At, invalidUtf8Message } from '../../../shared/utf8'
import { parseExactJson } from '../../../shared/exact-json'
import { Utf8Scan, type BadByte } from '../core/utf8-scan'

/** One row of a batch file before validation: its value, or why it is not one. */
export type BatchRow = { line: number; value: unknown } | { line: number; error: LineError }

const CSV_COLUMNS = ['type', 'payload', 'steps', 'key', 'model', 'provider', 'params'] as const
const CSV_OPTIONS = { info: true, relax_column_count: true, skip_empty_lines: true, trim: true }
export const EMPTY_FILE: LineError = { line: 1, message: 'the file is empty: no tasks' }
export const NO_TASKS: LineError = { line: 1, message: 'the file has no tasks' }

/**
 * Reads a batch file without holding it, a chunk at a time: the rows of each chunk (~1 MB) come
 * as one array, so a million lines cost a few hundred awaits, not a million. `onChunk` sees every
 * byte read (to hash it, or to show progress). A file with no row at all yields the error
 * parseBatchFile would give. `chunkBytes` is the read size (a test cuts characters with it).
 */
export async function* readBatchRows(
  path: string,
  format: BatchFormat,
  onChunk?: (chunk: Buffer) => void,
  chunkBytes = 1 << 20,
): AsyncGenerator<BatchRow[]> {
  const stream = createReadStream(path, { highWaterMark: chunkBytes })
  const chunks = onChunk
    ? tap(stream as AsyncIterable<Buffer>, onChunk)
    : (stream as AsyncIterable<Buffer>)
  const seen = { rows: 0, content: false }
  const source = format === 'csv' ? csvStreamRows(chunks, seen) : jsonlStreamRows(chunks, seen)
  for await (const rows of source) {
    seen.rows += rows.length
    if (rows.length > 0) yield rows
  }
  if (seen.rows === 0) yield [{ line: 1, error: seen.content ? NO_TASKS : EMPTY_FILE }]
}

/** What a stream saw besides its rows: whether the file had any content at all. */
interface Seen {
  rows: number
  content: boolean
}

async function* tap(
  chunks: AsyncIterable<Buffer>,
  onChunk: (chunk: Buffer) => void,
): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    onChunk(chunk)
    yield chunk
  }
}

function jsonRow(raw: string, line: number): BatchRow | null {
  const trimmed = raw.trim()
  if (trimmed === '' || trimmed.startsWith('//')) return null
  try {
    return { line, value: parseExactJson(trimmed) }
  } catch (err) {
    return { line, error: { line, message: `not valid JSON: ${(err as Error).message}` } }
  }
}

function badByteRow({ line, byte, value }: BadByte): BatchRow {
  const message = `${invalidUtf8Message(byte, value)}: save the file as UTF-8`
  return { line, error: { line, message } }
}

/** The rows of a whole JSONL text (a BOM already taken off). */
export function* jsonlTextRows(text: string): Generator<BatchRow> {
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const row = jsonRow(lines[i] as string, i + 1)
    if (row) yield row
  }
}

/**
 * A JSONL stream cut into lines as bytes (a LF byte is never part of a character, so a character
 * cut by a chunk is whole again in its line), each chunk's complete lines checked as UTF-8 at once.
 */
async function* jsonlStreamRows(
  chunks: AsyncIterable<Buffer>,
  seen: Seen,
): AsyncGenerator<BatchRow[]> {
  const lines = new JsonlLines(seen)
  // The bytes of the line not yet ended, from one chunk or more.
  let parts: Buffer[] = []
  for await (const chunk of chunks) {
    const nl = chunk.lastIndexOf(0x0a)
    if (nl === -1) {
      parts.push(chunk)
      continue
    }
    parts.push(chunk.subarray(0, nl + 1))
    const complete = parts.length === 1 ? parts[0]! : Buffer.concat(parts)
    parts = nl + 1 < chunk.length ? [chunk.subarray(nl + 1)] : []
    yield lines.rowsOf(complete)
  }
  yield lines.rowsOf(Buffer.concat(parts), true)
}

class JsonlLines {
  #line = 0
  readonly #seen: Seen

  constructor(seen: Seen) {
    this.#seen = seen
  }

  /** The rows of `bytes`: lines each ended by a LF, but for the last of the file (`last`). */
  rowsOf(bytes: Buffer, last = false): BatchRow[] {
    const rows: BatchRow[] = []
    if (isUtf8(bytes)) {
      const text = bytes.toString('utf8')
      let start = 0
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        const row = this.#rowOf(text.slice(start, nl))
        start = nl + 1
        if (row) rows.push(row)
      }
      const row = last ? this.#rowOf(text.slice(start)) : null
      if (row) rows.push(row)
      return rows
    }
    // Some line is not UTF-8: line by line, to name it and keep the others.
    let start = 0
    while (last || start < bytes.length) {
      const nl = bytes.indexOf(0x0a, start)
      const end = nl === -1 ? bytes.length : nl
      const at = invalidUtf8At(bytes, start, end)
      const row =
        at === -1
          ? this.#rowOf(bytes.toString('utf8', start, end))
          : this.#badRow(at - start + 1, bytes[at]!)
      if (row) rows.push(row)
      if (nl === -1) break
      start = nl + 1
    }
    return rows
  }

  #rowOf(raw: string): BatchRow | null {
    this.#line++
    let text = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (this.#line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    if (!this.#seen.content && text.trim() !== '') this.#seen.content = true
    return jsonRow(text, this.#line)
  }

  #badRow(byte: number, value: number): BatchRow {
    this.#line++
    this.#seen.content = true
    return badByteRow({ line: this.#line, byte, value })
  }
}

interface CsvRecord {
  record: string[]
  info: { lines: number }
}

/** Turns CSV records into rows: the first is the header, the others tasks (or their problems). */
class CsvRows {
  #header: string[] | null = null
  #refused = false

  /** The record's row; null for the header (or anything after a refused header). */
  rowOf(r: CsvRecord): BatchRow | null {
    if (this.#refused) return null
    if (this.#header === null) {
      this.#header = r.record.map((h) => h.toLowerCase())
      const problem = headerProblem(this.#header)
      if (!problem) return null
      this.#refused = true
      return { line: r.info.lines, error: { line: r.info.lines, message: problem } }
    }
    return csvRow(this.#header, r)
  }
}

function headerProblem(header: string[]): string | null {
  const unknown = header.filter((h) => !(CSV_COLUMNS as readonly string[]).includes(h))
  if (header.includes('type') && header.includes('payload') && unknown.length === 0) return null
  return `the header must name the columns ${CSV_COLUMNS.join(',')} (type and payload required)${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`
}

function csvRow(header: string[], { record, info }: CsvRecord): BatchRow {
  const line = info.lines
  // Fewer fields than columns is fine (optional columns left out); more would drop a value
  // silently, and usually means a shifted row (an unquoted comma in a payload).
  if (record.length > header.length) {
    const message = `${record.length} fields, but the header names ${header.length} columns`
    return { line, error: { line, message } }
  }
  const obj: Record<string, unknown> = {}
  for (let i = 0; i < header.length; i++) {
    const column = header[i] as string
    const cell = record[i] ?? ''
    if (cell === '') continue
    if (column === 'payload' || column === 'params') {
      try {
        obj[column] = parseExactJson(cell)
      } catch (err) {
        const message = `not valid JSON: ${(err as Error).message}`
        return { line, error: { line, field: column, message } }
      }
    } else if (column === 'steps') {
      obj.steps = /^-?\d+$/.test(cell) ? Number(cell) : cell
    } else {
      obj[column] = cell
    }
  }
  return { line, value: obj }
}

function csvError(err: unknown): BatchRow {
  const e = err as Error & { lines?: number }
  const line = e.lines ?? 1
  return { line, error: { line, message: `not valid CSV: ${e.message}` } }
}

/** The rows of a whole CSV text. */
export function* csvTextRows(text: string): Generator<BatchRow> {
  let records: CsvRecord[]
  try {
    records = parseCsv(text, CSV_OPTIONS) as unknown as CsvRecord[]
  } catch (err) {
    yield csvError(err)
    return
  }
  const rows = new CsvRows()
  for (const r of records) {
    const row = rows.rowOf(r)
    if (row) yield row
  }
}

/** A CSV stream's rows; a record with a byte that is not UTF-8 is that byte's line error. */
async function* csvStreamRows(
  chunks: AsyncIterable<Buffer>,
  seen: Seen,
): AsyncGenerator<BatchRow[]> {
  const parser: Parser = parseCsvStream({ ...CSV_OPTIONS, bom: true })
  // The check runs before the parser sees a byte: a record's bad bytes are known when it comes.
  const bad: BadByte[] = []
  async function* checked(): AsyncGenerator<Buffer> {
    const scan = new Utf8Scan()
    for await (const chunk of chunks) {
      bad.push(...scan.push(chunk))
      yield chunk
    }
    bad.push(...scan.end())
  }
  // A parse error destroys both streams; it surfaces in the loop below.
  pipeline(Readable.from(checked()), parser, () => {})
  const rows = new CsvRows()
  let batch: BatchRow[] = []
  try {
    for await (const r of parser as AsyncIterable<CsvRecord>) {
      seen.content = true
      const row = rows.rowOf(r)
      const badByte = takeBadBytes(bad, r.info.lines)
      if (badByte) batch.push(badByteRow(badByte))
      else if (row) batch.push(row)
      if (batch.length >= 1000) {
        yield batch
        batch = []
      }
    }
  } catch (err) {
    batch.push(csvError(err))
  }
  for (const b of bad) batch.push(badByteRow(b))
  yield batch
}

/** Takes the bad bytes on lines up to `line` out of `bad`; the first of them. */
function takeBadBytes(bad: BadByte[], line: number): BadByte | null {
  let n = 0
  while (n < bad.length && bad[n]!.line <= line) n++
  return n === 0 ? null : bad.splice(0, n)[0]!
}
