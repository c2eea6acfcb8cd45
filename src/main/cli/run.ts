import { basename, resolve } from 'node:path'
import cliProgress from 'cli-progress'
import type { BatchSummary } from '../../shared/contract'
import { formatUsd } from '../../shared/format'
import { formatFromName } from '../../shared/batch-format'
import { runParams, type ParamsOptions } from './params'
import type { AimdParams, ControllerKind, Engine, PartitionStop, StreamedStart } from '../engine'
import { SIM_DEFAULT_MODEL } from '../engine'
import { UsageError, dbPathFrom, processBaseUrls } from './common'
import { openTeamEngine } from './team'
import { EXIT } from './exit-codes'
import { exitNow, noteInterrupted } from './exit-guard'
import { reportHeldAnswers } from './disk-full'
import { holdLiveLine, say } from './terminal-text'
import { pauseAnnouncer, printStop } from './run-report'
import { loadRunAgents, reportUnhandled } from './agents'
import { LineErrorLog, checkReadable, readingBar, rejectLines, reportLineErrors } from './run-input'
import { printSummary, summarize } from './run-summary'
import { budgetReport, refuseOverBudget, reportBudgetStop, restForecast } from './run-budget'
import { startLiveExport, targetFrom } from './otlp'
import { discountJson, discountOf, followBatches, printDiscount } from './batch-api'
import { batchRoute } from './batch-route'

export type { RunSummary } from './run-summary'

export interface RunOptions extends ParamsOptions {
  db?: string
  provider: string
  model?: string
  baseUrl?: string
  simCapacity: number
  simLatencyScale: number
  /** The simulated provider's requests per minute; 0 = no limit. */
  simRpm?: number
  controller?: ControllerKind
  /** false with --no-prompt-cache; true (the stored setting applies) without it. */
  promptCache?: boolean
  minConcurrency?: number
  maxConcurrency?: number
  initialConcurrency?: number
  resultTtl?: number
  lease: number
  /** One provider call's deadline in seconds; the callTimeoutSeconds setting when not given. */
  timeout?: number
  audit?: boolean
  skipInvalid?: boolean
  retryFailed?: boolean
  /** Reuse answers the output cap cut short for their duplicates (default: the setting). */
  acceptTruncated?: boolean
  new?: boolean
  json?: boolean
  /** An agent module whose handlers run the tasks of its types (`--agents`). */
  agents?: string
  /** Pins the module's identity in the fingerprints (`--agent-version`). */
  agentVersion?: string
  /** Team mode: the team's Redis (--store, $PACER_STORE). */
  store?: string
  /** The run's spend cap in USD (--budget), kept with the batch; a rerun's replaces it. */
  budget?: number
  /** Run a batch whose input alone passes a cap until the cap holds the rest (`--up-to-cap`). */
  upToCap?: boolean
  /** An OTLP collector to send spans to as the run goes (else the OTEL_EXPORTER_OTLP_* vars). */
  otlp?: string
  /** With an OTLP target: prompts and answers on the spans, secrets redacted. */
  otlpContent?: boolean
  /** Send the calls as provider batches at the batch price (`--batch-api`), or let `auto` choose. */
  batchApi?: boolean | string
  /** When the answers are needed by (`--deadline`): a duration or an ISO time. */
  deadline?: string
  /** `--batch-api auto` goes through the batch API above this forecast saving, in USD. */
  batchMinSaving?: number
}

