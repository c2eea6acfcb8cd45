import { retryAfterMs, retryDelayMs } from '../classify'
import type { Outcome } from '../types'
import type {
  BudgetDimension,
  BudgetReading,
  CallEstimate,
  CallUsage,
  DimensionSnapshot,
  Reservation,
} from './rate-budget'
import { RateBudget, readBudgetHeaders } from './rate-budget'

/** Pacing beyond concurrency, per partition. Every field has a default; `{}` turns it all on. */
export interface PacingOptions {
  /**
   * A refusal's `retry-after` / `retry-after-ms` (or, with no budget to pace by, its exhausted
   * reset) pauses every waiting call of the partition. @default true
   */
  pause?: boolean
  /** Admissions wait for the budgets the provider announces in its rate-limit headers. @default true */
  budget?: boolean
  /** The window an announced limit refers to. @default 60_000 */
  windowMs?: number
  /**
   * Resuming after a pause waits a random extra of up to min(resumeJitterMs, 20 % of the pause),
   * so clients paused by the same answer do not all come back in the same millisecond. @default 1000
   */
  resumeJitterMs?: number
  /** Random numbers in [0, 1) for the jitter. @default Math.random */
  random?: () => number
}

/** What the caller knows of a call's answer, for pacing: its headers and real usage. */
export interface CallAnswer {
  headers?: Record<string, string>
  usage?: CallUsage
}

export interface PauseChange {
  partition: string
  ts: number
  /** Until when no call of the partition is admitted (epoch ms), jitter included. */
  until: number
  reason: string
}

/** A partition's pacing state, for tests and the console. */
export interface PacingSnapshot {
  pausedUntil: number | null
  budget: Partial<Record<BudgetDimension, DimensionSnapshot>>
}

/** Validates options once, for every partition the scheduler creates. */
export function checkPacingOptions(options: PacingOptions): Required<PacingOptions> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`Expected \`pacing\` to be an object, got \`${String(options)}\``)
  }
  const {
    pause = true,
    budget = true,
    windowMs = 60_000,
    resumeJitterMs = 1000,
    random = Math.random,
  } = options
  if (!(Number.isFinite(resumeJitterMs) && resumeJitterMs >= 0)) {
    throw new TypeError(
      `Expected \`resumeJitterMs\` to be a number >= 0, got \`${String(resumeJitterMs)}\``,
    )
  }
  if (typeof random !== 'function') {
    throw new TypeError(`Expected \`random\` to be a function, got \`${String(random)}\``)
  }
  // RateBudget validates windowMs.
  new RateBudget({ windowMs })
  return { pause: pause !== false, budget: budget !== false, windowMs, resumeJitterMs, random }
}

/** What settling a call decided. */
export interface Settled {
  /** A pause that started or grew longer. */
  pause: PauseChange | null
  /**
   * The refusal is explained by an announced budget running out: the rate budget deals with it,
   * so the concurrency limit should hold instead of being cut.
   */
  absorbed: boolean
}

/** One partition's pause and rate budget; the scheduler asks it before each admission. */
export class PartitionPacing {
  readonly #partition: string
  readonly #o: Required<PacingOptions>
  readonly #budget: RateBudget
  #pausedUntil = Number.NEGATIVE_INFINITY
  #wake: NodeJS.Timeout | undefined
  #wakeAt = Number.POSITIVE_INFINITY

  constructor(partition: string, options: Required<PacingOptions>) {
    this.#partition = partition
    this.#o = options
    this.#budget = new RateBudget({ windowMs: options.windowMs })
  }

  /** Ms until a call of this estimate may be admitted; 0 when it may go now. */
  delayMs(now: number, estimate?: CallEstimate): number {
    const paused = Math.max(0, this.#pausedUntil - now)
    const budget = this.#o.budget && this.#budget.known ? this.#budget.delayMs(now, estimate) : 0
    return Math.max(paused, budget)
  }

  /**
   * True if a call of this estimate may be admitted now; otherwise `wake` is called once it may
   * (one timer per partition, moved earlier if a later ask needs less).
   */
  ready(now: number, estimate: CallEstimate | undefined, wake: () => void): boolean {
    const wait = this.delayMs(now, estimate)
    if (wait <= 0) return true
    const at = now + wait
    if (this.#wake !== undefined && this.#wakeAt <= at) return false
    clearTimeout(this.#wake)
    this.#wakeAt = at
    // Not unref'd: a caller may be waiting on nothing but this timer.
    this.#wake = setTimeout(() => {
      this.#wake = undefined
      this.#wakeAt = Number.POSITIVE_INFINITY
      wake()
    }, wait)
    return false
  }

  /** Cancels a pending wake-up (the scheduler closed). */
  stop(): void {
    clearTimeout(this.#wake)
    this.#wake = undefined
    this.#wakeAt = Number.POSITIVE_INFINITY
  }

  /** Takes an admitted call's estimated cost out of the budget. */
  admit(now: number, estimate?: CallEstimate): Reservation {
    return this.#budget.reserve(now, estimate)
  }

  /**
   * Settles a finished call: the budget from its headers and usage, and for a refusal a pause:
   * its retry-after, or else, when no budget can be read to pace by, its exhausted reset.
   */
  settle(now: number, reservation: Reservation, outcome: Outcome, answer?: CallAnswer): Settled {
    const refused = outcome === 'throttled' || outcome === 'overloaded'
    const headers = answer?.headers
    const reading = refused && headers ? readBudgetHeaders(headers, now) : undefined
    const absorbed =
      this.#o.budget && outcome === 'throttled' && !!reading && exhausted(reading, reservation)
    if (this.#o.budget) {
      this.#budget.settle(now, reservation, { refused, headers, usage: answer?.usage })
    }
    if (!refused || !this.#o.pause || !headers) return { pause: null, absorbed }
    // With a budget the model waits exactly for the refill; a reset is when the bucket is full
    // again (both vendors), far later than the next call fits.
    const paced = this.#o.budget && reading !== undefined
    const wait = retryAfterMs(headers, now) ?? (paced ? undefined : retryDelayMs(headers, now))
    if (wait === undefined || wait <= 0) return { pause: null, absorbed }
    const jitter = this.#o.random() * Math.min(this.#o.resumeJitterMs, wait * 0.2)
    const until = Math.ceil(now + wait + jitter)
    if (until <= this.#pausedUntil) return { pause: null, absorbed }
    this.#pausedUntil = until
    const pause = {
      partition: this.#partition,
      ts: now,
      until,
      reason: `paused until ${new Date(until).toISOString()}`,
    }
    return { pause, absorbed }
  }

  snapshot(now: number): PacingSnapshot {
    return {
      pausedUntil: this.#pausedUntil > now ? this.#pausedUntil : null,
      budget: this.#budget.snapshot(now),
    }
  }
}

/** Some announced budget had less left than this call needed. */
function exhausted(reading: BudgetReading, reservation: Reservation): boolean {
  return Object.entries(reading).some(
    ([dim, r]) => r.remaining < Math.max(1, reservation.cost[dim as BudgetDimension]),
  )
}
