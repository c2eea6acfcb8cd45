// The Scheduler's public types: permits, snapshots, events and options (scheduler.ts re-exports them).
import type { PartitionStopView, PartitionView } from '../../../shared/contract'
import type { ControllerFactory } from './aimd'
import type { CallAnswer, PacingOptions, PauseChange } from './partition-pacing'
import type { PartitionPacing } from './partition-pacing'
import type { Reservation } from './rate-budget'
import type { CallEstimate } from './budget-reading'
import type { PacingStore } from './store'
import type { Charged, PartitionBudget } from './store-budget'
import type { AimdParams, Clock, LimitChange, Outcome } from '../core/types'

/** The right to make one provider call in a partition. */
export interface Permit {
  readonly partition: string
  /** When the permit was granted (epoch ms). */
  readonly sentAt: number
  /**
   * Frees the slot and feeds the outcome to the controller; with pacing on, the answer's headers
   * and usage settle the rate budget and may pause the partition. Idempotent: later calls do nothing.
   */
  release(outcome: Outcome, answer?: CallAnswer): void
}

/** One partition's state: the contract's view of it. */
export type PartitionSnapshot = PartitionView

export interface SchedulerSample {
  ts: number
  partitions: PartitionSnapshot[]
}

export interface ParamsChange {
  /** A partition, or '*' for the defaults given to partitions created later. */
  partition: string
  ts: number
  params: AimdParams
}

/** A partition stopped by a setup failure: nothing of it is admitted until it is resumed. */
export type PartitionStop = PartitionStopView

export interface SchedulerEvents {
  /** A setup failure stopped a partition (stop()); resumed: resume() let it go again. */
  stopped: [stop: PartitionStop]
  resumed: [partition: string]
  limit: [change: LimitChange]
  params: [change: ParamsChange]
  sample: [sample: SchedulerSample]
  /** With pacing on: a refusal's retry-after (or the floor's backoff) paused the partition. */
  pause: [change: PauseChange]
  /** With pacing on: an answer's rate-limit headers announced a new budget (cause `headers`). */
  budget: [change: LimitChange]
  /** The pacing store failed a call; the scheduler retries on its own. */
  warning: [message: string]
}

export interface SchedulerOptions {
  /** Source of time for sentAt, cooldowns and samples. @default systemClock */
  clock?: Clock
  /** Defaults for every partition, merged over PACER_AIMD. @default PACER_AIMD */
  params?: Partial<AimdParams>
  /** Builds a partition's controller. @default (partition, params, limit) => new SeedAimd(...) */
  createController?: ControllerFactory
  /** How often 'sample' is emitted while any partition is active, in ms. @default 250 */
  sampleIntervalMs?: number
  /**
   * Pacing beyond concurrency: partition-wide pauses on retry-after, and admission that waits for
   * header-announced rate budgets. `true` is `{}` (all defaults). @default undefined (off)
   */
  pacing?: PacingOptions | boolean
  /**
   * Where each partition's budget lives (limit, params, slots in flight, pause): schedulers on one
   * store share it, e.g. every process on one database with a SqlitePacingStore.
   * @default a MemoryPacingStore of its own
   */
  store?: PacingStore
  /** This scheduler's name on the store. @default a random id */
  worker?: string
}

/** Raised for acquires that are still waiting, or arrive, after close(). */
export class SchedulerClosedError extends Error {
  constructor() {
    super('Scheduler is closed')
    this.name = 'SchedulerClosedError'
  }
}

/**
 * Raised for acquires in a partition stopped by a setup failure (stop()), waiting or arriving:
 * the task goes back to the queue untouched, and nothing is sent until resume().
 */
export class PartitionStoppedError extends Error {
  constructor(
    readonly partition: string,
    readonly reason: string,
  ) {
    super(reason)
    this.name = 'PartitionStoppedError'
  }
}

export const OUTCOMES: readonly Outcome[] = [
  'ok',
  'near_limit',
  'throttled',
  'overloaded',
  'timeout',
  'error',
]

/** '*' names every partition in setParams/getParams, so no partition may be called that. */
export function checkPartition(partition: unknown, allowAll = true): asserts partition is string {
  if (typeof partition !== 'string' || partition === '' || (!allowAll && partition === '*')) {
    const expected = allowAll ? 'a non-empty string' : "a non-empty string other than '*'"
    throw new TypeError(`Expected \`partition\` to be ${expected}, got \`${String(partition)}\``)
  }
}

/** Throws a TypeError naming the first option of the wrong kind. */
export function checkSchedulerOptions(options: SchedulerOptions): void {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`Expected \`options\` to be an object, got \`${String(options)}\``)
  }
  const { clock, createController, sampleIntervalMs } = options
  if (
    clock !== undefined &&
    (clock === null || typeof clock !== 'object' || typeof clock.now !== 'function')
  ) {
    throw new TypeError(`Expected \`clock\` to have a now() function, got \`${String(clock)}\``)
  }
  if (createController !== undefined && typeof createController !== 'function') {
    throw new TypeError(
      `Expected \`createController\` to be a function, got \`${String(createController)}\``,
    )
  }
  if (
    sampleIntervalMs !== undefined &&
    (typeof sampleIntervalMs !== 'number' ||
      !Number.isInteger(sampleIntervalMs) ||
      sampleIntervalMs < 1)
  ) {
    throw new TypeError(
      `Expected \`sampleIntervalMs\` to be an integer >= 1, got \`${String(sampleIntervalMs)}\``,
    )
  }
}

// The scheduler's own bookkeeping (not re-exported).

/** A call waiting for a slot. */
/** Removes the waiter from its queue and rejects it with the reason if `signal` aborts first. */
export function listenForAbort(queue: Waiter[], waiter: Waiter, signal: AbortSignal): void {
  waiter.onAbort = () => {
    const index = queue.indexOf(waiter)
    if (index === -1) return
    queue.splice(index, 1)
    waiter.reject(signal.reason)
  }
  signal.addEventListener('abort', waiter.onAbort, { once: true })
}

export interface Waiter {
  resolve(permit: Permit): void
  reject(reason: unknown): void
  signal: AbortSignal | undefined
  onAbort: (() => void) | undefined
  estimate: CallEstimate | undefined
}

/** A call in flight: when it went, and what it was charged in the local and shared budgets. */
export interface Sent {
  sentAt: number
  reservation: Reservation | undefined
  charged: Charged | null
}

export interface PartitionState {
  name: string
  /** The controller, this scheduler's permits and the store calls (pacing/store-budget.ts). */
  budget: PartitionBudget
  queue: Waiter[]
  pacing: PartitionPacing | undefined
}
