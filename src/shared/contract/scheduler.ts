import { z } from 'zod'
import { finiteNumber } from './numbers'

/** No provider takes this many calls at once from one console; a typo must not flood one. */
export const MAX_CONCURRENCY_LIMIT = 1000

/** A change to a partition's AIMD parameters (the defaults are SEED_AIMD in the engine). */
export const AimdParamsPatch = z.strictObject({
  /** @default 1 */
  min: z.number().int().min(1).max(MAX_CONCURRENCY_LIMIT).optional(),
  /** @default 12 */
  max: z.number().int().min(1).max(MAX_CONCURRENCY_LIMIT).optional(),
  /** @default 2 */
  initial: finiteNumber.min(1).max(MAX_CONCURRENCY_LIMIT).optional(),
  /** Added to the limit per success. @default 0.5 */
  increase: finiteNumber.positive().optional(),
  /** Multiplies the limit per throttle. @default 0.5 */
  decrease: finiteNumber.gt(0).lt(1).optional(),
  /** After a cut, successes do not grow the limit for this long. @default 8000 */
  cooldownMs: z.number().int().nonnegative().optional(),
  /** Remaining-requests header below this holds the limit (near_limit). @default 5 */
  nearLimitRemaining: z.number().int().nonnegative().optional(),
})
export type AimdParamsPatch = z.infer<typeof AimdParamsPatch>

/** A partition's AIMD parameters, every one set: what the scheduler runs with. */
export type AimdParamsView = Required<AimdParamsPatch>

/** One move of a partition's limit, and why (`success +0.5`, `throttled x0.5`). */
export interface LimitChangeView {
  partition: string
  ts: number
  from: number
  to: number
  reason: string
}

/** One partition's state, for the console's Concurrency view and its live chart. */
export interface PartitionView {
  partition: string
  /** Real-valued AIMD limit. */
  limit: number
  /** What admission uses: max(min, floor(limit)). */
  concurrency: number
  inflight: number
  waiting: number
  /** Outcomes that pushed back: throttled (429), overloaded (503/529), timeout. */
  throttles: number
  /** Answered calls: ok and near_limit. */
  successes: number
  /** Other failures ('error'), which do not move the limit. */
  errors: number
  params: AimdParamsView
  lastChange: LimitChangeView | null
  /**
   * Workers (processes) holding slots in the partition or waiting on it, when the view spans every
   * process on the database; absent in one scheduler's own snapshot.
   */
  workers?: number
}

/** One point of the live concurrency chart. */
export interface SchedulerSample {
  partition: string
  ts: number
  limit: number
  concurrency: number
  inflight: number
  waiting: number
  /** Throttles seen since the previous sample of this partition. */
  throttles: number
}
