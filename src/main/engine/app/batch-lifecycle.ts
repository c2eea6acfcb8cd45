import { createHash } from 'node:crypto'
import { stat } from 'node:fs/promises'
import type { BatchSummary, LineError } from '../../../shared/contract'
import type { ParsedTask } from '../intake/batch-file'
import type { BatchAgents } from '../agents/registry'
import { EngineError } from '../core/errors'
import { checkIdempotencyKey } from '../intake/idempotency-keys'
import type { NewBatch } from '../queue/queue'
import { driveBatch, type BatchRun, type DriveOptions } from './batch-run'
import {
  forecastStreamedFile,
  startStreamedFile,
  type ForecastFile,
  type StreamedFile,
  type StreamedForecast,
  type StreamedStart,
} from './batch-stream'
import type { EngineEvents } from './events'
import { cancelBatchCheck } from '../providers/batch/cancel-batch'
import { forgetFailure, retryTeamFailures, type EngineParts } from './parts'
import {
  taskResolver,
  type FileBatch,
  type ResolvedTask,
  type StartedFile,
  type TaskDefaults,
} from './task-defaults'

export type { ResolvedTask } from '../intake/task-resolver'
export { resolveRules, taskResolver } from './task-defaults'
export type { FileBatch, StartedFile, TaskDefaults } from './task-defaults'

/**
 * Where a batch's state changes: queued, resumed, paused, cancelled, retried, interrupted. The
 * console's commands and `pacer run` both go through here, so a batch moves the same way whoever
 * moves it.
 */
export class BatchLifecycle {
  readonly #parts: EngineParts
  readonly #events: EngineEvents
  readonly #start: () => void

  /** `start` starts the engine's runner (once), for `drive`. */
  constructor(parts: EngineParts, events: EngineEvents, start: () => void) {
    this.#parts = parts
    this.#events = events
    this.#start = start
  }

