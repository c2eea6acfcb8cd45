// A batch as an OpenTelemetry trace, following the GenAI semantic conventions v1.45.0 (status:
// Development, so the version is pinned here and in the README): one trace per batch, a root
// span for the batch, an `invoke_agent {type}` span per task, a CLIENT `chat {model}` span per
// ledger row of a call. Everything comes from the ledger's own rows with their own times, so a
// live run and `pacer export --otlp` afterwards send the same spans with the same ids.
import type { Attributes } from '@opentelemetry/api'
import type Database from 'better-sqlite3'
import {
  contentAttributes,
  callErrorType,
  finishReason,
  hex,
  metricCall,
  providerName,
  requestAttributes,
  usd,
} from './genai-attributes'
import type { OtlpPipeline } from './pipeline'

/** The semantic conventions version the attribute names follow. */
export const GENAI_SEMCONV_VERSION = '1.45.0'

/** A batch row as the trace needs it. */
export interface BatchRow {
  id: string
  name: string
  state: string
  createdAt: number
  updatedAt: number
}

/** A task (the `tasks` view) as the trace needs it. */
export interface TaskRow {
  id: number
  seq: number
  type: string
  fp: string
  steps: number
  provider: string
  model: string
  status: string
  attempts: number
  startedAt: number | null
  finishedAt: number | null
  params: string | null
  /** The task's input (JSON): with --otlp-content, its prompt goes on the task's span. */
  payload: string | null
  result: string | null
  error: string | null
}

/** A ledger row (the `ledger` view) as the trace needs it. */
export interface CallRow {
  id: number
  ts: number
  taskId: number | null
  step: number
  provider: string
  model: string
  taskType: string
  inputTokens: number
  cachedInputTokens: number
  cacheWriteTokens: number
  outputTokens: number
  costMicros: number | null
  savedMicros: number | null
  outcome: string
  latencyMs: number | null
  status: number | null
  reason: string | null
  estimated: number
}

/** A task_log line as the trace needs it (kind: 0 log, 1 divergence, 2 lost, 3 step). */
export interface TaskLogRow {
  seq: number
  ts: number
  kind: number
  message: string
}

const LOG_KINDS = { log: 0, divergence: 1, lost: 2, step: 3 } as const
/** What the runner writes for a ctx.step (effects-journal.ts). */
const STEP_LINE = /^step (\d+) "(.*)": (?:ran(?: in (\d+) ms)?|(replayed) from the journal)$/

const BATCH_SQL = `SELECT id, name, state, created_at AS createdAt, updated_at AS updatedAt
  FROM batches`
const TASK_SQL = `SELECT id, seq, type, fp, steps, provider, model, status, attempts,
  started_at AS startedAt, finished_at AS finishedAt, params, payload, result, error FROM tasks`
const CALL_SQL = `SELECT id, ts, task_id AS taskId, step, provider, model, task_type AS taskType,
  input_tokens AS inputTokens, cached_input_tokens AS cachedInputTokens,
  cache_write_tokens AS cacheWriteTokens, output_tokens AS outputTokens,
  cost_micros AS costMicros, saved_micros AS savedMicros, outcome, latency_ms AS latencyMs,
  status, reason, estimated FROM ledger`

/** Reads what a batch's trace is made of. */
export class BatchTraceReader {
  readonly #db: Database.Database

  constructor(db: Database.Database) {
    this.#db = db
  }

  /** The batch named, or the latest finished one; null when there is none. */
  batch(id?: string): BatchRow | null {
    const row = id
      ? this.#db.prepare(`${BATCH_SQL} WHERE id = ?`).get(id)
      : this.#db
          .prepare(`${BATCH_SQL} WHERE state IN ('done', 'cancelled') ORDER BY key DESC LIMIT 1`)
          .get()
    return (row as BatchRow | undefined) ?? null
  }

  /** The batch's tasks after task `afterId`, in queue order; `limit` -1: all. */
  tasks(batchId: string, afterId = 0, limit = -1): TaskRow[] {
    return this.#db
      .prepare(`${TASK_SQL} WHERE batch_id = ? AND id > ? ORDER BY id LIMIT ?`)
      .all(batchId, afterId, limit) as TaskRow[]
  }

