import type { LimitCause } from '../../../shared/contract'
import type { ControllerState } from './store'
import type { AimdParams, LimitChange, Outcome } from '../core/types'
import { SEED_AIMD } from '../core/types'
import type { AnnouncedRate } from './announced-ceiling'

/** What the scheduler knows about a finished call when it reports the outcome. */
export interface OutcomeContext {
  /** When the outcome was observed (epoch ms). */
  now: number
  /** When the call was admitted (epoch ms): lets a controller ignore throttles sent before a cut. */
  sentAt: number
  /** Calls in flight in the partition when the outcome arrived, this one included. */
  inflight: number
}

/**
 * One partition's concurrency limit. The scheduler only talks to this interface, so the seed's
 * controller can be replaced (one cut per congestion episode, grow only when the limit is reached)
 * without touching admission.
 */
export interface ConcurrencyController {
  readonly partition: string
  readonly params: AimdParams
  /** The real-valued limit (the seed keeps fractions so +0.5 steps add up). */
  readonly limit: number
  /** What admission uses: max(min, floor(limit)). */
  readonly concurrency: number
  /** Feeds one call's outcome; returns the change if the limit moved. */
  onOutcome(outcome: Outcome, ctx: OutcomeContext): LimitChange | null
  /** A refusal of a call sent at `sentAt` the last cut answered as a cap's edge: no pause. */
  overshoot?(sentAt: number): boolean
  /** What an announced budget admits (null: none): the limit may rise to what it needs. */
  announcedRate?(rate: AnnouncedRate | null): void
  /** Calls waiting that only the spread of the growth holds back (growth-spread.ts): in use. */
  heldBack?(calls: number): void
  /** Applies a validated parameter patch; returns the change if the limit moved. */
  setParams(patch: Partial<AimdParams>, now: number): LimitChange | null
  /**
   * Its state, for the other workers of a shared partition (pacing/store.ts). Without it (and
   * importState), a controller paces its own process only.
   */
  exportState?(): ControllerState
  /** Continues from another worker's state: the limit and the last cut always, memory of its kind. */
  importState?(state: ControllerState): void
}

/**
 * Builds a partition's controller. `limit` is where it starts when it replaces another controller
 * mid-run (the partition's current limit); otherwise it starts at `params.initial`.
 */
export type ControllerFactory = (
  partition: string,
  params: AimdParams,
  limit?: number,
) => ConcurrencyController

const PARAM_KEYS: readonly (keyof AimdParams)[] = [
  'min',
  'max',
  'initial',
  'increase',
  'decrease',
  'cooldownMs',
  'nearLimitRemaining',
]

/**
 * What an operator's patch makes of a controller's params and limit: the merged params, whether
 * `initial` moved (a controller restarts from it then), and the limit to set, within [min, max].
 */
export function operatorPatch(
  params: Readonly<AimdParams>,
  patch: Partial<AimdParams>,
  limit: number,
): { params: AimdParams; initialChanged: boolean; limit: number } {
  const next = mergeAimdParams(params, patch)
  const initialChanged = patch.initial !== undefined && patch.initial !== params.initial
  const target = initialChanged ? next.initial : limit
  return { params: next, initialChanged, limit: Math.min(next.max, Math.max(next.min, target)) }
}

/**
 * Merges a patch over complete params and validates the result; throws a TypeError naming the field.
 * An `initial` that the patch does not set is clamped into the new [min, max], so an operator can
 * move `min`/`max` sliders without also having to move `initial`.
 */
export function mergeAimdParams(
  base: Readonly<AimdParams>,
  patch: Partial<AimdParams> = {},
): AimdParams {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    throw new TypeError(`Expected AIMD params to be an object, got \`${describe(patch)}\``)
  }
  for (const key of Object.keys(patch)) {
    if (!(PARAM_KEYS as readonly string[]).includes(key)) {
      throw new TypeError(`Unknown AIMD param \`${key}\``)
    }
  }
  const next: AimdParams = { ...base }
  for (const key of PARAM_KEYS) {
    const value = patch[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new TypeError(`Expected \`${key}\` to be a finite number, got \`${describe(value)}\``)
    }
    next[key] = value
  }
  if (!Number.isInteger(next.min) || next.min < 1) {
    throw new TypeError(`Expected \`min\` to be an integer >= 1, got \`${next.min}\``)
  }
  if (next.max < next.min) {
    throw new TypeError(`Expected \`max\` to be >= min (${next.min}), got \`${next.max}\``)
  }
  if (!(next.increase > 0)) {
    throw new TypeError(`Expected \`increase\` to be > 0, got \`${next.increase}\``)
  }
  if (!(next.decrease > 0 && next.decrease < 1)) {
    throw new TypeError(`Expected \`decrease\` to be in (0, 1), got \`${next.decrease}\``)
  }
  if (!(next.cooldownMs >= 0)) {
    throw new TypeError(`Expected \`cooldownMs\` to be >= 0, got \`${next.cooldownMs}\``)
  }
  if (!(next.nearLimitRemaining >= 0)) {
    throw new TypeError(
      `Expected \`nearLimitRemaining\` to be >= 0, got \`${next.nearLimitRemaining}\``,
    )
  }
  if (patch.initial === undefined) {
    next.initial = Math.min(next.max, Math.max(next.min, next.initial))
  } else if (next.initial < next.min || next.initial > next.max) {
    throw new TypeError(
      `Expected \`initial\` to be within [${next.min}, ${next.max}], got \`${next.initial}\``,
    )
  }
  return next
}

