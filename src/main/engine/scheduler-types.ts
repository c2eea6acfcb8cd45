// The Scheduler's public types: permits, snapshots, events and options (scheduler.ts re-exports them).
import type { PartitionView } from '../../shared/contract'
import type { ControllerFactory } from './aimd'
import type { CallAnswer, PacingOptions, PauseChange } from './pacing/partition-pacing'
import type { PacingStore } from './pacing/store'
import type { AimdParams, Clock, LimitChange, Outcome } from './types'

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

export interface SchedulerEvents {
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
  /** Defaults for every partition, merged over SEED_AIMD. @default SEED_AIMD */
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
