/** Answers at least this much faster (in log terms, ×0.75) than the level's first window. */
const MIN_DROP = Math.log(1 / 0.75)
/** ... and by this many standard errors of the difference of two windows' mean log latencies. */
const Z = 3
/** The fewest answers a window holds. */
const MIN_WINDOW = 8

function meanAndSd(xs: readonly number[]): { mean: number; sd: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1)
  return { mean, sd: Math.sqrt(variance) }
}

/**
 * "Latency drop": a server slows down as it fills, so answers at one level of calls in flight
 * that become markedly faster than they were at that level say that the load on the server fell
 * (its capacity rose, or another tenant left) before any probe could. The controller holding
 * below a refused level then probes at once instead of waiting out its wait (round trips that a
 * refused probe doubled). Windows as large as the level (at least 8 answers), compared in log
 * latency against the spread the level's first window showed: a log-normal spread or a heavy tail
 * does not read as a drop (a false one costs a refused probe and doubles the next wait). One early
 * probe per level.
 */
export class LatencyDrop {
  #window = MIN_WINDOW
  #reference: { mean: number; sd: number } | null = null
  #samples: number[] = []

  /** A new level: what its answers take is learned afresh. */
  reset(level: number): void {
    this.#window = Math.max(MIN_WINDOW, Math.ceil(level))
    this.#reference = null
    this.#samples = []
  }

  /** One served call's round trip at the current level; true when the load has markedly fallen. */
  observe(rttMs: number): boolean {
    this.#samples.push(Math.log(Math.max(1, rttMs)))
    if (this.#samples.length < this.#window) return false
    const window = meanAndSd(this.#samples)
    this.#samples = []
    const reference = this.#reference
    if (reference === null) {
      this.#reference = window
      return false
    }
    const se = Math.sqrt((reference.sd ** 2 + window.sd ** 2) / this.#window)
    if (reference.mean - window.mean < Math.max(MIN_DROP, Z * se)) return false
    this.reset(this.#window)
    return true
  }
}