  /** Tasks by id (live export: the ones that just ended). */
  tasksById(ids: number[]): TaskRow[] {
    if (ids.length === 0) return []
    const get = this.#db.prepare(`${TASK_SQL} WHERE id = ?`)
    return ids.map((id) => get.get(id) as TaskRow | undefined).filter((t) => t !== undefined)
  }

  /** The batch's ledger rows after `afterId` (0: all), in the order they were written. */
  calls(batchId: string, afterId = 0, limit = -1): CallRow[] {
    return this.#db
      .prepare(`${CALL_SQL} WHERE id > ? AND batch_id = ? ORDER BY id LIMIT ?`)
      .all(afterId, batchId, limit) as CallRow[]
  }

  /** A task's log lines: its agent's steps, a replay that diverged, an answer lost. */
  taskLog(taskId: number): TaskLogRow[] {
    return this.#db
      .prepare('SELECT seq, ts, kind, message FROM task_log WHERE task_id = ? ORDER BY seq')
      .all(taskId) as TaskLogRow[]
  }

  /** The highest ledger row id now: live export starts after it. */
  lastCallId(): number {
    const row = this.#db.prepare('SELECT MAX(id) AS id FROM ledger_rows').get() as {
      id: number | null
    }
    return row.id ?? 0
  }
}

/** Prompts and answers on the spans (`--otlp-content`), with every secret the process holds cut. */
export interface ContentOption {
  /** Values replaced by `[redacted]` wherever they occur (API keys, OTLP header values). */
  secrets: readonly string[]
}

/** Writes a batch's spans into a pipeline, with ids that follow from what each span stands for. */
export class BatchTraceWriter {
  readonly #p: OtlpPipeline
  readonly #batchId: string
  readonly #traceId: string
  readonly #batchSpanId: string
  /** The task's final answer's finish reason, for its last call (the ledger keeps it per task). */
  readonly #finish = new Map<number, { step: number; reason: string }>()
  /** Task id → its params, for the request attributes of its calls. */
  readonly #params = new Map<number, Attributes>()
  /** Task id → what happened on the way (throttles, retries, replays), for its span's events. */
  readonly #events = new Map<number, { name: string; at: number; attributes: Attributes }[]>()

  /** --otlp-content: prompts and answers go on the task spans, these secrets cut out. */
  readonly #content: ContentOption | null

  constructor(pipeline: OtlpPipeline, batchId: string, content: ContentOption | null = null) {
    this.#p = pipeline
    this.#content = content
    this.#batchId = batchId
    this.#traceId = hex(`pacer:batch:${batchId}`, 32)
    this.#batchSpanId = hex(`pacer:batch-span:${batchId}`, 16)
  }

  /** The trace id every span of this batch has. */
  get traceId(): string {
    return this.#traceId
  }

  /** What the task's call spans take from it; call before `call()` for its rows when known. */
  learnTask(task: TaskRow): void {
    this.#params.set(task.id, requestAttributes(task.params))
    const reason = finishReason(task.result)
    if (reason) this.#finish.set(task.id, { step: task.steps, reason })
  }

