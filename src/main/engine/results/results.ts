// The answers out: every task's answer, in input order, as JSONL or CSV (`pacer results`, the
// console's download), and one task's answer with its ledger rows (the console's task detail).
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type Database from 'better-sqlite3'
import type {
  ResultsFormat,
  TaskAnswerView,
  TaskDetailView,
  TaskLedgerRowView,
} from '../../../shared/contract'
import { microsToUsd, microsToUsdString as usd } from '../../../shared/money'
import { csvStream, type CsvColumn } from '../core/csv'
import { safeJson } from '../core/json-text'
import { taskStatusOf } from '../db/codes'
import { EngineError } from '../core/errors'
import { RESULTS_PAGE_ROWS, RESULTS_SQL } from './results-sql'
import { TaskLog } from '../runner/durable/task-log'
import {
  journalEntry,
  Redactor,
  taskInput,
  type JournalDbRow,
  type TaskInputRow,
} from './task-input'

export interface ResultsExportOptions {
  /** One batch; undefined: the latest one. */
  batchId?: string
  /** Every batch, oldest first (batchId is then ignored). @default false */
  all?: boolean
  /** @default 'jsonl' */
  format?: ResultsFormat
  /** CSV only: a `message` column with the provider's raw message as JSON. @default false */
  raw?: boolean
}

interface AnswerRow {
  id: number
  seq: number
  status: number
  error: string | null
  type: string
  key: string | null
  body: string | null
  fp_cost: number | null
  current_result: number
}

/** A stored result body, in any of the shapes it was written in (execute.ts resultJson). */
interface StoredBody {
  text?: unknown
  message?: unknown
  finishReason?: unknown
  truncated?: unknown
  steps?: unknown
  usage?: { inputTokens?: unknown; outputTokens?: unknown }
  costMicros?: unknown
}

const CHUNK = 64 * 1024

/** Reads answers from the queue's tables; pages by task id, so a batch in progress reads fine. */
export class Results {
  readonly #stmts: { [K in keyof typeof RESULTS_SQL]: Database.Statement }
  readonly #log: TaskLog

  /** The configured API keys, redacted from what the task detail shows. */
  readonly #secrets: () => readonly (string | null)[]

