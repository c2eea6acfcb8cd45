// A pace below one call in flight, for a provider that refuses even one call at a time and says
// neither how long to wait nor what its budget is (a rate limit without headers, slower than one
// call per round trip). Without it, the floor's only answer was a backoff that a success reset,
// so such a provider refused every other call. Calls go at a learned rate instead, AIMD in rate:
// a refusal cuts it (once per episode), successes grow it, slowly near the rate that was refused
// and faster the longer none is (CUBIC's shape), so a rate that rose is found within a few
// hundred calls and a steady one costs about one refusal in fifty. Pure: every method takes `now`.
// The rate is the partition's: its workers share it through the store (learned-pace.ts), and each
// spaces its own sends at its share, the rate split between the workers recently at the floor.
// A cycle down to the floor (floor-cycle.ts) starts it above one call per round trip: it then holds
// up to three, where a rate nobody announces still cycles a concurrency limit of one or two calls;
// started by a refusal at the floor it holds up to the controller's range (below).
// Past the rate last refused by a quarter with none refused, the rate rose (a tenant left, a phase
// ended): the pace then doubles every two seconds of successes, slow start in rate, instead of
// growing a few % per success (a pace a cycle started has no rate refused: it doubles from its
// first success). Before, a rate nobody announces that fell to about a call a second and rose many
// times over was found in tens of calls, half a minute or more, longer than many phases (#800069,
// 509 > 32 > 2,587 a minute: 0.584 used, now 0.981). A success counts at most one doubling: after
// idle time, ten round trips of gap at 2-s answers would be ×1,024. On `diag.ts --seed 0..19`
// (1,200 draws; docs/pacing.md): rates nobody announces 0.726 -> 0.736 mean used, their 10th
// percentile 0.259 -> 0.289, pooled 10th percentile 0.615 -> 0.621; they are refused more (2.50
// -> 2.63 %). Doubling from the rate refused itself gained more and was refused more: the bench's
// seed's 90th percentile throttled 2.91 -> 3.18 %, over its target.
// A pace a refusal started holds until it allows 64 calls per round trip, not a call and a half:
// ended there, the concurrency limit took over a rate it had not found, sent calls in one instant
// that a bucket of a second or a single call refuses, and was cut by half on each (#700023, 60 >
// 952 a minute enforced per call: a call a second for 40 s after the rise, then cuts to one call).
// Paced, the sends stay apart and the pace's doubling finds the rise (spaced-rate.ts does the same
// for the pace a spaced test starts).
import type { FloorLearned } from './learned-pace'

/** A refusal cuts the rate to this share. */
const CUT = 0.8
/** Growth per success right after a cut. */
const GROWTH = 0.005
/** Successes (or seconds, if more) since the cut over which the growth per success doubles. */
const ACCELERATE_AFTER = 10
/** Weight of a new round trip in the smoothed one. */
const RTT_WEIGHT = 0.125
/**
 * Once the rate allows this many calls per round trip, the pace ends: the concurrency controller's
 * own range (refill-pace.ts ends there too).
 */
const ENDS_AT_CALLS_PER_RTT = 64
/**
 * Where a pace a cycle started ends (floor-cycle.ts): at a call and a half it ended at once, and a
 * rate a second still cycled the limit between 1 and 6. (Every pace ending at three held back a
 * cap that rose from one slot to two: #600021, 0.920 -> 0.899 used.)
 */
const CYCLE_ENDS_AT_CALLS_PER_RTT = 3
/** Past this multiple of the rate last refused, with none refused, the rate rose... */
export const PAST_REFUSED = 1.25
/** ... and the pace doubles with each this many ms of successes. */
export const DOUBLING_MS = 2000
/** The most round trips between successes that count as growth. */
const MAX_GAP_RTTS = 10
/** A worker that sent at the floor within this long (or four of its spacings) shares the rate. */
const ACTIVE_MS = 5000
/** A worker not seen at the floor for this long is forgotten. */
const FORGET_MS = 60_000

const UNLEARNED: FloorLearned = Object.freeze({
  ratePerMs: null,
  refusedPerMs: null,
  cutAt: null,
  sinceCut: 0,
  lastOkAt: null,
  workers: Object.freeze({}),
})

export class FloorPace {
  #ratePerMs: number | null = null
  #srtt: number | null = null
  #lastSentAt = Number.NEGATIVE_INFINITY
  #lastCutAt = Number.NEGATIVE_INFINITY
  #sinceCut = 0
  #lastOkAt = Number.POSITIVE_INFINITY
  // The rate the last cut answered, calls per ms (null: none since the pace began).
  #refusedPerMs: number | null = null
  // Calls per round trip at which the pace ends: higher when a cycle started it.
  #endsAt = ENDS_AT_CALLS_PER_RTT
  // The workers sharing the rate (learned-pace.ts): empty while this one is alone.
  #workers: Record<string, number> = {}
  readonly #worker: string

  /** `worker`: this worker's name among those sharing the partition's rate. */
  constructor(worker = '') {
    this.#worker = worker
  }

  /** Calls per minute while the pace holds (the partition's, every worker's), or null. */
  get perMinute(): number | null {
    return this.#ratePerMs === null ? null : this.#ratePerMs * 60_000
  }

