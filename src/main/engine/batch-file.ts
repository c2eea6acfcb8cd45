import { createReadStream } from 'node:fs'
import { pipeline, Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { parse as parseCsvStream, type Parser } from 'csv-parse'
import { parse as parseCsv } from 'csv-parse/sync'
import type { BatchFormat, LineError } from '../../shared/contract'
import { TaskInput, formatPath } from '../../shared/contract'
import {
  NonJsonValueError,
  canonicalJson,
  fingerprintOfCanonical,
  keyFingerprint,
} from './fingerprint'
import type { JsonValue } from './types'

/** A task read from a batch file, validated and fingerprinted, ready to enqueue. */
export interface ParsedTask {
  line: number
  type: string
  payload: JsonValue
  /** Canonical JSON of the payload, as stored. */
  payloadJson: string
  /** sha256 of {type, payload}: what the task is. */
  payloadFp: string
  /**
   * The explicit key's fingerprint if the task has one, else payloadFp. The engine's resolve()
   * turns keyless tasks into their execution fingerprint (+ provider, model, steps) for claims.
   */
  fp: string
  key: string | null
  steps: number
  provider: string | null
  model: string | null
}

export interface ParsedBatch {
  format: BatchFormat
  tasks: ParsedTask[]
  errors: LineError[]
}

/** One row of a batch file before validation: its value, or why it is not one. */
export type BatchRow = { line: number; value: unknown } | { line: number; error: LineError }

/**
 * Where the keys seen so far in a file are remembered, to refuse one reused with another payload.
 * In memory for a file held in memory; a streamed file of any size keeps them in a temp table.
 */
export interface KeyRegistry {
  /** The first line and payload fingerprint seen with `key`, recording these if it is new. */
  firstUse(key: string, line: number, payloadFp: string): { line: number; payloadFp: string }
}

export function memoryKeys(): KeyRegistry {
  const keys = new Map<string, { line: number; payloadFp: string }>()
  return {
    firstUse(key, line, payloadFp) {
      const seen = keys.get(key)
      if (seen) return seen
      keys.set(key, { line, payloadFp })
      return { line, payloadFp }
    },
  }
}

const CSV_COLUMNS = ['type', 'payload', 'steps', 'key', 'model', 'provider'] as const
const CSV_OPTIONS = { info: true, relax_column_count: true, skip_empty_lines: true, trim: true }
const EMPTY_FILE: LineError = { line: 1, message: 'the file is empty: no tasks' }
const NO_TASKS: LineError = { line: 1, message: 'the file has no tasks' }

/**
 * Parses and validates a whole batch file. Never throws for bad content: every problem becomes a
 * LineError with its 1-based line number and field, so the operator sees all of them at once.
 */
export function parseBatchFile(content: string, format: BatchFormat): ParsedBatch {
  const text = content.startsWith('\uFEFF') ? content.slice(1) : content
  if (text.trim() === '') return { format, tasks: [], errors: [EMPTY_FILE] }
  const rows = format === 'csv' ? csvTextRows(text) : jsonlTextRows(text)
  const tasks: ParsedTask[] = []
  const errors: LineError[] = []
  const validator = new TaskValidator(memoryKeys())
  for (const row of rows) {
    const task = validator.accept(row, errors)
    if (task) tasks.push(task)
  }
  if (tasks.length === 0 && errors.length === 0) errors.push(NO_TASKS)
  errors.sort((a, b) => a.line - b.line)
  return { format, tasks, errors }
}

/** Validates rows one at a time, refusing a key that comes back with another payload. */
export class TaskValidator {
  readonly #keys: KeyRegistry

  constructor(keys: KeyRegistry) {
    this.#keys = keys
  }

  /** The row's task, or null with its problems pushed to `errors`. */
  accept(row: BatchRow, errors: LineError[]): ParsedTask | null {
    if ('error' in row) {
      errors.push(row.error)
      return null
    }
    const task = validateTask(row.value, row.line, errors)
    return task && this.checkKey(task, errors) ? task : null
  }

  /** False, with the problem pushed to `errors`, when the task's key came with another payload. */
  checkKey(task: Pick<ParsedTask, 'key' | 'line' | 'payloadFp'>, errors: LineError[]): boolean {
    if (task.key === null) return true
    const first = this.#keys.firstUse(task.key, task.line, task.payloadFp)
    if (first.payloadFp === task.payloadFp) return true
    errors.push({
      line: task.line,
      field: 'key',
      message: `key_reused_with_different_payload: key "${task.key}" was used on line ${first.line} with a different type or payload`,
    })
    return false
  }
}

/** Validates one task object (from a file line or the console) into a ParsedTask. */
export function validateTask(value: unknown, line: number, errors: LineError[]): ParsedTask | null {
  let input = wellFormed(value)
  if (input === null) {
    const parsed = TaskInput.safeParse(value)
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = formatPath(issue.path)
        errors.push({ line, field: field || undefined, message: issueMessage(issue) })
      }
      return null
    }
    input = parsed.data
  }
  let payloadJson: string
  let payloadFp: string
  try {
    payloadJson = canonicalJson(input.payload, 'payload')
    payloadFp = fingerprintOfCanonical(input.type, payloadJson)
  } catch (err) {
    if (err instanceof NonJsonValueError) {
      errors.push({ line, field: err.path, message: err.message })
      return null
    }
    throw err
  }
  const key = input.key ?? null
  return {
    line,
    type: input.type,
    payload: input.payload as JsonValue,
    payloadJson,
    payloadFp,
    fp: key === null ? payloadFp : keyFingerprint(key),
    key,
    steps: input.steps ?? 1,
    provider: input.provider ?? null,
    model: input.model ?? null,
  }
}

