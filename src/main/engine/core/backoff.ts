// The one exponential backoff of the engine: a wait that starts at initialMs and grows by factor
// per attempt up to maxMs, with an optional random share. Every retry, poll and reconnect loop
// asks it for its waits instead of doubling a number of its own, so each site's policy is its
// options.

export interface BackoffOptions {
  /** The wait before the first retry (attempt 0), in ms; 0 keeps every wait 0, Infinity never. */
  initialMs: number
  /** No wait is longer than this, jitter included; at least initialMs. */
  maxMs: number
  /** How much each wait grows on the one before it. @default 2 */
  factor?: number
  /**
   * The share of each wait that is random, from 0 to 1: a wait of `d` becomes
   * `d × (1 − jitter) + random() × d × jitter`. 0.5 is "equal jitter" and 1 "full jitter" (AWS
   * Architecture Blog, "Exponential Backoff And Jitter"); either keeps many clients that failed
   * together from all retrying together.
   * @default 0
   */
  jitter?: number
  /** Random numbers in [0, 1) for the jitter (a seeded one in tests). @default Math.random */
  random?: () => number
}

/** A backoff's waits: by attempt number, or one after another until reset. */
export interface Backoff {
  /** The wait before retry number `attempt` (0 = the first), jittered; does not advance. */
  delay(attempt: number): number
  /** The wait for the next attempt, then counts it. */
  next(): number
  /** Starts over: the next wait is initialMs again (jittered). */
  reset(): void
}

/**
 * An exponential backoff: `min(maxMs, initialMs × factor^attempt)`, with `jitter` of it random.
 * Bad options throw a TypeError naming the option and the value.
 */
export function backoff(options: BackoffOptions): Backoff {
  const { initialMs, maxMs, factor = 2, jitter = 0, random = Math.random } = options
  if (!(initialMs >= 0)) {
    throw new TypeError(`Expected \`initialMs\` to be a number >= 0, got \`${String(initialMs)}\``)
  }
  if (!(maxMs >= initialMs)) {
    throw new TypeError(
      `Expected \`maxMs\` to be a number >= initialMs (${initialMs}), got \`${String(maxMs)}\``,
    )
  }
  if (!(Number.isFinite(factor) && factor >= 1)) {
    throw new TypeError(`Expected \`factor\` to be a number >= 1, got \`${String(factor)}\``)
  }
  if (!(jitter >= 0 && jitter <= 1)) {
    throw new TypeError(`Expected \`jitter\` to be a number from 0 to 1, got \`${String(jitter)}\``)
  }
  if (typeof random !== 'function') {
    throw new TypeError(`Expected \`random\` to be a function, got \`${String(random)}\``)
  }

  const delay = (attempt: number): number => {
    if (!(Number.isInteger(attempt) && attempt >= 0)) {
      throw new TypeError(`Expected \`attempt\` to be an integer >= 0, got \`${String(attempt)}\``)
    }
    // 0 × Infinity (factor^attempt past the largest double) is NaN, not 0.
    const ms = initialMs === 0 ? 0 : Math.min(maxMs, initialMs * factor ** attempt)
    // Without jitter no random number is drawn: a seeded random's sequence stays the caller's.
    // Infinity is kept as it is: random() × Infinity is NaN when random() is 0.
    if (jitter === 0 || ms === Infinity) return ms
    return ms * (1 - jitter) + random() * (ms * jitter)
  }

  let attempts = 0
  return {
    delay,
    next: () => delay(attempts++),
    reset: () => {
      attempts = 0
    },
  }
}
