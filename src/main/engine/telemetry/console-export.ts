// Live export of the batches a console drives (`pacer serve`, the desktop app): each batch this
// process's runner works on gets a LiveTraceExport when its first task moves, fed by the runner's
// task events and finished when the batch is done or cancelled. The target is asked for each
// time a batch starts, so an endpoint saved in Settings applies from the next batch on. Like
// `pacer run --otlp`, it never slows or fails a run: drops are said once per batch, at its end.
import type Database from 'better-sqlite3'
import type { TaskEvent } from '../runner/events'
import { ENV_NAMES } from '../providers/keys'
import { BatchTraceReader, type ContentOption } from './batch-trace'
import { LiveTraceExport, type TraceExportReport } from './export'
import { describeTarget, redactTarget, type OtlpTarget } from './otlp-config'
import { OtlpPipeline } from './pipeline'

/** What the console export listens to: the runner's events. */
export interface RunnerEventsLike {
  on(event: 'task', listener: (e: TaskEvent) => void): unknown
  on(event: 'batch', listener: (batchId: string) => void): unknown
  off(event: 'task', listener: (e: TaskEvent) => void): unknown
  off(event: 'batch', listener: (batchId: string) => void): unknown
}

/** One export request's deadline, and how long a batch's end waits for the collector. */
const CLOSE_MS = 1500
const ENDED = new Set(['succeeded', 'failed', 'reused', 'cancelled'])

interface Live {
  target: OtlpTarget
  export: Promise<LiveTraceExport | null>
}

/** Starts and finishes the live exports of a console's batches. */
export class ConsoleTraceExport {
  readonly #db: Database.Database
  readonly #runner: RunnerEventsLike
  readonly #target: () => OtlpTarget | null
  readonly #content: (target: OtlpTarget) => ContentOption | null
  readonly #warn: (message: string) => void
  readonly #reader: BatchTraceReader
  readonly #live = new Map<string, Live>()
  readonly #finishing = new Set<Promise<void>>()
  #closed = false

  constructor(opts: {
    db: Database.Database
    runner: RunnerEventsLike
    /** Where spans go now (process flag/environment, else Settings); null: no export. */
    target: () => OtlpTarget | null
    /** --otlp-content: prompts and answers on the spans, these secrets cut; null: not. */
    content?: (target: OtlpTarget) => ContentOption | null
    warn: (message: string) => void
  }) {
    this.#db = opts.db
    this.#runner = opts.runner
    this.#target = opts.target
    this.#content = opts.content ?? (() => null)
    this.#warn = opts.warn
    this.#reader = new BatchTraceReader(opts.db)
    this.#runner.on('task', this.#onTask)
    this.#runner.on('batch', this.#onBatch)
  }

  /** The batches being exported now (tests, Settings). */
  get active(): number {
    return this.#live.size
  }

  readonly #onTask = (e: TaskEvent): void => {
    if (this.#closed) return
    let live = this.#live.get(e.batchId)
    if (!live) {
      let target: OtlpTarget | null
      try {
        target = this.#target()
      } catch (err) {
        this.#warn(`OTLP export is off: ${(err as Error).message}`)
        return
      }
      if (!target) return
      live = { target, export: this.#start(e.batchId, target) }
      this.#live.set(e.batchId, live)
    }
    if (ENDED.has(e.status)) {
      void live.export.then((x) => x?.taskEnded(e.taskId))
    }
  }

  readonly #onBatch = (batchId: string): void => {
    const live = this.#live.get(batchId)
    if (!live) return
    let state: string | undefined
    try {
      state = this.#reader.batch(batchId)?.state
    } catch {
      return
    }
    if (state === 'done' || state === 'cancelled') this.#finish(batchId, live)
  }

  async #start(batchId: string, target: OtlpTarget): Promise<LiveTraceExport | null> {
    try {
      return await LiveTraceExport.start(this.#db, target, batchId, {
        pipeline: { exportTimeoutMs: CLOSE_MS },
        content: this.#content(target),
      })
    } catch (err) {
      this.#warn(`OTLP export is off for batch ${batchId}: ${(err as Error).message}`)
      return null
    }
  }

  #finish(batchId: string, live: Live): void {
    this.#live.delete(batchId)
    const done = live.export
      .then(async (x) => {
        if (!x) return
        const report = await x.finish(CLOSE_MS)
        if (report.dropped > 0) this.#warn(droppedLine(report, live.target))
      })
      .catch(() => undefined)
      .finally(() => this.#finishing.delete(done))
    this.#finishing.add(done)
  }

  /** Stops listening; every batch still exported is finished (bounded: CLOSE_MS each, at once). */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#runner.off('task', this.#onTask)
    this.#runner.off('batch', this.#onBatch)
    for (const [batchId, live] of [...this.#live]) this.#finish(batchId, live)
    await Promise.all([...this.#finishing])
  }
}

/**
 * `--otlp-content`'s redaction: the API keys in the environment, the target's header values and
 * `more` (keys stored in Settings) are cut out of prompts and answers, as from provider errors.
 */
export function contentOption(
  env: NodeJS.ProcessEnv,
  target: OtlpTarget,
  more: readonly (string | null)[] = [],
): ContentOption {
  const secrets = [
    ...Object.values(ENV_NAMES).map((n) => env[n.key]),
    ...Object.values(target.headers),
    // A header like `Basic <token>`: the token alone too.
    ...Object.values(target.headers).flatMap((v) => v.split(/\s+/)),
    ...more,
  ].filter((s): s is string => typeof s === 'string' && s.length >= 8)
  return { secrets: [...new Set(secrets)] }
}

/** The line said once when a batch's export dropped spans. */
export function droppedLine(r: TraceExportReport, target: OtlpTarget): string {
  return (
    `OTLP export: ${r.dropped} of ${r.ended} span(s) dropped (the collector at ` +
    `${describeTarget(target)} was down, slow or refused them); the ledger has every call: ` +
    `pacer export --otlp URL --batch ${r.batchId} sends them again`
  )
}

/** What the Settings' Test button reports. */
export interface OtlpTestResult {
  ok: boolean
  /** One line: where the span went and what the collector said (never a header's value). */
  message: string
}

/**
 * Sends one span (`pacer test`) to `target` and waits, at most `boundMs`, for the collector to
 * accept it.
 */
export async function sendTestSpan(target: OtlpTarget, boundMs = 5000): Promise<OtlpTestResult> {
  const where = describeTarget(target)
  let pipeline: OtlpPipeline
  try {
    pipeline = await OtlpPipeline.open(target, { exportTimeoutMs: boundMs, scheduledDelayMs: 0 })
  } catch (err) {
    return {
      ok: false,
      message: `could not start the OpenTelemetry SDK: ${(err as Error).message}`,
    }
  }
  const span = pipeline.tracer.startSpan('pacer test', {
    attributes: { 'pacer.test': true },
  })
  span.end()
  pipeline.noteEnded()
  const counts = await pipeline.close(boundMs)
  if (counts.delivered === 1) {
    return { ok: true, message: `the collector at ${where} accepted a test span` }
  }
  const why = pipeline.lastError
    ? redactTarget(pipeline.lastError, target)
    : `no answer within ${Math.round(boundMs / 1000)} s`
  return { ok: false, message: `the collector at ${where} did not accept the test span: ${why}` }
}