const TASK_FIELDS = new Set(['type', 'payload', 'steps', 'key', 'model', 'provider'])

const optionalString = (v: unknown, max: number) =>
  v === undefined || (typeof v === 'string' && v.length >= 1 && v.length <= max)

/**
 * The task as TaskInput would parse it, when it plainly is one (the common line of a big file);
 * null for anything else, which TaskInput then parses and words the errors of. Accepts a subset of
 * what TaskInput accepts, never more: a million lines validate in a second instead of six.
 */
function wellFormed(value: unknown): TaskInput | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null
  for (const k of Object.keys(value)) if (!TASK_FIELDS.has(k)) return null
  const o = value as Record<string, unknown>
  const { type, steps } = o
  if (typeof type !== 'string' || type.length < 1 || type.length > 200) return null
  // TaskInput trims the type: only an already trimmed one is taken as is.
  if (type.trim() !== type || o.payload === undefined) return null
  if (
    steps !== undefined &&
    !(Number.isInteger(steps) && (steps as number) >= 1 && (steps as number) <= 1000)
  ) {
    return null
  }
  if (!optionalString(o.key, 500) || !optionalString(o.model, 200)) return null
  if (!optionalString(o.provider, 100)) return null
  return o as TaskInput
}

function issueMessage(issue: { code: string; message: string; path: PropertyKey[] }): string {
  if (issue.code === 'unrecognized_keys') return issue.message.replace(/^Unrecognized/, 'unknown')
  if (issue.path.length === 0) return `a task must be a JSON object: ${issue.message}`
  return issue.message
}

/**
 * Reads a batch file without holding it, a chunk at a time: the rows of each chunk (~1 MB) come
 * as one array, so a million lines cost a few hundred awaits, not a million. `onChunk` sees every
 * byte read (to hash it, or to show progress). A file with no row at all yields the error
 * parseBatchFile would give.
 */
export async function* readBatchRows(
  path: string,
  format: BatchFormat,
  onChunk?: (chunk: Buffer) => void,
): AsyncGenerator<BatchRow[]> {
  const stream = createReadStream(path, { highWaterMark: 1 << 20 })
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
    return { line, value: JSON.parse(trimmed) }
  } catch (err) {
    return { line, error: { line, message: `not valid JSON: ${(err as Error).message}` } }
  }
}

function* jsonlTextRows(text: string): Generator<BatchRow> {
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const row = jsonRow(lines[i] as string, i + 1)
    if (row) yield row
  }
}

async function* jsonlStreamRows(
  chunks: AsyncIterable<Buffer>,
  seen: Seen,
): AsyncGenerator<BatchRow[]> {
  const decoder = new StringDecoder('utf8')
  let carry = ''
  let line = 0
  let first = true
  const rowOf = (raw: string) => {
    line++
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (!seen.content && text.trim() !== '') seen.content = true
    return jsonRow(text, line)
  }
  for await (const chunk of chunks) {
    let text = carry + decoder.write(chunk)
    if (first && text.length > 0) {
      if (text.startsWith('\uFEFF')) text = text.slice(1)
      first = false
    }
    const rows: BatchRow[] = []
    let start = 0
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const row = rowOf(text.slice(start, nl))
      start = nl + 1
      if (row) rows.push(row)
    }
    carry = text.slice(start)
    yield rows
  }
  const last = rowOf(carry + decoder.end())
  if (last) yield [last]
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
    if (column === 'payload') {
      try {
        obj.payload = JSON.parse(cell)
      } catch (err) {
        const message = `not valid JSON: ${(err as Error).message}`
        return { line, error: { line, field: 'payload', message } }
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

function* csvTextRows(text: string): Generator<BatchRow> {
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

async function* csvStreamRows(
  chunks: AsyncIterable<Buffer>,
  seen: Seen,
): AsyncGenerator<BatchRow[]> {
  const parser: Parser = parseCsvStream({ ...CSV_OPTIONS, bom: true })
  // A parse error destroys both streams; it surfaces in the loop below.
  pipeline(Readable.from(chunks), parser, () => {})
  const rows = new CsvRows()
  let batch: BatchRow[] = []
  try {
    for await (const r of parser as AsyncIterable<CsvRecord>) {
      seen.content = true
      const row = rows.rowOf(r)
      if (row) batch.push(row)
      if (batch.length >= 1000) {
        yield batch
        batch = []
      }
    }
  } catch (err) {
    batch.push(csvError(err))
  }
  yield batch
}
