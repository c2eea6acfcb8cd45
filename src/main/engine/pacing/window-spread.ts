// While the window a provider enforces is not known (the pace still allows the announced minute),
// the calls of a window go spread over half a round trip instead of in one instant. Slow start
// sends its window in the instant the last one is answered (a steady latency answers it in one
// instant): into a window of ten seconds that the window before had nearly emptied, 64 calls sent
// in one millisecond were 56 refusals (#300045), each answered before the pace could narrow. A
// refusal comes back within tens of ms, and spread, the calls sent meanwhile are a few. This is
// TCP's pacing in slow start: a window per round trip at twice its rate, which nearly keeps up
// with slow start (each answer sends two calls; on #100024, 4 -> 58 calls in flight in four round
// trips where the window bunched reached 64), so the controller's limit is still used and grows
// (adaptive.ts grows only a limit in use; spread at a fixed multiple of the announced rate
// instead, the windows stayed bunched at that spacing and slow start grew by two slots a round
// trip: #300011 0.92 -> 0.61 used). Once a refusal shows
// the window (send-pace.ts narrows to one call at a time) the pace spaces the calls itself.
// The window is the most calls in flight over the last two round trips: answered in one instant, the
// calls in flight fall to none while the window is what it was (spaced by the calls in flight
// instead, a window of 64 took two round trips to go; the family's figures were the same).

/** A window's calls go over 1/this of a round trip. */
const WINDOW_GAIN = 2
/** Calls that may go at once before the spacing applies (jitter between answers). */
const DEPTH = 2
/** The window is the most calls in flight over this many round trips. */
const PEAK_RTTS = 2
/** Weight of a new round trip in the smoothed one (EWMA). */
export const RTT_WEIGHT = 0.1
/**
 * A smoothed round trip under this many ms is the clock's own resolution (Date.now(): an answer
 * within the millisecond reads as one): no spread. The window's share of such a round trip is a
 * fraction of a millisecond the clock cannot tell from none, and read as a whole one it capped the
 * rate at two windows a millisecond, with the window itself read too small: calls admitted one at
 * a time through a shared store (Redis's round trips) settle before the next is admitted, so the
 * window read one call and the pace held 2 admissions a millisecond (bench:overhead's Redis row,
 * 1,773 admissions/s against 3,888 without the spread).
 */
export const CLOCK_RTT_MS = 2

/** Calls in flight and the smoothed round trip of served calls, as WindowSpread counts them. */
export interface RoundTrips {
  readonly inflight: number
  readonly srtt: number | null
}

export class WindowSpread implements RoundTrips {
  #inflight = 0
  #srtt: number | null = null
  #nextAt = Number.NEGATIVE_INFINITY
  // The window: the most calls in flight lately (answered in one instant, the calls in flight
  // fall to none while the window is still the size it was).
  #peak = 0
  #peakAt = Number.NEGATIVE_INFINITY

  get inflight(): number {
    return this.#inflight
  }

  get srtt(): number | null {
    return this.#srtt
  }

  /**
   * True if a rate of `callsPerMs` (the announced rate that is ours) takes the whole window within
   * a millisecond even enforced call by call: a burst of it cannot overrun any window the rate is
   * enforced in, and spread it only costs the scheduler (a wake-up per deferred call: a budget of
   * a billion a minute, bench:overhead's shared SQLite row, 1.06-1.15 transactions an admission
   * against 1.00).
   */
  withinRate(callsPerMs: number | null): boolean {
    return callsPerMs !== null && callsPerMs >= Math.max(1, this.#peak, this.#inflight + 1)
  }

  /** A call was admitted; `spread`: the window enforced is not known yet. */
  admitted(now: number, spread: boolean): void {
    this.#inflight++
    const window = this.#window(now)
    if (!spread || this.#srtt === null || this.#srtt < CLOCK_RTT_MS) return
    const gap = this.#srtt / (WINDOW_GAIN * Math.max(1, window))
    this.#nextAt = Math.max(this.#nextAt, now - (DEPTH - 1) * gap) + gap
  }

  #window(now: number): number {
    if (this.#inflight >= this.#peak || now - this.#peakAt > PEAK_RTTS * (this.#srtt ?? 0)) {
      this.#peak = this.#inflight
      this.#peakAt = now
    }
    return this.#peak
  }

  /** A call was answered; `served`: it was not refused (its round trip counts). */
  settled(now: number, sentAt: number, served: boolean): void {
    this.#inflight = Math.max(0, this.#inflight - 1)
    if (!served) return
    const rtt = Math.max(1, now - sentAt)
    this.#srtt = this.#srtt === null ? rtt : this.#srtt + RTT_WEIGHT * (rtt - this.#srtt)
  }

  /**
   * Ms until the next call may go. A wait under a millisecond is none: the spacing of a fast
   * provider's window is a fraction of one, and a timer rounds it up to a whole millisecond or
   * more (every call after the first two of each millisecond waited one: 2,000 calls a second on
   * 48 slots answered at once, where 96 may go each millisecond).
   */
  delayMs(now: number, spread: boolean): number {
    const wait = this.#nextAt - now
    return !spread || wait < 1 ? 0 : Math.ceil(wait)
  }
}
