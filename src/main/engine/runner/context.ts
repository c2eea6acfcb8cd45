import type { QueuedTask } from '../queue/queue'
import type { FinishReason, JsonValue, Usage } from '../core/types'
import type { DivergenceEvent, JournalParts } from './durable/effects-journal'
import type { ResolvedRunnerOptions } from './options'

/** How one task ended, before the queue is told. */
export type Finish =
  | {
      status: 'succeeded' | 'reused' | 'failed'
      result: string | null
      error: string | null
      /** The stored result this task shares with its claim (results.id), when there is one. */
      resultRef?: number
      /**
       * Set when the task's end was written with its claim's completion, in one transaction:
       * whether it ended (false: it was no longer this worker's task, as finishTask says).
       */
      ended?: boolean
      /**
       * The ledger row this end brings (a reuse's), written in the same write as the task's end
       * (persistEnd): a rollback (a full disk) that takes the row takes the end too, and the end's
       * retry writes both.
       */
      record?: () => void
    }
  | { status: 'requeue'; error: string | null }

/** One provider call's end, after its retries. */
export type CallResult =
  | {
      kind: 'ok'
      text: string
      usage: Usage
      costMicros: number | null
      finishReason?: FinishReason
      message?: JsonValue
    }
  | { kind: 'lost'; text: string }
  | {
      kind: 'failed'
      deterministic: boolean
      error: string
      status: number | null
      /** Kept as the claim's result whatever the status (an answer too big to read). */
      keep?: boolean
    }

export class StopSignal extends Error {
  /** stop: this runner shuts down; pause: the batch was paused; cancel: it was cancelled. */
  constructor(readonly mode: 'stop' | 'pause' | 'cancel') {
    super(mode === 'cancel' ? 'batch cancelled' : `runner ${mode}`)
  }
}

/** A task this process is executing or waiting on. */
export interface Active {
  task: QueuedTask
  controller: AbortController
  /** The claim epoch while this worker owns the task's claim. */
  epoch: number | null
  /** The team claim's epoch while this worker holds it (team mode: team-claim.ts). */
  team?: number | null
  /** Set when a renewal found the claim taken over: later steps are not sent. */
  lost: boolean
  done: Promise<void>
  /** Why the runner aborted the task (stopTask), if it did. */
  stopped?: StopSignal
  /**
   * The transaction of the task's pick, until its first call is sent: if that one (or any
   * later) was lost, the pick and the claim may be gone, and nothing is sent (RunContext.onDisk).
   */
  unconfirmed?: number
  /**
   * Waiting at the scheduler for a call's admission (a pause may last an hour): nothing is sent
   * once a stop begins, so a stop ends such a task at once instead of after the grace.
   */
  admitting?: boolean
}

/**
 * Aborts a task's calls and waits. The reason is kept on the task too, so a task that never
 * needed its signal (a reuse: no call, no wait) never has one made (~10 µs each on Node 20).
 */
export function stopTask(active: Active, reason: StopSignal): void {
  active.stopped ??= reason
  active.controller.abort(reason)
}

/** What one task's execution needs of the Runner that started it. */
export interface RunContext {
  readonly o: ResolvedRunnerOptions
  /** True once stop() began: no new calls are sent. */
  stopping(): boolean
  /** Runs background work that must not crash the process: a failure becomes a warning. */
  guard(what: string, fn: () => void): void
  /** The task waits on another worker's claim (true) or no longer does: a waiter holds no slot. */
  setWaiting(taskId: number, waiting: boolean): void
  /**
   * The gate before a call is sent: what was written is committed, the database takes writes,
   * and the task's pick and claim were not lost. Rejects otherwise (the task is requeued).
   */
  onDisk(active: Active): Promise<void>
  /** Where executions journal their effects; null: nowhere (every call live). */
  readonly journal: JournalParts | null
  /** A rerun's request differed from the journal: the runner tells its listeners. */
  divergence(event: DivergenceEvent): void
}

/**
 * Pause and cancel take effect before the next call, in whichever process runs the task: a
 * cancelled batch sends nothing more; a paused one starts no new task (one already under way
 * finishes its steps, so the calls already paid for are not thrown away).
 */
export function checkBatch(ctx: RunContext, task: QueuedTask, notStarted: boolean): void {
  const state = ctx.o.queue.batchState(task.batchId)
  if (state === 'cancelled') throw new StopSignal('cancel')
  if (state === 'paused' && notStarted) throw new StopSignal('pause')
}

export function throwIfAborted(active: Active): void {
  if (active.stopped) throw active.stopped
}
