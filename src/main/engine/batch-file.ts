import { parse as parseCsv } from 'csv-parse/sync'
import type { BatchFormat, LineError } from '../../shared/contract'
import { TaskInput, formatPath } from '../../shared/contract'
import { NonJsonValueError, canonicalJson, fingerprint, keyFingerprint } from './fingerprint'
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

const CSV_COLUMNS = ['type', 'payload', 'steps', 'key', 'model', 'provider'] as const

/**
 * Parses and validates a whole batch file. Never throws for bad content: every problem becomes a
 * LineError with its 1-based line number and field, so the operator sees all of them at once.
 */
export function parseBatchFile(content: string, format: BatchFormat): ParsedBatch {
  const text = content.startsWith('\uFEFF') ? content.slice(1) : content
  if (text.trim() === '') {
    return { format, tasks: [], errors: [{ line: 1, message: 'the file is empty: no tasks' }] }
  }
  const rows = format === 'csv' ? csvRows(text) : jsonlRows(text)
  const tasks: ParsedTask[] = []
  const errors: LineError[] = [...rows.errors]
  const keys = new Map<string, { line: number; payloadFp: string }>()
  for (const row of rows.rows) {
    const task = validateTask(row.value, row.line, errors)
    if (!task) continue
    if (task.key !== null) {
      const seen = keys.get(task.key)
      if (seen && seen.payloadFp !== task.payloadFp) {
        errors.push({
          line: row.line,
          field: 'key',
          message: `key_reused_with_different_payload: key "${task.key}" was used on line ${seen.line} with a different type or payload`,
        })
        continue
      }
      if (!seen) keys.set(task.key, { line: row.line, payloadFp: task.payloadFp })
    }
    tasks.push(task)
  }
  if (tasks.length === 0 && errors.length === 0) {
    errors.push({ line: 1, message: 'the file has no tasks' })
  }
  errors.sort((a, b) => a.line - b.line)
  return { format, tasks, errors }
}

/** Validates one task object (from a file line or the console) into a ParsedTask. */
export function validateTask(value: unknown, line: number, errors: LineError[]): ParsedTask | null {
  const parsed = TaskInput.safeParse(value)
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = formatPath(issue.path)
      errors.push({ line, field: field || undefined, message: issueMessage(issue) })
    }
    return null
  }
  const input = parsed.data
  let payloadJson: string
  let payloadFp: string
  try {
    payloadJson = canonicalJson(input.payload, 'payload')
    payloadFp = fingerprint(input.type, input.payload)
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

function issueMessage(issue: { code: string; message: string; path: PropertyKey[] }): string {
  if (issue.code === 'unrecognized_keys') return issue.message.replace(/^Unrecognized/, 'unknown')
  if (issue.path.length === 0) return `a task must be a JSON object: ${issue.message}`
  return issue.message
}

interface Rows {
  rows: { line: number; value: unknown }[]
  errors: LineError[]
}

function jsonlRows(text: string): Rows {
  const rows: Rows['rows'] = []
  const errors: LineError[] = []
  const lines = text.split(/\r?\n/)
  lines.forEach((raw, i) => {
    const line = i + 1
    const trimmed = raw.trim()
    if (trimmed === '' || trimmed.startsWith('//')) return
    try {
      rows.push({ line, value: JSON.parse(trimmed) })
    } catch (err) {
      errors.push({ line, message: `not valid JSON: ${(err as Error).message}` })
    }
  })
  return { rows, errors }
}

function csvRows(text: string): Rows {
  const rows: Rows['rows'] = []
  const errors: LineError[] = []
  let records: { record: string[]; info: { lines: number } }[]
  try {
    records = parseCsv(text, {
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
    }) as unknown as { record: string[]; info: { lines: number } }[]
  } catch (err) {
    const e = err as Error & { lines?: number }
    return { rows, errors: [{ line: e.lines ?? 1, message: `not valid CSV: ${e.message}` }] }
  }
  const first = records[0]
  if (!first) return { rows, errors }
  const header = first.record.map((h) => h.toLowerCase())
  const unknown = header.filter((h) => !(CSV_COLUMNS as readonly string[]).includes(h))
  if (!header.includes('type') || !header.includes('payload') || unknown.length > 0) {
    errors.push({
      line: first.info.lines,
      message: `the header must name the columns ${CSV_COLUMNS.join(',')} (type and payload required)${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`,
    })
    return { rows, errors }
  }
  for (const { record, info } of records.slice(1)) {
    const line = info.lines
    // Fewer fields than columns is fine (optional columns left out); more would drop a value
    // silently, and usually means a shifted row (an unquoted comma in a payload).
    if (record.length > header.length) {
      errors.push({
        line,
        message: `${record.length} fields, but the header names ${header.length} columns`,
      })
      continue
    }
    const obj: Record<string, unknown> = {}
    let bad = false
    header.forEach((column, i) => {
      const cell = record[i] ?? ''
      if (cell === '') return
      if (column === 'payload') {
        try {
          obj.payload = JSON.parse(cell)
        } catch (err) {
          errors.push({
            line,
            field: 'payload',
            message: `not valid JSON: ${(err as Error).message}`,
          })
          bad = true
        }
      } else if (column === 'steps') {
        obj.steps = /^-?\d+$/.test(cell) ? Number(cell) : cell
      } else {
        obj[column] = cell
      }
    })
    if (!bad) rows.push({ line, value: obj })
  }
  return { rows, errors }
}
