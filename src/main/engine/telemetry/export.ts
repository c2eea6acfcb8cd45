// Sending a batch's trace: all at once from the ledger (`pacer export --otlp`), or live while a
// run drives it. Both read the same rows and write them through the same BatchTraceWriter, so a
// batch sent live and sent again afterwards is the same trace.
import type Database from 'better-sqlite3'
import {
  BatchTraceReader,
  BatchTraceWriter,
  type CallRow,
  type ContentOption,
  type TaskRow,
} from './batch-trace'
import type { OtlpTarget } from './otlp-config'
import { OtlpPipeline, type DeliveryCounts, type PipelineOptions } from './pipeline'

/** What one export sent. */
export interface TraceExportReport extends DeliveryCounts {
  batchId: string
  traceId: string
  tasks: number
  calls: number
  /** false: the collector failed a page and the rest of the batch was not sent. */
  complete: boolean
}

/** Sends one batch (or the latest finished one) from the ledger; null when there is none. */
export async function exportBatchTrace(
  db: Database.Database,
  target: OtlpTarget,
  opts: {
    batchId?: string
    closeMs?: number
    pipeline?: PipelineOptions
    content?: ContentOption | null
  } = {},
): Promise<TraceExportReport | null> {
  const reader = new BatchTraceReader(db)
  const batch = reader.batch(opts.batchId)
  if (!batch) return null
  const pipeline = await OtlpPipeline.open(target, opts.pipeline)
  const writer = new BatchTraceWriter(pipeline, batch.id, opts.content ?? null)
  // Page by page, each sent before the next is read: a batch of a million tasks costs a page of
  // memory and never overflows the queue (only the collector can drop spans).
  // A collector that failed a page fails the next ones too: stop there instead of waiting out
  // a deadline per page; the report says so, and the whole batch can be sent again.
  let complete = true
  const flush = async () => {
    await pipeline.flush(opts.closeMs ?? 10_000)
    complete = pipeline.counts().dropped === 0
  }
  let tasks = 0
  for (let page = reader.tasks(batch.id, 0, PAGE); page.length;) {
    for (const t of page) writer.learnTask(t)
    tasks += page.length
    page = reader.tasks(batch.id, page.at(-1)!.id, PAGE)
  }
  let sentCalls = 0
  const saved = new Map<number, number>()
  for (let page = reader.calls(batch.id, 0, PAGE); page.length;) {
    for (const c of page) {
      if (writer.call(c)) sentCalls++
      else if (c.taskId !== null) {
        saved.set(c.taskId, (saved.get(c.taskId) ?? 0) + (c.savedMicros ?? 0))
      }
    }
    await flush()
    page = complete ? reader.calls(batch.id, page.at(-1)!.id, PAGE) : []
  }
  for (let page = complete ? reader.tasks(batch.id, 0, PAGE) : []; page.length;) {
    for (const t of page) {
      writer.task(t, { savedMicros: saved.get(t.id) ?? 0 }, reader.taskLog(t.id))
    }
    await flush()
    page = complete ? reader.tasks(batch.id, page.at(-1)!.id, PAGE) : []
  }
  if (complete) writer.batch(batch, { tasks })
  const counts = await pipeline.close(opts.closeMs ?? 10_000)
  const report = { batchId: batch.id, traceId: writer.traceId, tasks, calls: sentCalls }
  return { ...report, complete, ...counts }
}

/** Rows read and sent at a time by `pacer export --otlp`: half the span queue. */
const PAGE = 1000

/**
 * A run's batch sent as it goes: a task's call spans and its own span once it ends (so they carry
 * what only the end knows: the finish reason, the reuse), read from the ledger on a timer, never
 * on the path of a call. `taskEnded` is fed from the engine's task events.
 */
export class LiveTraceExport {
  readonly #reader: BatchTraceReader
  readonly #writer: BatchTraceWriter
  readonly #pipeline: OtlpPipeline
  readonly #batchId: string
  readonly #timer: NodeJS.Timeout
  #afterId: number
  /** Ledger rows of tasks not ended yet, by task id. */
  readonly #pending = new Map<number, CallRow[]>()
  readonly #ended = new Set<number>()
  readonly #sent = new Set<number>()
  #calls = 0
  #closed = false