/** `pacer run FILE`: queue (or resume) the batch, run it to the end, report; Ctrl-C resumes later. */
export async function runCommand(file: string, opts: RunOptions): Promise<number> {
  const started = Date.now()
  const path = resolve(file)
  // Fail fast on a file that is wrong as a whole, or bad params, before touching the database.
  await checkReadable(path)
  const params = runParams(opts)
  const agents = await loadRunAgents(opts.agents, opts.agentVersion)
  const otlp = targetFrom(opts.otlp, opts.otlpContent === true)

  const scheduler: Partial<AimdParams> = {}
  if (opts.minConcurrency !== undefined) scheduler.min = opts.minConcurrency
  if (opts.maxConcurrency !== undefined) scheduler.max = opts.maxConcurrency
  if (opts.initialConcurrency !== undefined) scheduler.initial = opts.initialConcurrency
  const dbPath = dbPathFrom(opts.db)
  const baseUrls = processBaseUrls(opts.baseUrl, opts.provider)
  // No --model on a real provider: a task naming none is refused (one usage line for all of them).
  const model = opts.model ?? (opts.provider === 'sim' ? SIM_DEFAULT_MODEL : null)
  const defaults = { provider: opts.provider, model, params, agents: agents?.batch }
  const viaBatch = await batchRoute(opts, path, dbPath, defaults)
  const engine = await openTeamEngine(opts.store, {
    checkIntegrity: true,
    dbPath,
    processBaseUrls: baseUrls,
    batchIds: [],
    scheduler,
    controller: opts.controller,
    promptCaching: opts.promptCache === false ? false : undefined,
    sim: {
      capacity: opts.simCapacity,
      latencyScale: opts.simLatencyScale,
      requestsPerMinute: opts.simRpm,
    },
    resultTtlMs: opts.resultTtl === undefined ? undefined : opts.resultTtl * 1000,
    acceptTruncated: opts.acceptTruncated,
    leaseMs: Math.round(opts.lease * 1000),
    callTimeoutMs: opts.timeout === undefined ? undefined : Math.round(opts.timeout * 1000),
    ...viaBatch,
  })

  if (agents) engine.agents.remember(agents.module)
  const audit = opts.audit ?? engine.settings.get().audit
  const errors = new LineErrorLog()
  const out = await queueFile(engine, path, opts, { defaults, audit, errors })
  if (model === null && errors.unnamedModel > 0) {
    await engine.shutdown()
    throw new UsageError(
      `--model is required with --provider ${opts.provider}: ${errors.unnamedModel} task(s) name no model`,
    )
  }
  const start = out.started
  if (!start) {
    await engine.shutdown()
    rejectLines(file, errors, out.valid, out.invalidLines)
  }
  const enqueueMs = Date.now() - started
  const skippedLines = out.invalidLines
  if (skippedLines > 0) {
    reportLineErrors(file, errors)
    say.err(`pacer: skipped ${skippedLines} invalid line(s); queuing ${out.valid}\n`)
  }
  if (agents) reportUnhandled(engine, start.batchId, agents)
  sayStart(out, start, opts)

  // Every call would be refused the same way: said once, before any. The tasks stay queued, so
  // the same command with the fix (--base-url, the key stored for the URL) resumes the batch.
  const refusals = engine.keyRefusals({ batchId: start.batchId })
  if (refusals.length > 0) {
    engine.batches.interrupt(start.batchId)
    await engine.shutdown()
    throw new UsageError(refusals.join('\npacer: '))
  }

  const refused = await refuseOverBudget(engine, start.batchId, opts)
  if (refused !== null) return refused

  engine.onWarning((message) => say.err(`pacer: warning: ${message}\n`))
  const live = await startLiveExport(engine, start.batchId, otlp, opts.otlpContent === true)
  const unfollow = followBatches(engine, opts.json === true)
  const driving = Date.now()
  const { interrupted, batch, stops, budgetStop } = await drive(engine, start.batch, opts)
  const runMs = Date.now() - driving
  unfollow()
  const budget = engine.budgets.state(start.batchId)
  const rest = budgetStop === null ? null : restForecast(engine, start.batchId)
  await live?.finish()
  const summary = summarize(engine, start.batchId, batch, stops, {
    started,
    enqueueMs,
    runMs,
    interrupted,
    resumed: start.resumed,
    skippedLines,
    distinct: engine.queue.distinctTasks(start.batchId),
  })
  const discount = discountOf(engine, start.batchId)
  await engine.shutdown({ graceMs: 0 })

  const budgetJson = budgetReport(budget, budgetStop, rest)
  if (budgetJson) summary.budget = budgetJson
  if (opts.json) {
    const viaBatchJson = discount.calls > 0 ? { viaBatch: discountJson(discount) } : {}
    say.out(`${JSON.stringify({ ...summary, ...viaBatchJson })}\n`)
  } else {
    printSummary(summary, file)
    printDiscount(discount)
  }
  if (budgetStop !== null) reportBudgetStop(budget, batch, budgetStop, rest)
  const lost = reportHeldAnswers(engine)
  if (lost !== null) return lost
  if (stops.length > 0) return EXIT.stopped
  if (budgetStop !== null) return EXIT.budget
  if (interrupted) return EXIT.interrupted
  return summary.failed > 0 || summary.cancelled > 0 ? EXIT.tasksFailed : EXIT.done
}

type StartFile = Parameters<Engine['batches']['startStreamedFile']>[0]

/** Queues (or resumes) the file's batch; a reused key or a changed file is one usage line. */
async function queueFile(
  engine: Engine,
  path: string,
  opts: RunOptions,
  { defaults, audit, errors }: Pick<StartFile, 'defaults' | 'audit'> & { errors: LineErrorLog },
): Promise<StreamedStart> {
  const reading = readingBar(opts)
  let out: StreamedStart
  try {
    out = await engine.batches.startStreamedFile({
      path,
      format: formatFromName(path),
      source: path,
      name: basename(path),
      defaults,
      audit,
      fresh: opts.new,
      retryFailed: opts.retryFailed,
      skipInvalid: opts.skipInvalid,
      onError: (e) => errors.add(e),
      onProgress: reading.update,
    })
  } catch (err) {
    reading.stop()
    await engine.shutdown()
    // A reused idempotency key is bad input; anything else (SQLite trouble) is not.
    const e = err as { code?: string; message: string }
    if (e.code === 'key_reused_with_different_payload' || e.code === 'file_changed') {
      throw new UsageError(e.message)
    }
    throw err
  }
  reading.stop()
  // Its submissions name it, and the console's Resume keeps it on the batch API.
  if (engine.batchApi && out.started) engine.batches.markBatchApi(out.started.batchId)
  return out
}

