// The scheduler's samples for the live chart: one every interval while any partition holds a
// slot or has waiters, then one idle sample before stopping, so the chart falls back to zero.
/** Starts and stops the sample timer. */
export class Sampling {
  readonly #intervalMs: number
  readonly #sample: () => void
  readonly #active: () => boolean
  #timer: NodeJS.Timeout | undefined

  constructor(intervalMs: number, sample: () => void, active: () => boolean) {
    this.#intervalMs = intervalMs
    this.#sample = sample
    this.#active = active
  }

  /** Starts sampling, unless it runs already. */
  start(): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => {
      this.#sample()
      if (!this.#active()) this.stop()
    }, this.#intervalMs)
    // The chart must not keep a finished CLI process alive.
    this.#timer.unref()
  }

  stop(): void {
    if (this.#timer === undefined) return
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}
