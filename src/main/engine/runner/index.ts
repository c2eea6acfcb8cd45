import { EventEmitter } from 'node:events'
import type { QueuedTask } from '../queue/queue'
import { processTask } from './claim'
import { StopSignal, stopTask, type Active, type Finish, type RunContext } from './context'
import { resolveRunnerOptions, type ResolvedRunnerOptions, type RunnerOptions } from './options'
import { otherFailure } from './retry'
import { checkCallTimeout } from './options'
import { endOfTurn } from '../db/step-writes'
import { GiveBacks, persistEnd, sendGate } from './durable/held-writes'
import { PartitionStoppedError } from '../pacing/scheduler'
import { BudgetStopError } from '../pacing/spend-budget'
import type { RunnerEvents } from './events'
import { HeldBatches } from './held-batches'
import { LeaseRenewals } from './renewals'

export type { RetryRun, RunnerOptions } from './options'
export type { DivergenceEvent, JournalParts } from './durable/effects-journal'
export type { RunnerEvents, TaskEvent } from './events'

/**
 * queue → claim → run steps through the scheduler → save → ledger. One per process; any number of
 * processes may run on one database: the queue pick and the claims are atomic across them.
 */
export class Runner extends EventEmitter<RunnerEvents> {
  readonly #o: ResolvedRunnerOptions
  readonly #active = new Map<number, Active>()
  /** Tasks waiting on another worker's claim: they hold no slot. */
  readonly #waiting = new Set<number>()
  #running = false
  #stopping = false
  #pumping = false
  #pollTimer: NodeJS.Timeout | undefined
  #renewTimer: NodeJS.Timeout | undefined
  #pumpScheduled = false
  /** Batches a task of which ended this turn: settled (and announced) once, when it ends. */
  readonly #settling = new Set<string>()
  /** What a task's execution (claim.ts, execute.ts, call.ts) sees of this runner. */
  readonly #ctx: RunContext
  readonly #held = new HeldBatches()
  /** Claims and tasks the full disk kept this process from giving back: when it takes writes. */
  readonly #giveBacks: GiveBacks
  readonly #renewals: LeaseRenewals

