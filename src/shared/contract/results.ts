import { z } from 'zod'
import type { TaskRow } from './tasks'

/** How `results:export` writes the answers: one JSON object per line, or CSV with a header. */
export const ResultsFormat = z.enum(['jsonl', 'csv'])
export type ResultsFormat = z.infer<typeof ResultsFormat>

/**
 * One task's answer as `pacer results` and the console show it. A reused task shows the answer of
 * the execution it reused, with nothing spent (cost 0) and what that saved.
 */
export interface TaskAnswerView {
  batchId: string
  /** The task's line in its batch file (its position, for a console batch). */
  line: number
  taskId: number
  type: string
  key: string | null
  status: TaskRow['status']
  /** executed: this task paid for its answer; reused: it took another execution's; null: none yet. */
  origin: 'executed' | 'reused' | null
  /** The last step's text; null while there is no answer (queued, running, failed). */
  text: string | null
  /** Why the model stopped: stop, length, tool_calls, content_filter, or the provider's word. */
  finishReason: string | null
  /** The output cap cut the answer short (finish reason `length` / Anthropic `max_tokens`). */
  truncated: boolean
  /** The provider's message as it came (OpenAI's message, Anthropic's content blocks). */
  message: unknown
  steps: number | null
  /** What this task spent (all steps): 0 for a reuse. */
  inputTokens: number
  outputTokens: number
  /** Integer micro-dollars this task's execution cost; 0 for a reuse, null when unpriced/unknown. */
  costMicros: number | null
  /** For a reuse: what the execution it reused cost, i.e. what deduplication saved. */
  savedMicros: number | null
  error: string | null
}

/**
 * One ledger row of a task, as the console's task detail lists them: the task's journal of calls.
 * `step` is the call's index within its execution (1, 2, ...; 0 for a reuse or an abandoned owner);
 * outcome `replayed` is a call the journal answered (nothing sent), `duplicate` with reason
 * `answer lost` one paid again because its first answer never reached the database.
 */
export interface TaskLedgerRowView {
  id: number
  ts: number
  step: number
  outcome: string
  model: string
  reason: string | null
  inputTokens: number
  cachedInputTokens: number
  cacheWriteTokens: number
  outputTokens: number
  costMicros: number | null
  savedMicros: number | null
  latencyMs: number | null
  status: number | null
  epoch: number | null
  worker: string
}

/**
 * What a task's log line is: an agent's ctx.log, a rerun whose request differed from the journal
 * (the replay ended there), a call paid again because its first answer was lost, an agent step.
 */
export type TaskLogKind = 'log' | 'divergence' | 'lost' | 'step'

/** One line of a task's log (plain text: no control characters or terminal escapes). */
export interface TaskLogLineView {
  seq: number
  ts: number
  kind: TaskLogKind
  message: string
}

/**
 * What a task was asked, as stored with its execution. JSON texts are indented for reading, with
 * their numbers as written; anything that looks like a credential is `[redacted]`.
 */
export interface TaskInputView {
  type: string
  /** The payload's JSON; null for an execution stored before payloads were kept with it. */
  payload: string | null
  /** The request params' JSON (max_tokens, temperature, ...); null: none. */
  params: string | null
  steps: number
  provider: string
  model: string
  /**
   * What the built-in loop sends on its first call (later steps resend them, with the answers so
   * far and a "Continue" turn); null for a task an agent module runs (its handler writes them).
   */
  messages: { role: string; content: string | null; fields: string | null }[] | null
  /** The agent module that runs this task type, as the batch stored it; null: the built-in loop. */
  agent: { path: string; identity: string; code: string } | null
}

/**
 * One entry of the execution's call journal: a provider call (its answer's text) or an agent's
 * ctx.step (its value as JSON). Kept until the execution's result is stored, so a finished task's
 * calls are its ledger rows.
 */
export interface TaskJournalEntryView {
  idx: number
  kind: 'call' | 'step'
  /** sent: the request went out and no answer was written (yet). */
  state: 'sent' | 'answered'
  ts: number
  model: string | null
  costMicros: number | null
  text: string | null
}

/** `tasks:get`: what the console's task detail shows when a row of the task table is opened. */
export interface TaskDetailView {
  answer: TaskAnswerView
  input: TaskInputView
  /** The execution's journal, by call index (empty once its result is stored). */
  journal: TaskJournalEntryView[]
  ledger: TaskLedgerRowView[]
  /** The task's log, oldest first (bounded: engine/task-log.ts MAX_LOG_LINES). */
  log: TaskLogLineView[]
}