/**
 * The seed's AIMD controller at exact parity (seed memo 004): +increase per success, x decrease per
 * throttle, no growth for cooldownMs after a cut, near_limit holds.
 *
 * Departures, both deliberate:
 * - 'error' (a 4xx/5xx that is not pushback) changes nothing; the seed's classify would have counted
 *   a 500 as a success and grown the limit on a failing provider.
 * - 'overloaded' (503/529) and 'timeout' take the throttle path, as the seed's run() does for 503
 *   and asyncio.TimeoutError.
 *
 * Its known weakness is kept on purpose until the improved controller replaces it: every throttle
 * cuts, so N parallel 429s from one burst cut N times (TCP NewReno cuts once per window).
 */
export class SeedAimd implements ConcurrencyController {
  readonly partition: string
  #params: AimdParams
  #limit: number
  // The seed starts _last_decrease at 0 on a monotonic clock, i.e. long ago: no cooldown at start.
  #lastDecrease = Number.NEGATIVE_INFINITY

  /**
   * A controller for one partition; params are merged over SEED_AIMD and validated. `limit` starts
   * it elsewhere than `initial` (a controller swapped in mid-run), clamped into [min, max].
   */
  constructor(partition: string, params: Partial<AimdParams> = {}, limit?: number) {
    this.partition = partition
    this.#params = mergeAimdParams(SEED_AIMD, params)
    this.#limit = startingLimit(this.#params, limit)
  }

  get params(): AimdParams {
    return { ...this.#params }
  }

  get limit(): number {
    return this.#limit
  }

  get concurrency(): number {
    return Math.max(this.#params.min, Math.floor(this.#limit))
  }

  /** Seed parity: ok grows (unless cooling down), pushback cuts, near_limit and error hold. */
  onOutcome(outcome: Outcome, { now }: OutcomeContext): LimitChange | null {
    const p = this.#params
    switch (outcome) {
      case 'ok':
        // Seed: "just after a cut, do not grow for a while, to avoid swinging back".
        if (now - this.#lastDecrease < p.cooldownMs) return null
        return this.#set(
          Math.min(p.max, this.#limit + p.increase),
          now,
          `success +${p.increase}`,
          'growth',
        )
      case 'throttled':
      case 'overloaded':
      case 'timeout':
        // Seed: the cooldown restarts on every throttle, even one that cannot cut below min.
        this.#lastDecrease = now
        return this.#set(
          Math.max(p.min, this.#limit * p.decrease),
          now,
          `${outcome} x${p.decrease}`,
          'throttle',
        )
      case 'near_limit':
      case 'error':
        return null
      default:
        throw new TypeError(`Unknown outcome \`${describe(outcome)}\``)
    }
  }

  /**
   * Applies a patch at once. The limit is clamped into the new [min, max]; a changed `initial`
   * resets the limit to it (the operator's "start from here"), an unchanged one does not, so a
   * console that resends every field does not reset the limit on each slider move.
   */
  setParams(patch: Partial<AimdParams>, now: number): LimitChange | null {
    const next = operatorPatch(this.#params, patch, this.#limit)
    this.#params = next.params
    return this.#set(next.limit, now, 'operator', 'operator')
  }

  /** The seed remembers only its limit and its last decrease (the cooldown). */
  exportState(): ControllerState {
    const last = this.#lastDecrease
    return { limit: this.#limit, lastCutAt: Number.isFinite(last) ? last : null, memory: null }
  }

  importState(state: ControllerState): void {
    this.#limit = state.limit
    this.#lastDecrease = state.lastCutAt ?? Number.NEGATIVE_INFINITY
  }

  #set(to: number, now: number, reason: string, cause: LimitCause): LimitChange | null {
    const from = this.#limit
    if (to === from) return null
    this.#limit = to
    return { partition: this.partition, ts: now, from, to, reason, cause }
  }
}

/** Where a new controller starts: `initial`, or a given limit (a swap) clamped into [min, max]. */
export function startingLimit(params: AimdParams, limit: number | undefined): number {
  if (limit === undefined) return params.initial
  if (typeof limit !== 'number' || !Number.isFinite(limit)) {
    throw new TypeError(`Expected \`limit\` to be a finite number, got \`${describe(limit)}\``)
  }
  return Math.min(params.max, Math.max(params.min, limit))
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value)
    } catch {
      return Object.prototype.toString.call(value)
    }
  }
  return String(value)
}
