// A call above the level served counts as held only once it has been out longer than a refusal
// takes to come back. The growth's spread (growth-spread.ts) sends the calls above the most calls
// out when one was served, and a success of an older call while they are out raised that level
// to count them at once: a call sent 2 ms before was "served", the next above it went at once,
// and a cap refusing the first within its 5-30 ms refused the ones sent meanwhile with it, each a
// sibling that says nothing new and, refused again with no success between, a pause (a probe's
// regrowth past a cap of 40 behind fixed 500-ms calls, with the refill spread: 40 -> 62 in 3 ms,
// 11 siblings and two pauses of a second; spaced by the refusal's return instead, the regrowth
// to a risen cap came later: #100045 regain 5.9 -> 8.3 round trips). The return is the longest
// of the last refusals' round trips, at most a quarter of a round trip (a provider that refuses
// slowly still counts its calls within one); no refusal yet (a fresh slow start): none.

/** The refusals whose round trips count. */
const KEPT = 8
/** The return is at most 1/this of the smoothed round trip of served calls. */
const MIN_PER_RTT = 4

/** The longest of the last few refusals' round trips. */
export class RefusalReturn {
  readonly #times: number[] = []

  /** Ms a refusal takes to come back, given the smoothed round trip `srtt` (0: none seen). */
  ms(srtt: number): number {
    if (this.#times.length === 0) return 0
    return Math.min(Math.max(...this.#times), srtt / MIN_PER_RTT)
  }

  /** A call sent at `sentAt` was refused at `now`. */
  refused(now: number, sentAt: number): void {
    this.#times.push(Math.max(0, now - sentAt))
    if (this.#times.length > KEPT) this.#times.shift()
  }
}

/**
 * Of the calls above the level served still out (`above`: how many went at each instant), those
 * sent within `returnMs` of `now`: their refusal may still be on its way.
 */
export function unconfirmed(
  above: ReadonlyMap<number, number>,
  now: number,
  returnMs: number,
): number {
  let n = 0
  for (const [at, count] of above) if (now - at < returnMs) n += count
  return n
}