  /** The batch's root span, from its creation to its last change. */
  batch(b: BatchRow, counts: { tasks: number }): void {
    this.#p.ids.choose(this.#traceId, this.#batchSpanId)
    const span = this.#p.tracer.startSpan(
      `invoke_workflow ${b.name}`,
      {
        kind: this.#p.api.SpanKind.INTERNAL,
        startTime: b.createdAt,
        attributes: {
          'gen_ai.operation.name': 'invoke_workflow',
          'gen_ai.workflow.name': b.name,
          'pacer.batch.id': b.id,
          'pacer.batch.state': b.state,
          'pacer.batch.tasks': counts.tasks,
        },
      },
      this.#p.api.ROOT_CONTEXT,
    )
    span.end(Math.max(b.updatedAt, b.createdAt))
    this.#p.noteEnded()
  }

  /**
   * A task's span: `invoke_agent {type}`, from its start to its end, with what happened on the way
   * as events; its agent's steps (`log`, its task_log lines) as `execute_tool` spans under it.
   */
  task(t: TaskRow, saved: { savedMicros: number }, log: readonly TaskLogRow[] = []): void {
    this.learnTask(t)
    const start = t.startedAt ?? t.finishedAt ?? 0
    const end = Math.max(start, t.finishedAt ?? start)
    const outcome = taskOutcome(t)
    this.#p.ids.choose(this.#traceId, this.#taskSpanId(t.id))
    const span = this.#p.tracer.startSpan(
      `invoke_agent ${t.type}`,
      {
        kind: this.#p.api.SpanKind.INTERNAL,
        startTime: start,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': t.type,
          'gen_ai.provider.name': providerName(t.provider),
          'gen_ai.request.model': t.model,
          ...this.#params.get(t.id),
          'pacer.task.id': t.id,
          'pacer.task.line': t.seq,
          'pacer.task.fingerprint': t.fp,
          'pacer.task.status': t.status,
          'pacer.task.outcome': outcome,
          'pacer.task.attempts': t.attempts,
          'pacer.task.steps': t.steps,
          'pacer.saved_usd': usd(saved.savedMicros),
          ...(this.#content ? contentAttributes(t, this.#content.secrets) : {}),
        },
      },
      this.#parent(this.#batchSpanId),
    )
    for (const e of this.#events.get(t.id) ?? []) span.addEvent(e.name, e.attributes, e.at)
    this.#events.delete(t.id)
    for (const line of log) {
      if (line.kind === LOG_KINDS.divergence) {
        span.addEvent('pacer.journal.divergence', { 'pacer.log': line.message }, line.ts)
      } else if (line.kind === LOG_KINDS.lost) {
        span.addEvent('pacer.call.answer_lost', { 'pacer.log': line.message }, line.ts)
      }
    }
    if (t.status === 'failed')
      span.setStatus({ code: this.#p.api.SpanStatusCode.ERROR, message: t.error ?? '' })
    span.end(end)
    this.#p.noteEnded()
    this.#steps(t, log)
  }

  /** A ctx.step of the task's agent module: an `execute_tool {name}` span under the task. */
  #steps(t: TaskRow, log: readonly TaskLogRow[]): void {
    for (const line of log) {
      if (line.kind !== LOG_KINDS.step) continue
      const m = STEP_LINE.exec(line.message)
      if (!m) continue
      const [, index, name, ms, replayed] = m
      const start = line.ts - Number(ms ?? 0)
      this.#p.ids.choose(this.#traceId, hex(`pacer:step:${this.#batchId}:${t.id}:${line.seq}`, 16))
      const span = this.#p.tracer.startSpan(
        `execute_tool ${name}`,
        {
          kind: this.#p.api.SpanKind.INTERNAL,
          startTime: start,
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': name!,
            'gen_ai.tool.type': 'function',
            'pacer.step.index': Number(index),
            'pacer.step.outcome': replayed ? 'replayed' : 'executed',
          },
        },
        this.#parent(this.#taskSpanId(t.id)),
      )
      if (replayed)
        span.addEvent('pacer.journal.replay', { 'pacer.step.index': Number(index) }, start)
      span.end(line.ts)
      this.#p.noteEnded()
    }
  }

  /** One ledger row: a CLIENT span for a call; nothing for a reuse (its task span says it). */
  call(r: CallRow): boolean {
    if (r.outcome === 'reused') return false
    const end = r.ts
    const start = end - Math.max(0, r.latencyMs ?? 0)
    const parent = r.taskId === null ? this.#batchSpanId : this.#taskSpanId(r.taskId)
    const finish = r.taskId === null ? undefined : this.#finish.get(r.taskId)
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': providerName(r.provider),
      'gen_ai.request.model': r.model,
      // The ledger keeps the model asked for; providers answer with the same name or a dated
      // alias of it, which Pacer does not record.
      'gen_ai.response.model': r.model,
      ...(r.taskId === null ? {} : this.#params.get(r.taskId)),
      'gen_ai.usage.input_tokens': r.inputTokens,
      'gen_ai.usage.output_tokens': r.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': r.cachedInputTokens,
      'gen_ai.usage.cache_creation.input_tokens': r.cacheWriteTokens,
      'pacer.call.outcome': r.outcome,
      'pacer.call.step': r.step,
      'pacer.ledger.row': r.id,
      'pacer.usage.estimated': r.estimated === 1,
      'pacer.saved_usd': usd(r.savedMicros ?? 0),
      'pacer.wasted_usd': usd(wastedMicros(r)),
    }
    if (r.costMicros !== null) attributes['pacer.cost_usd'] = usd(r.costMicros)
    if (r.status !== null) attributes['http.response.status_code'] = r.status
    if (r.reason !== null) attributes['pacer.call.reason'] = r.reason
    if (finish && finish.step === r.step && r.outcome === 'executed') {
      attributes['gen_ai.response.finish_reasons'] = [finish.reason]
    }
    this.#p.ids.choose(this.#traceId, hex(`pacer:call:${this.#batchId}:${r.id}`, 16))
    const span = this.#p.tracer.startSpan(
      `chat ${r.model}`,
      { kind: this.#p.api.SpanKind.CLIENT, startTime: start, attributes },
      this.#parent(parent),
    )
    if (r.outcome === 'replayed') {
      span.addEvent('pacer.journal.replay', { 'pacer.call.step': r.step }, start)
    }
    if (r.taskId !== null && r.outcome !== 'executed') this.#taskEvent(r)
    const errorType = callErrorType(r)
    if (errorType) {
      span.setAttribute('error.type', errorType)
      span.setStatus({ code: this.#p.api.SpanStatusCode.ERROR, message: r.outcome })
    }
    span.end(end)
    this.#p.noteEnded()
    // A replay is answered from the journal, not by the provider: no client metrics.
    if (r.outcome !== 'replayed') this.#p.recordCall(metricCall(r, errorType))
    return true
  }

  /** A call that was not the task's answer, as an event of the task's span. */
  #taskEvent(r: CallRow): void {
    const name =
      r.outcome === 'throttled'
        ? 'pacer.throttle'
        : r.outcome === 'replayed'
          ? 'pacer.journal.replay'
          : r.outcome === 'error' || r.outcome === 'timeout'
            ? 'pacer.retry'
            : `pacer.call.${r.outcome}`
    const attributes: Attributes = { 'pacer.call.outcome': r.outcome, 'pacer.call.step': r.step }
    if (r.status !== null) attributes['http.response.status_code'] = r.status
    if (r.reason !== null) attributes['pacer.call.reason'] = r.reason
    const events = this.#events.get(r.taskId!)
    const event = { name, at: r.ts, attributes }
    if (events) events.push(event)
    else this.#events.set(r.taskId!, [event])
  }

  #taskSpanId(taskId: number): string {
    return hex(`pacer:task:${this.#batchId}:${taskId}`, 16)
  }

  #parent(spanId: string) {
    return this.#p.api.trace.setSpanContext(this.#p.api.ROOT_CONTEXT, {
      traceId: this.#traceId,
      spanId,
      traceFlags: this.#p.api.TraceFlags.SAMPLED,
      isRemote: false,
    })
  }
}

/** A call's cost counted as wasted: a duplicate's call, or an answer lost (rollups.ts). */
export function wastedMicros(r: Pick<CallRow, 'outcome' | 'reason' | 'costMicros'>): number {
  return r.outcome === 'duplicate' || r.reason === 'answer lost' ? (r.costMicros ?? 0) : 0
}

/** How the task got its answer: executed (ran its calls), reused (a duplicate's), replayed. */
export function taskOutcome(t: Pick<TaskRow, 'status'>): string {
  if (t.status === 'reused') return 'reused'
  if (t.status === 'succeeded' || t.status === 'failed') return 'executed'
  return t.status
}