  constructor(db: Database.Database, secrets: () => readonly (string | null)[] = () => []) {
    this.#secrets = secrets
    this.#log = new TaskLog(db)
    this.#stmts = Object.fromEntries(
      Object.entries(RESULTS_SQL).map(([name, sql]) => [name, db.prepare(sql)]),
    ) as { [K in keyof typeof RESULTS_SQL]: Database.Statement }
  }

  /** The batches an export covers: the one named, the latest, or all; an unknown id is an error. */
  batchIds(options: Pick<ResultsExportOptions, 'batchId' | 'all'>): string[] {
    if (options.all) return this.#stmts.allBatches.pluck().all() as string[]
    if (options.batchId !== undefined) {
      if (this.#stmts.batchRange.get(options.batchId) === undefined) {
        throw new EngineError('unknown_batch', `no batch ${options.batchId}`, 'batchId')
      }
      return [options.batchId]
    }
    const latest = this.#stmts.latestBatch.pluck().get() as string | undefined
    return latest === undefined ? [] : [latest]
  }

  /**
   * Every task's answer of the batches, in input order (batch, then line). Read a page at a time:
   * between pages the connection is free for the runner, and memory holds one page.
   */
  *answers(batchIds: readonly string[]): Generator<TaskAnswerView> {
    for (const batchId of batchIds) {
      const range = this.#stmts.batchRange.get(batchId) as
        { key: number; first: number | null; end: number | null } | undefined
      if (!range || range.first === null || range.end === null) continue
      for (let after = range.first - 1; ;) {
        const rows = this.#stmts.page.all({
          after,
          end: range.end,
          batch: range.key,
        }) as AnswerRow[]
        for (const row of rows) yield toAnswer(batchId, row)
        if (rows.length < RESULTS_PAGE_ROWS) break
        after = rows[rows.length - 1]!.id
      }
    }
  }

  /** Streams the answers to `out` (ended when done) as JSONL or CSV; resolves with the count. */
  async export(
    out: NodeJS.WritableStream,
    options: ResultsExportOptions,
  ): Promise<{ rows: number }> {
    const ids = this.batchIds(options)
    const format = options.format ?? 'jsonl'
    if (format === 'csv') {
      const columns = options.raw ? [...CSV_COLUMNS, MESSAGE_COLUMN] : CSV_COLUMNS
      return csvStream(this.answers(ids), columns, out)
    }
    if (format !== 'jsonl') {
      throw new TypeError(`results format must be 'jsonl' or 'csv', got ${JSON.stringify(format)}`)
    }
    let rows = 0
    const answers = this.answers(ids)
    function* chunks(): Generator<string> {
      let text = ''
      for (const a of answers) {
        rows++
        text += `${safeJson(jsonRecord(a))}\n`
        if (text.length >= CHUNK) {
          yield text
          text = ''
        }
      }
      if (text) yield text
    }
    await pipeline(Readable.from(chunks()), out)
    return { rows }
  }

  /**
   * One task: its answer, what it was asked, its execution's journal and its ledger rows; an
   * unknown id is an error naming it.
   */
  task(taskId: number): TaskDetailView {
    const row = this.#stmts.task.get(taskId) as
      (AnswerRow & TaskInputRow & { fp_id: number; batch_id: string }) | undefined
    if (!row) throw new EngineError('unknown_task', `no task ${taskId}`, 'taskId')
    const redactor = new Redactor(this.#secrets())
    const ledger = (this.#stmts.taskLedger.all(row.fp_id, taskId) as LedgerDbRow[]).map(toLedger)
    const journal = (this.#stmts.taskJournal.all(row.fp_id) as JournalDbRow[]).map((r) =>
      journalEntry(r, redactor),
    )
    const answer = toAnswer(row.batch_id, row)
    return {
      answer: {
        ...answer,
        text: answer.text === null ? null : redactor.text(answer.text),
        error: answer.error === null ? null : redactor.text(answer.error),
      },
      input: taskInput(row, redactor),
      journal,
      ledger,
      log: this.#log.lines(taskId),
    }
  }

  /** How many of a batch's tasks got an answer the output cap cut short. */
  truncatedCount(batchId: string): number {
    return (this.#stmts.truncatedInBatch.get(batchId) as { n: number }).n
  }
}

function parseBody(body: string | null): StoredBody | null {
  if (body === null) return null
  try {
    const parsed = JSON.parse(body) as unknown
    return parsed !== null && typeof parsed === 'object' ? (parsed as StoredBody) : null
  } catch {
    return null
  }
}

const int = (v: unknown): number | null => (Number.isSafeInteger(v) ? (v as number) : null)
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)

/** One task's row as its answer: the origin decides what it spent and what it saved. */
function toAnswer(batchId: string, row: AnswerRow): TaskAnswerView {
  const status = taskStatusOf(row.status)
  const body = parseBody(row.body)
  const hasAnswer = body !== null && typeof body.text === 'string'
  const origin = !hasAnswer ? null : status === 'reused' ? 'reused' : 'executed'
  // Results stored before they carried their cost: the claim's, while it still points at them.
  const executionCost =
    body && 'costMicros' in body ? int(body.costMicros) : row.current_result ? row.fp_cost : null
  const finishReason = str(body?.finishReason)
  return {
    batchId,
    line: row.seq,
    taskId: row.id,
    type: row.type,
    key: row.key,
    status,
    origin,
    text: hasAnswer ? (body.text as string) : null,
    finishReason,
    truncated: body?.truncated === true || finishReason === 'length',
    message: hasAnswer ? (body.message ?? null) : null,
    steps: hasAnswer ? int(body.steps) : null,
    inputTokens: origin === 'executed' ? (int(body?.usage?.inputTokens) ?? 0) : 0,
    outputTokens: origin === 'executed' ? (int(body?.usage?.outputTokens) ?? 0) : 0,
    costMicros: origin === 'reused' ? 0 : origin === 'executed' ? executionCost : null,
    savedMicros: origin === 'reused' ? executionCost : null,
    error: row.error,
  }
}

/** The JSONL record: the view with money in USD (as `pacer run --json` has it). */
function jsonRecord(a: TaskAnswerView): Record<string, unknown> {
  const { costMicros, savedMicros, ...rest } = a
  return { ...rest, costUsd: microsToUsd(costMicros), savedUsd: microsToUsd(savedMicros) }
}

const CSV_COLUMNS: readonly CsvColumn<TaskAnswerView>[] = [
  { header: 'batch_id', value: (a) => a.batchId },
  { header: 'line', value: (a) => a.line },
  { header: 'task_id', value: (a) => a.taskId },
  { header: 'type', value: (a) => a.type },
  { header: 'key', value: (a) => a.key },
  { header: 'status', value: (a) => a.status },
  { header: 'origin', value: (a) => a.origin },
  { header: 'truncated', value: (a) => (a.truncated ? 'true' : 'false') },
  { header: 'finish_reason', value: (a) => a.finishReason },
  { header: 'answer', value: (a) => a.text },
  { header: 'error', value: (a) => a.error },
  { header: 'steps', value: (a) => a.steps },
  { header: 'input_tokens', value: (a) => a.inputTokens },
  { header: 'output_tokens', value: (a) => a.outputTokens },
  { header: 'cost_usd', value: (a) => usd(a.costMicros), numeric: true },
  { header: 'saved_usd', value: (a) => usd(a.savedMicros), numeric: true },
]

const MESSAGE_COLUMN: CsvColumn<TaskAnswerView> = {
  header: 'message',
  value: (a) => (a.message === null ? null : safeJson(a.message)),
}

interface LedgerDbRow {
  id: number
  ts: number
  step: number
  outcome: string
  model: string
  reason: string | null
  input_tokens: number
  cached_input_tokens: number
  cache_write_tokens: number
  output_tokens: number
  cost_micros: number | null
  saved_micros: number | null
  latency_ms: number | null
  status: number | null
  epoch: number | null
  worker: string
}

function toLedger(r: LedgerDbRow): TaskLedgerRowView {
  return {
    id: r.id,
    ts: r.ts,
    step: r.step,
    outcome: r.outcome,
    model: r.model,
    reason: r.reason,
    inputTokens: r.input_tokens,
    cachedInputTokens: r.cached_input_tokens,
    cacheWriteTokens: r.cache_write_tokens,
    outputTokens: r.output_tokens,
    costMicros: r.cost_micros,
    savedMicros: r.saved_micros,
    latencyMs: r.latency_ms,
    status: r.status,
    epoch: r.epoch,
    worker: r.worker,
  }
}