  /** Loads the SDK and starts reading the batch's ledger rows every `everyMs`. */
  static async start(
    db: Database.Database,
    target: OtlpTarget,
    batchId: string,
    opts: { everyMs?: number; pipeline?: PipelineOptions; content?: ContentOption | null } = {},
  ): Promise<LiveTraceExport> {
    const pipeline = await OtlpPipeline.open(target, opts.pipeline)
    const writer = new BatchTraceWriter(pipeline, batchId, opts.content ?? null)
    return new LiveTraceExport(db, pipeline, writer, batchId, opts.everyMs ?? 500)
  }

  private constructor(
    db: Database.Database,
    pipeline: OtlpPipeline,
    writer: BatchTraceWriter,
    batchId: string,
    everyMs: number,
  ) {
    this.#reader = new BatchTraceReader(db)
    this.#pipeline = pipeline
    this.#writer = writer
    this.#batchId = batchId
    // Rows already in the ledger (a resumed batch's earlier runs) are sent too: the trace is the
    // batch's, whoever ran which part.
    this.#afterId = 0
    this.#timer = setInterval(() => this.#tick(), everyMs)
    this.#timer.unref()
  }

  /** A task of the batch reached an end state (engine event): its spans go out on the next tick. */
  taskEnded(taskId: number): void {
    if (!this.#sent.has(taskId)) this.#ended.add(taskId)
  }

  /**
   * The run is over: the last rows, every task not yet sent, the batch span; then a close bounded
   * by `closeMs` whatever the collector does.
   */
  async finish(closeMs: number): Promise<TraceExportReport> {
    clearInterval(this.#timer)
    if (this.#closed) throw new Error('live export already finished')
    this.#closed = true
    let tasks = 0
    try {
      this.#tick()
      const all = this.#reader.tasks(this.#batchId)
      for (const t of all) {
        if (!this.#sent.has(t.id) && (t.startedAt !== null || this.#pending.has(t.id))) {
          this.#sendTask(t)
        }
      }
      tasks = this.#sent.size
      for (const rows of this.#pending.values()) for (const r of rows) this.#sendCall(r)
      this.#pending.clear()
      const batch = this.#reader.batch(this.#batchId)
      if (batch) this.#writer.batch(batch, { tasks: all.length })
    } catch {
      // A database that cannot be read now (closing, full) costs the trace its tail, not the run.
    }
    const counts = await this.#pipeline.close(closeMs)
    return {
      batchId: this.#batchId,
      traceId: this.#writer.traceId,
      tasks,
      calls: this.#calls,
      complete: true,
      ...counts,
    }
  }

  #tick(): void {
    try {
      for (const r of this.#reader.calls(this.#batchId, this.#afterId)) {
        this.#afterId = r.id
        if (r.taskId === null) this.#sendCall(r)
        else {
          const rows = this.#pending.get(r.taskId)
          if (rows) rows.push(r)
          else this.#pending.set(r.taskId, [r])
        }
      }
      if (this.#ended.size === 0) return
      const ids = [...this.#ended]
      this.#ended.clear()
      for (const t of this.#reader.tasksById(ids)) this.#sendTask(t)
    } catch {
      // Export never fails a run: a read that fails now is tried again on the next tick.
    }
  }

  #sendTask(t: TaskRow): void {
    this.#sent.add(t.id)
    this.#writer.learnTask(t)
    const rows = this.#pending.get(t.id) ?? []
    this.#pending.delete(t.id)
    let saved = 0
    for (const r of rows) {
      if (r.outcome === 'reused') saved += r.savedMicros ?? 0
      this.#sendCall(r)
    }
    this.#writer.task(t, { savedMicros: saved }, this.#reader.taskLog(t.id))
  }

  #sendCall(r: CallRow): void {
    if (this.#writer.call(r)) this.#calls++
  }
}