  constructor(options: RunnerOptions) {
    super()
    this.#o = resolveRunnerOptions(options)
    this.#ctx = {
      o: this.#o,
      journal: this.#o.journal,
      divergence: (event) => {
        this.emit('divergence', event)
        this.emit(
          'warning',
          `task ${event.taskId}: ${event.kind} ${event.index} differs from the journal of an earlier run; replay ended there, the rest ran live`,
        )
      },
      stopping: () => this.#stopping,
      guard: (what, fn) => this.#guard(what, fn),
      onDisk: (active) => sendGate(this.#o.writes, active),
      setWaiting: (taskId, waiting) => {
        if (!waiting) {
          this.#waiting.delete(taskId)
          return
        }
        // The waiter gave its slot back: another task may take it now.
        this.#waiting.add(taskId)
        this.pump()
      },
    }
    options.scheduler.on('limit', () => this.pump())
    // Picks wait while the database cannot take writes (write-failures.ts), and resume with it.
    this.#giveBacks = new GiveBacks(this.#o.writes, (m) => this.emit('warning', m))
    this.#o.writes.health?.on('resumed', () => {
      this.#giveBacks.retry()
      this.pump()
    })
    this.#renewals = new LeaseRenewals(this.#o, (m) => this.emit('warning', m))
  }

  get workerId(): string {
    return this.#o.workerId
  }

  /** Tasks this process is executing or waiting on. */
  get activeCount(): number {
    return this.#active.size
  }

  /** One call's deadline, in ms. */
  get callTimeoutMs(): number {
    return this.#o.callTimeoutMs
  }

  /** A new deadline for the calls sent from now on (the callTimeoutSeconds setting). */
  setCallTimeout(ms: number): void {
    checkCallTimeout(ms)
    this.#o.callTimeoutMs = ms
  }

  /**
   * The batches a stopped partition held since the last call, forgotten as they are returned
   * (for '*', every partition's): what resuming the partition resumes.
   */
  takeHeld(partition: string): string[] {
    return this.#held.take(partition)
  }

  /** The partitions that held the batch, forgotten (it is being resumed). */
  takeHolding(batchId: string): string[] {
    return this.#held.takeHolding(batchId)
  }

  /** Starts picking work; requeues tasks whose worker died first. */
  start(): void {
    if (this.#running) return
    this.#running = true
    this.#stopping = false
    this.sweepExpired()
    const renewEvery = Math.max(50, Math.floor(this.#o.leaseMs / 3))
    this.#renewTimer = setInterval(
      () => this.#guard('lease renewal', () => this.#renewals.round(this.#active)),
      renewEvery,
    )
    this.#renewTimer.unref()
    this.#pollTimer = setInterval(
      () =>
        this.#guard('queue poll', () => {
          this.sweepExpired()
          this.#reassertOwnBatches()
          this.pump()
        }),
      this.#o.pollMs,
    )
    this.#pollTimer.unref()
    this.pump()
  }

  /** Adds batches to a scoped runner (the CLI resuming or joining a batch). */
  addBatch(batchId: string): void {
    if (this.#o.batchIds && !this.#o.batchIds.includes(batchId)) this.#o.batchIds.push(batchId)
    this.pump()
  }

  /**
   * Tasks left running by a dead worker go back to the queue (at once when the worker registry
   * knows it is gone, else at lease expiry): never lost. Its batches become interrupted.
   */
  sweepExpired(): void {
    const { batchIds, requeued } = this.#o.queue.requeueExpired()
    // A dead worker's reservations come back with its tasks (the next reservation on a batch
    // would find them stale too; this returns them before anyone asks).
    if (requeued > 0) this.#o.budget?.sweep()
    if (batchIds.length === 0) return
    for (const b of batchIds) {
      // A scoped runner is the live driver of its own batches: keep them running.
      if (this.#o.batchIds?.includes(b)) this.#o.queue.setBatchState(b, 'running', ['interrupted'])
      this.emit('batch', b)
    }
  }

  /**
   * A scoped runner (the CLI) is the live driver of its batches: if another process saw it stall
   * past its lease and marked them interrupted, take them back, or this run would wait forever.
   */
  #reassertOwnBatches(): void {
    for (const b of this.#o.batchIds ?? []) {
      if (this.#o.queue.setBatchState(b, 'running', ['interrupted'])) this.emit('batch', b)
    }
  }

  /** Runs background work that must not crash the process: a failure becomes a warning. */
  #guard(what: string, fn: () => void): void {
    try {
      fn()
    } catch (err) {
      // A full disk is said once, by the write health.
      if (this.#o.writes.health?.fail(err)) return
      this.emit('warning', `${what} failed: ${(err as Error).message}`)
    }
  }

  /** Picks as many tasks as the scheduler can take now (plus a small prefetch). */
  pump(): void {
    if (!this.#running || this.#stopping || this.#pumping) return
    if (this.#o.writes.health?.blocked) return
    this.#pumping = true
    try {
      for (;;) {
        const room = this.#capacity() - this.#executing()
        if (room <= 0) break
        const { workerId, leaseMs, batchIds } = this.#o
        const tasks = this.#o.queue.pickMany(workerId, leaseMs, batchIds, room)
        for (const task of tasks) this.#begin(task)
        if (tasks.length < room) break
      }
    } catch (err) {
      // A pick the disk could not take: picks wait for it (health.blocked), then resume.
      if (!this.#o.writes.health?.fail(err)) throw err
    } finally {
      this.#pumping = false
    }
  }

  /** Aborts this process's running tasks of a cancelled batch (they end cancelled, claims released). */
  cancelRunning(batchId: string): void {
    for (const a of this.#active.values()) {
      if (a.task.batchId === batchId) stopTask(a, new StopSignal('cancel'))
    }
  }

  /**
   * Stops admitting, lets in-flight tasks finish for up to graceMs, then aborts the rest: their
   * claims are released and their tasks requeued, so a later run resumes them.
   */
  async stop(opts: { graceMs?: number } = {}): Promise<void> {
    if (!this.#running) return
    this.#stopping = true
    clearInterval(this.#pollTimer)
    // Calls held at the gate while the disk is full will not be sent: they give up at once.
    const health = this.#o.writes.health
    health?.cancelAdmissions(new StopSignal('stop'))
    // Waiters hold no claim and have nothing to finish: give them back at once.
    for (const id of this.#waiting) {
      const waiter = this.#active.get(id)
      if (waiter) stopTask(waiter, new StopSignal('stop'))
    }
    // So do calls still waiting for admission: none is sent after a stop, and a pause may be long.
    for (const a of this.#active.values()) if (a.admitting) stopTask(a, new StopSignal('stop'))
    const all = () => Promise.all([...this.#active.values()].map((a) => a.done))
    // With the disk full, what lands in the grace is only held: a short one, then the last tries.
    const grace = Math.min(opts.graceMs ?? 10_000, health?.blocked ? 3000 : Infinity)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([all(), new Promise<void>((r) => (timer = setTimeout(r, grace)))])
    clearTimeout(timer)
    for (const a of this.#active.values()) stopTask(a, new StopSignal('stop'))
    await all()
    clearInterval(this.#renewTimer)
    this.#settleNow()
    this.#running = false
    // Leave the queue tidy: a dead worker's tasks are visible as queued, not stuck as running.
    this.#guard('queue sweep', () => this.sweepExpired())
  }

  /** Aborts every task now (a second Ctrl-C): claims released, tasks requeued. */
  abortAll(): void {
    for (const a of this.#active.values()) stopTask(a, new StopSignal('stop'))
  }

  #executing(): number {
    return this.#active.size - this.#waiting.size
  }

  #capacity(): number {
    const partitions = this.#o.scheduler.snapshot()
    const concurrency =
      partitions.length === 0
        ? Math.floor(this.#o.scheduler.getParams('*').initial)
        : partitions.reduce((sum, p) => sum + p.concurrency, 0)
    return Math.max(1, concurrency) + this.#o.prefetch
  }

  #begin(task: QueuedTask): void {
    // Picked again while this process still holds it (its lease ran out during a full disk).
    if (this.#active.has(task.id)) return
    const active: Active = {
      task,
      controller: new AbortController(),
      epoch: null,
      lost: false,
      done: Promise.resolve(),
      unconfirmed: this.#o.writes.generation,
    }
    this.#active.set(task.id, active)
    this.emit('task', { taskId: task.id, batchId: task.batchId, status: 'running' })
    active.done = this.#run(active)
      .catch((err: unknown) => {
        if (this.#o.writes.health?.fail(err)) return
        this.emit('warning', `task ${task.id}: ${(err as Error).message}`)
      })
      .finally(() => {
        this.#active.delete(task.id)
        this.#waiting.delete(task.id)
        this.#settleSoon(task.batchId)
        this.#pumpSoon()
      })
  }

  async #run(active: Active): Promise<void> {
    const { task } = active
    let finish: Finish
    try {
      finish = await processTask(this.#ctx, active)
    } catch (err) {
      const reason =
        err instanceof StopSignal ? err : (active.stopped ?? active.controller.signal.reason)
      if (reason instanceof StopSignal) {
        if (reason.mode === 'cancel') {
          this.#releaseClaim(active)
          if (this.#o.queue.finishTask(task.id, this.#o.workerId, 'cancelled', null, 'cancelled')) {
            this.emit('task', { taskId: task.id, batchId: task.batchId, status: 'cancelled' })
          }
          return
        }
        finish = { status: 'requeue', error: null }
      } else if (err instanceof PartitionStoppedError || err instanceof BudgetStopError) {
        // A setup failure stopped its partition, or the cap its batch: the task waits, queued
        // with the reason (held, never failed), for the fix or a higher cap.
        finish = { status: 'requeue', error: err.reason }
        this.#hold(task.batchId, err)
      } else {
        finish = otherFailure(err)
      }
      const epoch = active.epoch
      active.epoch = null
      if (epoch !== null) this.#giveBacks.run(() => this.#o.claims.release(task.fp, epoch))
    }
    if (finish.status === 'requeue') {
      this.#giveBacks.run(() => {
        if (this.#o.queue.requeueTask(task.id, this.#o.workerId, finish.error)) {
          this.emit('task', { taskId: task.id, batchId: task.batchId, status: 'queued' })
        }
      })
      return
    }
    // Written with its claim's completion already (execute.ts).
    if (finish.ended !== undefined) {
      if (finish.ended)
        this.emit('task', { taskId: task.id, batchId: task.batchId, status: finish.status })
      return
    }
    const result =
      finish.resultRef !== undefined
        ? { ref: finish.resultRef }
        : finish.result === null
          ? null
          : { text: finish.result }
    const status = finish.status
    const ended = await persistEnd(
      this.#ctx,
      active,
      () => this.#o.queue.finishTask(task.id, this.#o.workerId, status, result, finish.error),
      finish.record,
    )
    if (ended) this.emit('task', { taskId: task.id, batchId: task.batchId, status })
  }

  /**
   * A console's batch that met a stopped partition (or its cap) is paused with the reason, so its
   * tasks are not picked again and again until the operator resumes it. A `pacer run` stops its
   * whole run instead (BatchLifecycle.drive; a cap's stop is heard as the 'budget' event).
   */
  #hold(batchId: string, err: PartitionStoppedError | BudgetStopError): void {
    if (err instanceof PartitionStoppedError) this.#held.add(err.partition, batchId)
    else this.emit('budget', batchId, err.reason)
    if (this.#o.batchIds !== null) return
    this.#guard('batch hold', () => {
      if (this.#o.queue.applyBatchAction(batchId, 'pause')) {
        this.#o.queue.setStopReason(batchId, err.reason)
      }
    })
    this.emit('batch', batchId)
  }

  /** Refills the slots that tasks ending this turn freed, once at its end: one pick for them all. */
  #pumpSoon(): void {
    if (this.#pumpScheduled) return
    this.#pumpScheduled = true
    endOfTurn(() => {
      this.#pumpScheduled = false
      this.pump()
    })
  }

  /**
   * Settles the batch (done once nothing is queued or running) at the end of this turn of the
   * event loop: one look at its counters however many of its tasks ended in the turn.
   */
  #settleSoon(batchId: string): void {
    if (this.#settling.size === 0) endOfTurn(() => this.#settleNow())
    this.#settling.add(batchId)
  }

  #settleNow(): void {
    const batches = [...this.#settling]
    this.#settling.clear()
    for (const b of batches) {
      this.#guard('batch settle', () => this.#o.queue.settleBatch(b))
      this.emit('batch', b)
    }
  }

  #releaseClaim(active: Active): void {
    if (active.epoch !== null) {
      this.#o.claims.release(active.task.fp, active.epoch)
      active.epoch = null
    }
  }
}