/** What the run says as it starts: tasks tried again, another run of the same file, a resume. */
function sayStart(
  out: StreamedStart,
  start: NonNullable<StreamedStart['started']>,
  opts: RunOptions,
): void {
  if (start.retried > 0) {
    say.err(`pacer: retrying ${start.retried} task(s) that failed before\n`)
  }
  if (out.live?.owner && !opts.json) {
    const { owner, id } = out.live
    say.err(
      `pacer: batch ${id} of this file is being run by pid ${owner.pid ?? '?'} on ${owner.host ?? '?'}: this run queues its own batch beside it, sharing its claims and results (stop that run and run this command again to resume it instead)\n`,
    )
  }
  if (start.resumed && !opts.json) {
    const b = start.batch
    const done = b.total - b.counts.queued - b.counts.running
    const was = out.resumedFrom
    const gone = was ? `: its run (pid ${was.pid ?? '?'} on ${was.host ?? '?'}) is gone` : ''
    say.err(`pacer: resuming batch ${b.id} (${done} of ${b.total} done)${gone}\n`)
  }
}

/** After a second Ctrl-C, the most the abort may take before the process ends with 130. */
const ABORT_BOUND_MS = 3000

/**
 * Runs until the batch has nothing queued or running. The first Ctrl-C stops admitting and lets
 * in-flight calls finish (bounded); a second one aborts them. Claims are released either way.
 */
async function drive(
  engine: Engine,
  first: BatchSummary,
  opts: RunOptions,
): Promise<{
  interrupted: boolean
  batch: BatchSummary | null
  stops: PartitionStop[]
  budgetStop: string | null
}> {
  const batchId = first.id
  const bar =
    process.stderr.isTTY && !opts.json
      ? new cliProgress.SingleBar(
          {
            format:
              '{bar} {value}/{total} | done {done} reused {reused} failed {failed} | in flight {inflight} limit {limit} | {cost}',
            hideCursor: true,
            // Stopped (done, Ctrl-C, SIGTERM, an error), the bar's line is erased: the summary
            // is written on a clean line, never over a bar fragment.
            clearOnComplete: true,
            // Lines said meanwhile erase the bar (holdLiveLine): the next frame draws it again.
            forceRedraw: true,
            stream: process.stderr,
          },
          cliProgress.Presets.shades_classic,
        )
      : null
  let releaseLine = () => {}
  const stopBar = () => {
    bar?.stop()
    releaseLine()
  }

  let pausedNoticed = false
  // The live line: the bar is redrawn under it.
  const onStop = (stop: PartitionStop) => printStop(stop)
  engine.scheduler.on('stopped', onStop)
  const onPause = pauseAnnouncer()
  engine.scheduler.on('pause', onPause)
  const run = engine.batches.drive(batchId, {
    onProgress: (b) => {
      const unfinished = b ? b.counts.queued + b.counts.running : 0
      if (bar?.isActive && b) bar.update(b.total - unfinished, progressPayload(engine, batchId, b))
      if (b?.state === 'paused' && !pausedNoticed) {
        pausedNoticed = true
        stopBar()
        say.err(
          `pacer: batch ${batchId} was paused (from the console); waiting for it to resume (Ctrl-C stops this run)\n`,
        )
      } else if (b?.state !== 'paused') {
        pausedNoticed = false
      }
    },
  })
  let signals = 0
  const onSignal = () => {
    signals++
    noteInterrupted()
    if (signals === 1) {
      say.err(
        '\npacer: stopping: no new calls, letting in-flight calls finish (Ctrl-C again to abort them)\n',
      )
      run.stop()
    } else {
      // Abort at once: calls are aborted and claims given back; a handler that ignores its
      // signal does not hold the process past a short bound (its lease lapses instead).
      say.err('\npacer: aborting\n')
      run.abort()
      setTimeout(() => {
        stopBar()
        exitNow(EXIT.interrupted)
      }, ABORT_BOUND_MS).unref()
    }
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  // Drawn only once Ctrl-C is ours: a signal between the first frame and the handlers ended the
  // process by default, leaving the bar, a hidden cursor and line wrapping off behind it.
  if (bar) {
    bar.start(first.total, 0, progressPayload(engine, batchId, first))
    releaseLine = holdLiveLine()
  }
  try {
    return await run.done
  } finally {
    engine.scheduler.off('stopped', onStop)
    engine.scheduler.off('pause', onPause)
    // Before anything else is printed, the error's message included.
    stopBar()
  }
}

function progressPayload(engine: Engine, batchId: string, b: BatchSummary | null) {
  const partitions = engine.scheduler.snapshot()
  // What this process spent on the batch, counted as its calls were recorded.
  const cost = engine.ledger.recordedCost(batchId)
  return {
    done: (b?.counts.succeeded ?? 0) + (b?.counts.reused ?? 0),
    reused: b?.counts.reused ?? 0,
    failed: b?.counts.failed ?? 0,
    inflight: partitions.reduce((n, p) => n + p.inflight, 0),
    limit: partitions.map((p) => p.limit.toFixed(1)).join('/') || '-',
    cost: formatUsd(cost),
  }
}
