import { z } from 'zod'
import { finiteNumber } from './numbers'
import { CONTROLLER_KIND_NAMES } from './controller-kinds'

/** No provider takes this many calls at once from one console; a typo must not flood one. */
const MAX_CONCURRENCY_LIMIT = 1000

/** A change to a partition's AIMD parameters (the defaults are PACER_AIMD in the engine). */
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

/** The concurrency controllers a partition can run: the seed memo's AIMD, and the adaptive one. */
export const ControllerKind = z.enum(CONTROLLER_KIND_NAMES)
export type ControllerKind = z.infer<typeof ControllerKind>

/**
 * Why a limit moved, for the console to tell the kinds apart: growth while calls succeed (slow
 * start, growth, recovery), a cut on pushback (429, 503/529, timeout), a probe above a refused
 * level (or its refusal), a budget the provider announced in its rate-limit headers, or the
 * operator (a slider, a controller swap).
 */
export const LIMIT_CAUSES = ['growth', 'throttle', 'probe', 'headers', 'operator'] as const
export type LimitCause = (typeof LIMIT_CAUSES)[number]

/**
 * One move of a partition's limit, and why (`growth +0.5`, `throttle x0.5`, `probe 5`,
 * `operator`). For cause `headers`, from and to are the announced budget per minute of the
 * dimension the reason names (`headers: requests 200/min`), not a concurrency limit.
 */
export interface LimitChangeView {
  partition: string
  ts: number
  from: number
  to: number
  reason: string
  cause: LimitCause
}

/**
 * A partition paused by the provider: a refusal's retry-after (or exhausted reset), or a refusal
 * at the floor with no wait announced (backoff). No call of the partition is admitted until then.
 */
export interface PauseView {
  partition: string
  /** When the pause began (epoch ms). */
  ts: number
  /** Until when nothing is admitted (epoch ms), resume jitter included. */
  until: number
  /** `paused until <ISO time>`, and why when it was a backoff. */
  reason: string
}

/**
 * A partition stopped by a setup failure (a key refused or missing, an unknown model, no credit, a
 * server that is not there): nothing of it is sent until the operator resumes it.
 */
export interface PartitionStopView {
  partition: string
  /** When it stopped (epoch ms). */
  ts: number
  /** The one line an operator reads: provider, model, status, what it said and what to do. */
  reason: string
}

/** The pace of an announced budget, as the console shows it (PartitionView.pace). */
export interface PaceInfoView {
  burstMs: number
  /**
   * No budget is announced: the rate was learned from refusals at one call in flight, or from a
   * concurrency limit that cycled down to it (a rate limit of up to three calls per round trip).
   */
  learned?: boolean
  perMinute: Partial<Record<'requests' | 'tokens' | 'input-tokens' | 'output-tokens', number>>
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
  /** Until when the partition is paused (epoch ms), or null when it is not. */
  pausedUntil: number | null
  /** Why it last paused: the pause's reason line (what the provider said, what the evidence was). */
  pauseReason?: string
  /**
   * How admissions are spread once the provider announced a budget (this process's scheduler):
   * the burst the pace allows (60,000: the announced minute; 1,000: a second learned from
   * refusals; 0: one call at a time) and the rate that is ours per minute, per dimension.
   */
  pace?: PaceInfoView
  /** Set while a setup failure holds the partition stopped (this process's scheduler). */
  stopped?: PartitionStopView
  /** Team mode: the team store is out of reach and admission waits for it (one line why). */
  storeOutage?: string
  /**
   * Workers (processes) holding slots in the partition or waiting on it, when the view spans every
   * process on the database; absent in one scheduler's own snapshot.
   */
  workers?: number
}

/** One point of the live concurrency chart. */
/**
 * `scheduler:history`: what the database kept of each partition (one sample per busy second, every
 * pause with its reason), so a chart opened after a run, or in a fresh console, has its last hour.
 */
export interface SchedulerHistoryView {
  samples: SchedulerSample[]
  pauses: PauseView[]
}

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
