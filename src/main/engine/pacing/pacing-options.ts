// What pacing beyond concurrency does, per partition, and its check.

import { RateBudget } from './rate-budget'
/** Pacing beyond concurrency, per partition. Every field has a default; `{}` turns it all on. */
/**
 * The longest a refusal pauses a partition. A provider asking for longer (a retry-after a year
 * ahead, a quota reset next month, a misconfigured proxy) is asked again after this long: one
 * refused call an hour costs nothing, and a run whose quota was raised or whose provider lied
 * goes on within the hour instead of sleeping for the full wait.
 */
export const MAX_PAUSE_MS = 3_600_000

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
  /**
   * A refusal's wait pauses the whole partition even when it is a lone one: other calls kept
   * succeeding since the last refusal, and the announced budget (if any) showed room. Off, such a
   * refusal retries only its own call, when the controller admits it again: one call over a
   * concurrency cap says nothing about the others. @default false
   */
  pauseOnLoneRefusal?: boolean
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
    pauseOnLoneRefusal = false,
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
  return {
    pause: pause !== false,
    budget: budget !== false,
    windowMs,
    resumeJitterMs,
    random,
    pauseOnLoneRefusal: pauseOnLoneRefusal === true,
  }
}
