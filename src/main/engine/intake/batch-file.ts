import type { BatchFormat, LineError } from '../../../shared/contract'
import { TaskInput, formatPath } from '../../../shared/contract'
import {
  NonJsonValueError,
  canonicalJson,
  fingerprintOfCanonical,
  keyFingerprint,
} from '../core/fingerprint'
import type { JsonValue, RequestParams } from '../core/types'
import { csvTextRows, EMPTY_FILE, jsonlTextRows, NO_TASKS, type BatchRow } from './batch-rows'

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
  /** The line's request params (validated), merged over the run's when resolved. */
  params?: RequestParams | null
}

export interface ParsedBatch {
  format: BatchFormat
  tasks: ParsedTask[]
  errors: LineError[]
}

export { readBatchRows } from './batch-rows'

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
  if (!identityIsText(input, line, errors)) return null
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
    params: input.params ?? null,
  }
}

/**
 * The strings a task is known and stored by must be text: a lone surrogate (`"\ud800"`, valid JSON)
 * would reach the database as U+FFFD, and two keys or types would become one.
 */
function identityIsText(input: TaskInput, line: number, errors: LineError[]): boolean {
  for (const field of ['type', 'key', 'model', 'provider'] as const) {
    const value = input[field]
    if (value === undefined || value.isWellFormed()) continue
    errors.push({
      line,
      field,
      message: 'has a lone surrogate (half of a UTF-16 pair), which is not text',
    })
    return false
  }
  return true
}

// `params` is not among them: a line with params takes TaskInput's checks.
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
