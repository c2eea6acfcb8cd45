// The CLI's OpenTelemetry export: `pacer export --otlp URL` for a finished batch, and the live
// export `pacer run --otlp URL` (or the OTEL_EXPORTER_OTLP_* variables) starts beside a run.
// What is printed names the target by URL and header *names*: header values are credentials.
import type { Engine, OtlpTarget, TraceExportReport } from '../engine'
import {
  LiveTraceExport,
  OtlpConfigError,
  contentOption,
  loadOtelSdk,
  describeTarget,
  droppedLine as engineDroppedLine,
  exportBatchTrace,
  otlpTarget,
} from '../engine'
import { UsageError, openReader } from './common'
import { EXIT } from './exit-codes'
import { say } from './terminal-text'

/**
 * How long a run waits at its end for the collector, and one export's deadline (retries
 * included) during a run: the SDK's retry timers hold the process until that deadline, so
 * together they bound what a collector that is down or slow adds to a run.
 */
const RUN_CLOSE_MS = 1500
/** `pacer export --otlp` is the point of the command: it waits longer, still bounded. */
const EXPORT_CLOSE_MS = 15_000

/**
 * The target from `--otlp` and the environment; a bad setting is a usage error, and so is
 * `--otlp-content` with no target.
 */
export function targetFrom(flagUrl: string | undefined, content = false): OtlpTarget | null {
  try {
    const target = otlpTarget(flagUrl, process.env)
    if (content && !target) {
      throw new UsageError('--otlp-content goes with --otlp URL (or OTEL_EXPORTER_OTLP_ENDPOINT)')
    }
    // Loaded while the batch is read and queued, not before its first call. A load that fails
    // is said when the export starts.
    if (target) loadOtelSdk().catch(() => undefined)
    return target
  } catch (err) {
    if (err instanceof OtlpConfigError) throw new UsageError(err.message)
    throw err
  }
}

/** `pacer export --otlp URL [--batch ID]`: one finished batch from the ledger, as one trace. */
export async function exportOtlpCommand(opts: {
  db?: string
  otlp: string
  batch?: string
  json?: boolean
  otlpContent?: boolean
}): Promise<number> {
  const target = targetFrom(opts.otlp)!
  const engine = openReader(opts.db)
  try {
    const report = await exportBatchTrace(engine.db, target, {
      batchId: opts.batch,
      closeMs: EXPORT_CLOSE_MS,
      content: opts.otlpContent ? contentOption(process.env, target) : null,
    })
    if (!report) {
      throw new UsageError(
        opts.batch
          ? `no batch ${opts.batch} in ${engine.dbPath} (see pacer batches)`
          : `no finished batch in ${engine.dbPath}: name one with --batch (see pacer batches)`,
      )
    }
    if (opts.json) say.out(`${JSON.stringify(report)}\n`)
    say.err(
      `batch ${report.batchId} (${report.tasks} task(s), ${report.calls} call(s)) as trace ` +
        `${report.traceId} to ${describeTarget(target)}: ${report.delivered} of ${report.ended} span(s) accepted\n`,
    )
    if (report.dropped > 0 || !report.complete) {
      say.err(droppedLine(report, target))
      if (!report.complete) {
        say.err(
          'pacer: OTLP export stopped at the first refusal: the rest of the batch was not sent\n',
        )
      }
      // The collector did not take it all: like a server not reachable, fix it and run it again.
      return EXIT.stopped
    }
    return EXIT.done
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** A run's live export, or null when none is configured. */
export async function startLiveExport(
  engine: Engine,
  batchId: string,
  target: OtlpTarget | null,
  content = false,
): Promise<{ finish: () => Promise<void> } | null> {
  if (!target) return null
  let live: LiveTraceExport
  try {
    live = await LiveTraceExport.start(engine.db, target, batchId, {
      pipeline: { exportTimeoutMs: RUN_CLOSE_MS },
      content: content ? contentOption(process.env, target) : null,
    })
  } catch (err) {
    // Export never fails a run: without the SDK the run goes on, untraced, and says so.
    say.err(`pacer: OTLP export is off for this run: ${(err as Error).message}\n`)
    return null
  }
  const unsubscribe = engine.subscribe('tasks:changed', ({ tasks }) => {
    for (const t of tasks) {
      if (t.status !== 'queued' && t.status !== 'running') live.taskEnded(t.id)
    }
  })
  return {
    finish: async () => {
      unsubscribe()
      const report = await live.finish(RUN_CLOSE_MS)
      // Said once, at the end: the run is never interrupted by a collector's trouble.
      if (report.dropped > 0) say.err(droppedLine(report, target))
    },
  }
}

function droppedLine(r: TraceExportReport, target: OtlpTarget): string {
  return `pacer: ${engineDroppedLine(r, target)}\n`
}