  /**
   * Gives each task its provider and model (the defaults, or the settings'), checks them, and
   * computes its claim identity. Problems come back per line, nothing throws.
   */
  resolve(
    tasks: readonly ParsedTask[],
    defaults?: TaskDefaults,
  ): { tasks: ResolvedTask[]; errors: LineError[] } {
    const resolveOne = taskResolver(this.#parts, defaults)
    const resolved: ResolvedTask[] = []
    const errors: LineError[] = []
    for (const t of tasks) {
      const r = resolveOne(t, errors)
      if (r) resolved.push(r)
    }
    return { tasks: resolved, errors }
  }

  /** Queues resolved tasks as one batch (all or nothing); returns its id. */
  enqueue(
    tasks: readonly ResolvedTask[],
    batch: Omit<NewBatch, 'state'>,
    agents?: BatchAgents,
    /** The run's cap (`pacer run --budget`, the console's import), set before a task can start. */
    budgetMicros?: number,
  ): string {
    const { db, clock, queue, runner, writes } = this.#parts
    const now = clock.now()
    const id = writes.run(() =>
      db
        .transaction(() => {
          for (const t of tasks) {
            if (t.key === null) continue
            try {
              // A key names one execution: the same key with another payload, model or step count
              // is a different request, refused like Stripe refuses it.
              checkIdempotencyKey(db, t.key, t.runFp, now)
            } catch (err) {
              throw EngineError.from(err, `line ${t.line}`)
            }
          }
          const id = queue.createBatch(
            batch,
            tasks.map((t) => ({
              seq: t.line,
              type: t.type,
              payloadJson: t.payloadJson,
              fp: t.fp,
              key: t.key,
              steps: t.steps,
              provider: t.provider,
              model: t.model,
              paramsJson: t.paramsJson,
            })),
          )
          // Before the runner can pick a task of it: its tasks must not start on the built-in loop.
          if (agents) this.#parts.agents.attach(id, agents)
          if (budgetMicros !== undefined) this.#parts.budget.setCap(id, budgetMicros)
          return id
        })
        .immediate(),
    )
    writes.commit()
    runner.addBatch(id)
    this.#events.batchChanged(id)
    return id
  }

  /**
   * "Resume or enqueue this file": the latest interrupted batch of the same file (same content,
   * defaults and audit mode) is resumed by this engine, unless `fresh`; otherwise the tasks are
   * queued as a new batch this engine drives. Completed tasks of a resumed batch are not re-run.
   */
  startFile(file: FileBatch): StartedFile {
    const { queue, runner } = this.#parts
    let retried = 0
    if (file.retryFailed)
      for (const t of file.tasks) if (forgetFailure(this.#parts, t.fp)) retried++
    const { provider, model, params, agents } = file.defaults
    const sourceHash = createHash('sha256')
      .update(file.content)
      .update(JSON.stringify({ audit: file.audit, provider, model, params, agents }))
      .digest('hex')
    // Tasks of a killed run come back to the queue first, so this run can resume that batch.
    runner.sweepExpired()
    const resumable = file.fresh ? null : queue.findResumable(sourceHash)
    const startedAt = this.#parts.clock.now()
    if (resumable && this.resume(resumable, { driver: runner.workerId, fromPaused: false })) {
      if (file.retryFailed) retryTeamFailures(this.#parts, resumable, startedAt)
      return { batchId: resumable, resumed: true, retried, batch: this.get(resumable) }
    }
    const batchId = this.enqueue(
      file.tasks,
      {
        driver: runner.workerId,
        name: file.name,
        source: file.source,
        sourceHash,
        audit: file.audit,
      },
      agents,
    )
    // Before any task of it meets the team's answer: the runner reads it after a round trip.
    if (file.retryFailed) retryTeamFailures(this.#parts, batchId, startedAt)
    return { batchId, resumed: false, retried, batch: this.get(batchId) }
  }

  /**
   * startFile for a file on disk, read line by line into one transaction (batch-stream.ts): the
   * same resume-or-enqueue, in the memory of a chunk and a line whatever the file's size.
   */
  async startStreamedFile(file: StreamedFile): Promise<StreamedStart> {
    const size = (await stat(file.path)).size
    const out = await startStreamedFile(
      {
        parts: this.#parts,
        resume: (batchId, driver) => this.resume(batchId, { driver, fromPaused: false }),
        started: (batchId, resumed, retried) => ({
          batchId,
          resumed,
          retried,
          batch: this.get(batchId),
        }),
      },
      file,
      size,
    )
    if (out.started) this.#events.batchChanged(out.started.batchId)
    return out
  }

  /** The forecast of a file on disk, read line by line (`pacer forecast`). */
  async forecastFile(file: ForecastFile): Promise<StreamedForecast> {
    const size = (await stat(file.path)).size
    return forecastStreamedFile(this.#parts, file, size)
  }

  /**
   * Puts an interrupted batch (and, `fromPaused`, a paused one) back to running. An interrupted
   * batch's driver has stopped, so it passes to `driver`: the resuming `pacer run`, or null for
   * the consoles; a paused one keeps its driver, which is still waiting for it. False when the
   * batch was in neither state (then nothing changes).
   */
  resume(batchId: string, opts: { driver: string | null; fromPaused: boolean }): boolean {
    const { db, queue, runner, writes } = this.#parts
    // A batch whose driver is gone is interrupted, and its tasks and claims are free, from now.
    runner.sweepExpired()
    const resumed = writes.run(() =>
      db
        .transaction(() => {
          if (queue.setBatchState(batchId, 'running', ['interrupted'])) {
            queue.setDriver(batchId, opts.driver)
            return true
          }
          return opts.fromPaused && queue.applyBatchAction(batchId, 'resume')
        })
        .immediate(),
    )
    writes.commit()
    if (!resumed) return false
    // Resuming means "the cause is fixed": the partitions that stopped it may send again (if not,
    // the first answer stops them again), and the reason is forgotten.
    queue.setStopReason(batchId, null)
    for (const p of runner.takeHolding(batchId)) this.#parts.scheduler.resume(p)
    // Everything may have finished while it was paused: then it is simply done.
    queue.settleBatch(batchId)
    runner.addBatch(batchId)
    this.#events.batchChanged(batchId)
    return true
  }

  /**
   * The batch's calls go through the vendors' batch APIs, on this engine's batch path: its
   * submissions name it, and a resume from the console keeps it there (never live at full price).
   */
  markBatchApi(batchId: string): void {
    const { queue, writes, batchApi } = this.#parts
    writes.run(() => queue.setBatchApi(batchId))
    writes.commit()
    if (batchApi) batchApi.batchId = batchId
    this.#events.batchChanged(batchId)
  }

  /**
   * A running batch its driver will not run after all (a refused key, a cap its input alone
   * passes): left for a resume, with the reason when one is given.
   */
  interrupt(batchId: string, reason?: string): void {
    const { queue } = this.#parts
    if (queue.setBatchState(batchId, 'interrupted', ['running'])) {
      if (reason !== undefined) queue.setStopReason(batchId, reason)
      this.#events.batchChanged(batchId)
    }
  }

  /** No new task of the batch starts, in any process; tasks under way finish their steps. */
  pause(batchId: string): void {
    this.#parts.queue.applyBatchAction(batchId, 'pause')
    this.#events.batchChanged(batchId)
  }

  /** Nothing more of the batch runs: queued tasks are cancelled, this process's calls aborted. */
  cancel(batchId: string): void {
    const { queue, runner } = this.#parts
    queue.applyBatchAction(batchId, 'cancel')
    queue.cancelQueued(batchId)
    runner.cancelRunning(batchId)
    this.#events.batchChanged(batchId)
  }

  /** Failed or cancelled tasks go back to the queue; returns how many. */
  retry(filter: { batchId?: string; taskIds?: readonly number[] }): number {
    const { queue, runner } = this.#parts
    const { count, fps } = queue.retry(filter)
    // A retry means "try again": a failure kept as a result would answer it without trying.
    for (const fp of fps) forgetFailure(this.#parts, fp)
    // In team mode a task claimed before the store forgot its failure would be answered by it
    // again (seen on CI: two engines on one Redis): the runner forgets failures older than now.
    if (filter.batchId) retryTeamFailures(this.#parts, filter.batchId, this.#parts.clock.now())
    if (filter.batchId) runner.addBatch(filter.batchId)
    runner.pump()
    return count
  }

  /**
   * Runs the engine until the batch has nothing queued or running, is cancelled, or the run is
   * stopped: `pacer run` driving its batch. A stopped run leaves the batch interrupted, for the
   * same command to resume later.
   */
  drive(batchId: string, opts: DriveOptions = {}): BatchRun {
    const { queue, runner, batchApi } = this.#parts
    return driveBatch(
      {
        batchId,
        runner,
        ...(batchApi ? { landing: cancelBatchCheck(batchApi, batchId) } : {}),
        start: this.#start,
        batch: () => queue.batch(batchId),
        progress: () => queue.progress(batchId),
        commit: () => this.#parts.writes.commit(),
        interrupt: (reason) => {
          if (queue.setBatchState(batchId, 'interrupted', ['running']) && reason !== null) {
            queue.setStopReason(batchId, reason)
          }
          this.#events.batchChanged(batchId)
        },
        onStopped: (listener) => {
          this.#parts.scheduler.on('stopped', listener)
          return () => this.#parts.scheduler.off('stopped', listener)
        },
      },
      opts,
    )
  }

  /** The batch as it stands, or a not_found error naming `batchId`. */
  get(batchId: string): BatchSummary {
    const b = this.#parts.queue.batch(batchId)
    if (!b) throw new EngineError('not_found', `no batch with id ${batchId}`, 'batchId')
    return b
  }
}
