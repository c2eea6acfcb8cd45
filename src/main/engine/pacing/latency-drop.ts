import { KeptReference } from './kept-reference'

/** Answers at least this much faster (in log terms, ×0.75) than the level's first window. */
const MIN_DROP = Math.log(1 / 0.75)
/** ... and by this many standard errors of the difference of two windows' mean log latencies. */
const Z = 3
/** The fewest answers a window holds. */
const MIN_WINDOW = 8

interface Window {
  mean: number
  sd: number
}

function meanAndSd(xs: readonly number[]): Window {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1)
  return { mean, sd: Math.sqrt(variance) }
}

/** The window markedly faster than the reference, windows of `n` answers. */
function dropped(reference: Window | null, window: Window, n: number): boolean {
  if (reference === null) return false
  const se = Math.sqrt((reference.sd ** 2 + window.sd ** 2) / n)
  return reference.mean - window.mean >= Math.max(MIN_DROP, Z * se)
}

/**
 * "Latency drop": a server slows down as it fills, so answers at one level of calls in flight
 * that become markedly faster than they were at that level say that the load on the server fell
 * (its capacity rose, or another tenant left) before any probe could. The controller holding
 * below a refused level then probes at once instead of waiting out its wait (round trips that a
 * refused probe doubled). Windows as large as the level (at least 8 answers), compared in log
 * latency against the spread the level's first window showed: a log-normal spread or a heavy tail
 * does not read as a drop (a false one costs a refused probe and doubles the next wait). One early
 * probe per level. A level a refused probe came back to is also compared with what it learned
 * before the probe (kept-reference.ts).
 */
export class LatencyDrop {
  #window = MIN_WINDOW
  #reference: Window | null = null
  #samples: number[] = []
  readonly #kept = new KeptReference<Window>()
  #before: Window | null = null
  #at: { level: number; ceiling: number | null } = { level: 0, ceiling: null }

  /**
   * A new level: what its answers take is learned afresh. `ceiling`: the refused level above it
   * (null: none); a refused probe's return to the level keeps what the level learned before.
   */
  reset(level: number, ceiling: number | null = null): void {
    this.#window = Math.max(MIN_WINDOW, Math.ceil(level))
    this.#reference = null
    this.#samples = []
    this.#before = this.#kept.reference(level, ceiling)
    this.#at = { level, ceiling }
  }

  /** One served call's round trip at the current level; true when the load has markedly fallen. */
  observe(rttMs: number): boolean {
    this.#samples.push(Math.log(Math.max(1, rttMs)))
    if (this.#samples.length < this.#window) return false
    const window = meanAndSd(this.#samples)
    this.#samples = []
    const reference = this.#reference
    if (reference === null) this.#reference = window
    if (reference === null) this.#keep(window)
    const n = this.#window
    if (!dropped(reference, window, n) && !dropped(this.#before, window, n)) return false
    this.#kept.forget()
    this.reset(this.#window)
    return true
  }

  /** The level's first window, kept for its return after a refused probe (the first one kept). */
  #keep(window: Window): void {
    const { level, ceiling } = this.#at
    if (this.#kept.reference(level, ceiling) === null) this.#kept.keep(level, ceiling, window)
  }
}
