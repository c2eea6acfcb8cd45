// The adaptive controller's options and what it has learned (adaptive.ts), apart so that the
// controller's file holds its rules.
export interface AdaptiveOptions {
  /**
   * How many times a refused probe doubles the wait before the next one: the waits are
   * cooldownMs, 2 x cooldownMs, ... up to cooldownMs x 2^maxProbeDoublings. A cap keeps a raised
   * capacity findable: with the seed's 8 s, a probe at least every 16 s. @default 1
   */
  maxProbeDoublings?: number
  /**
   * Where the limit starts instead of `initial`: a controller swapped in mid-run starts at the
   * partition's current limit (clamped into [min, max]), in slow start. @default params.initial
   */
  limit?: number
}

/** What the controller has learned about the partition, for tests and the console. */
export interface AdaptiveMemory {
  /** Still in slow start: no throttle seen yet, the limit grows by 1 per used success. */
  slowStart: boolean
  /** Highest level that carried a full window of successes since the capacity last dropped. */
  held: number
  /** Lowest level refused since the last probe that held, or null when none is known. */
  ceiling: number | null
  /** Consecutive refused probes. */
  refusedProbes: number
  /** When the limit may next probe above the ceiling (epoch ms). */
  nextProbeAt: number
  /** The limit sits at the ceiling to see whether the capacity rose. */
  probing: boolean
  /** When the last cut was made: throttles from calls sent until then are the same episode. */
  lastCutAt: number
  /** Smoothed round trip of successful calls (ms), null before the first: probes wait in it. */
  srtt: number | null
  /** The ceiling windows carried at it lifted it to, with an announced budget (0: none). */
  lifted: number
}