  /** The workers the rate is split between as of `now`: this one, and the others recently seen. */
  share(now: number): number {
    let n = 1
    const rate = this.#ratePerMs
    if (rate === null) return n
    const since = now - Math.max(ACTIVE_MS, 4 / rate)
    for (const w in this.#workers) {
      if (w !== this.#worker && (this.#workers[w] as number) >= since) n++
    }
    return n
  }

  /**
   * Ms until the next call may go: this worker's sends spaced at its share of the rate, times
   * `weight` (floor-sizes.ts: a call's share of the spacing by its size).
   */
  delayMs(now: number, weight = 1): number {
    if (this.#ratePerMs === null) return 0
    const spacing = (weight * this.share(now)) / this.#ratePerMs
    return Math.max(0, Math.ceil(this.#lastSentAt + spacing - now))
  }

  admitted(now: number): void {
    this.#lastSentAt = now
  }

  /** When the pace was last cut (epoch ms): a new value is a cut to share. */
  get cutAt(): number {
    return this.#lastCutAt
  }

  /** What refusals and successes taught the pace, as the partition's other workers continue from it. */
  learned(now: number): FloorLearned {
    const workers: Record<string, number> = {}
    for (const w in this.#workers) {
      const at = this.#workers[w] as number
      if (at >= now - FORGET_MS) workers[w] = at
    }
    return {
      ratePerMs: this.#ratePerMs,
      refusedPerMs: this.#refusedPerMs,
      cutAt: Number.isFinite(this.#lastCutAt) ? this.#lastCutAt : null,
      sinceCut: this.#sinceCut,
      lastOkAt: Number.isFinite(this.#lastOkAt) ? this.#lastOkAt : null,
      workers,
    }
  }

  /**
   * Continues from what the partition's workers learned (undefined: nothing yet); the round trip
   * and this worker's sends stay its own.
   */
  adopt(learned: FloorLearned | undefined): void {
    const l = learned ?? UNLEARNED
    this.#ratePerMs = l.ratePerMs
    // A record written before the rule was kept (no such field) with a cut: its rate is taken for
    // the one refused, so the doubling waits for another quarter, as after any cut.
    this.#refusedPerMs =
      l.refusedPerMs === undefined && l.cutAt !== null ? l.ratePerMs : (l.refusedPerMs ?? null)
    this.#lastCutAt = l.cutAt ?? Number.NEGATIVE_INFINITY
    this.#sinceCut = l.sinceCut
    this.#lastOkAt = l.lastOkAt ?? Number.POSITIVE_INFINITY
    this.#workers = { ...l.workers }
  }

  /** This worker was at the floor now: it counts among those sharing the rate. */
  seen(now: number): void {
    if (this.#worker !== '') this.#workers[this.#worker] = now
  }

  succeeded(now: number, sentAt: number): void {
    const rtt = Math.max(1, now - sentAt)
    this.#srtt = this.#srtt === null ? rtt : this.#srtt + RTT_WEIGHT * (rtt - this.#srtt)
    this.grow(now, sentAt)
  }

  /** A success's growth of the rate (the round trip already counted). */
  grow(now: number, sentAt: number): void {
    if (this.#ratePerMs === null || this.#srtt === null || sentAt <= this.#lastCutAt) return
    this.#sinceCut++
    // A success many round trips after the last one carries as much news as that many would.
    const gap = Math.min(MAX_GAP_RTTS, Math.max(1, (now - this.#lastOkAt) / this.#srtt))
    // Ms of successes this one adds to the doubling: none for the first since the pace (re)began,
    // at most a doubling's worth (a success after idle time says the rate rose no more than one
    // in the usual stream does).
    const since0 = Math.max(this.#lastOkAt, this.#lastCutAt)
    const ms = Math.min(gap * this.#srtt, DOUBLING_MS, Math.max(0, now - since0))
    // Replayed out of order (learned-pace.ts), a success never moves the last one back.
    if (!Number.isFinite(this.#lastOkAt) || now > this.#lastOkAt) this.#lastOkAt = now
    const since = Math.max(this.#sinceCut, (now - this.#lastCutAt) / 1000)
    const refused = this.#refusedPerMs
    const past = refused === null || this.#ratePerMs > refused * PAST_REFUSED
    this.#ratePerMs *= 1 + paceGrowth(since, gap, past ? ms : null)
    if (this.#ratePerMs * this.#srtt >= this.#endsAt) {
      this.#ratePerMs = null
      this.#refusedPerMs = null
    }
  }

  /** The pace starts at `ratePerMs` (floor-cycle.ts: a cycle to the floor said what is served). */
  start(now: number, ratePerMs: number): void {
    this.#lastCutAt = now
    this.#sinceCut = 0
    this.#ratePerMs = ratePerMs
    // What a cycle said is served was not refused as a pace: past it, nothing holds the doubling.
    this.#refusedPerMs = null
    this.#endsAt = CYCLE_ENDS_AT_CALLS_PER_RTT
  }

  /** A refusal at the floor with no budget to pace by: the pace starts, or is cut. */
  refused(now: number, sentAt: number): void {
    if (sentAt <= this.#lastCutAt) return
    this.#lastCutAt = now
    this.#sinceCut = 0
    // One call per round trip is what the floor sent: the pace starts below it.
    const rtt = this.#srtt ?? Math.max(1, now - sentAt)
    const from = this.#ratePerMs ?? 1 / rtt
    this.#refusedPerMs = from
    if (this.#ratePerMs === null) this.#endsAt = ENDS_AT_CALLS_PER_RTT
    this.#ratePerMs = from * CUT
  }
}

/**
 * A success's growth of a learned rate, as a share of it: a few % a success, more the longer
 * (`since`: successes or seconds since the cut, whichever is more) none was refused, times the
 * round trips (`gap`) it stands for; past the rate refused, the doubling its `doublingMs` of
 * successes make, if more (null: not past it).
 */
export function paceGrowth(since: number, gap: number, doublingMs: number | null): number {
  const growth = GROWTH * (1 + since / ACCELERATE_AFTER) * gap
  return doublingMs === null ? growth : Math.max(growth, 2 ** (doublingMs / DOUBLING_MS) - 1)
}
