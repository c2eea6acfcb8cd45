// A refusal that names its wait to the millisecond, shorter than half a round trip, is a bucket's
// refill, never a slot's (a server counting calls in flight cannot know when one ends; the
// family's caps say one second or nothing). With the spacing of the refused call from the send
// before it, the wait tells the rate: the bucket held nothing for Δ + wait after the last call
// took what it had, so one call per (Δ + wait) is what it refills. A rate whose bucket holds a
// single call refuses any call sent in the same instant as another, and the concurrency controller
// read it as a cap of one (#200044: 0.057 used, the rate held ~30 calls in flight). Waiting the
// refill out in place and keeping the refusal from the controller left the resends colliding
// (docs/pacing.md, "a refill named to the millisecond"): here the sends themselves are spaced by
// the learned gap, while the limit is free to hold as many calls as the gap allows in a round
// trip. A pace at the rate cannot use a burst a longer bucket saved, nor see a rise: every few
// successes, and at least every 30 s, one call goes at half the gap (a success halves the gap; a
// refusal names the rate again), and the pace ends once its gap is below a round trip's share a
// full limit needs.
// The pace a spaced test starts (spaced-rate.ts) also grows between its probes, as the floor's does
// (floor-pace.ts: a few % a success, doubling past a quarter above the gap last refused). Its
// probes at half the gap tell only a rate that doubled: below that, each refused probe doubled
// the successes to the next, and a pace cut to 0.8 of a rate stayed there (a bucket of a single
// call, 0.83 used at best), and a rate that rose less than twofold was never found. On
// `diag.ts --seed 0..19`, with the floor's pace held to the controller's range: rates nobody
// announces 0.736 -> 0.752 mean used, 10th percentile 0.289 -> 0.351, refused 2.63 -> 2.69 %;
// pooled 10th percentile 0.621 -> 0.623 (seeds 20..39, not chosen on: 0.607 -> 0.619).
// The pace a refill named to the ms sets does not grow: each refusal names the rate again.
// Pure: every method takes `now`. The round trip is the window spread's (one smoothing for the
// partition, as growth-spread.ts reads it).
import { parseNumber } from '../providers/classify'
import { DOUBLING_MS, PAST_REFUSED, paceGrowth } from './floor-pace'
import type { RoundTrips } from './window-spread'

/** A wait at most this share of the smoothed round trip is a refill, not a slot. */
const REFILL_RTT_SHARE = 0.5
/** Successes between the pace's probes at half the gap, at first and at most. */
const PROBE_EVERY_MIN = 8
const PROBE_EVERY_MAX = 128
/** A probe goes at least this often (ms), once PROBE_EVERY_MIN successes came since the last. */
const PROBE_MAX_MS = 30_000
/** A probe goes at this share of the gap. */
const PROBE_SHARE = 0.5
/** The pace ends when a round trip holds this many gaps: the controller's own range. */
const ENDS_AT_CALLS_PER_RTT = 64
/** A refusal at the pace cuts its rate at least to this share. */
const CUT = 0.8
/** Successes closer than this share of the refill's gap: a bucket of more than one call. */
const BURST_SHARE = 0.5
/** Recent sends kept to find the one before a refused call. */
const SENDS_KEPT = 64

export class RefillPace {
  readonly #trips: RoundTrips
  #gapMs: number | null = null
  #sends: number[] = []
  // Sends of recent successes, in order: how close two went through says what the bucket holds.
  #okSends: number[] = []
  #sinceProbe = 0
  readonly #every: number
  #probeEvery: number

  // The gap before the last probe carried, until the next probe: a refusal before then says the
  // probe went on what a bucket of more than one call had saved, not on a rise.
  #beforeProbe: number | null = null
  // The send that went at the probe's shorter gap, if one is out.
  #probeSentAt: number | null = null
  // Refusals of calls sent before this instant answer an older gap.
  #setAt = Number.NEGATIVE_INFINITY
  // Growth between probes (`grows`): the gap last refused, successes since the gap was set, and
  // the last success.
  readonly #grows: boolean
  #refusedGap: number | null = null
  #okSince = 0
  #lastOkAt = Number.NEGATIVE_INFINITY

  /**
   * `trips`: the partition's round trips, settled before this pace hears the answer;
   * `probeEvery`: successes between probes at first (spaced-rate.ts asks for more); `grows`: the
   * gap shrinks with successes between probes.
   */
  constructor(trips: RoundTrips, probeEvery = PROBE_EVERY_MIN, grows = false) {
    this.#trips = trips
    this.#every = probeEvery
    this.#probeEvery = probeEvery
    this.#grows = grows
  }

  /** Calls a ms while the pace holds, or null. */
  get callsPerMs(): number | null {
    return this.#gapMs === null ? null : 1 / this.#gapMs
  }

  #probedAt = Number.NEGATIVE_INFINITY
  #probeDue(now: number): boolean {
    if (this.#probeSentAt !== null || this.#sinceProbe < this.#every) return false
    return this.#sinceProbe >= this.#probeEvery || now - this.#probedAt >= PROBE_MAX_MS
  }

  /** Ms until the next call may go; 0 when no pace holds. */
  delayMs(now: number): number {
    const last = this.#sends[this.#sends.length - 1]
    if (this.#gapMs === null || last === undefined) return 0
    const gap = this.#probeDue(now) ? this.#gapMs * PROBE_SHARE : this.#gapMs
    return Math.max(0, Math.ceil(last + gap - now))
  }

  admitted(now: number): void {
    const last = this.#sends[this.#sends.length - 1]
    if (this.#gapMs !== null && this.#probeDue(now) && last !== undefined) {
      if (now - last < this.#gapMs) {
        this.#probeSentAt = now
        this.#probedAt = now
      }
    }
    this.#sends.push(now)
    if (this.#sends.length > SENDS_KEPT) this.#sends.shift()
  }

  /** The closest two recent successful sends came (ms). */
  #closestOkMs(): number {
    let closest = Number.POSITIVE_INFINITY
    for (let i = 1; i < this.#okSends.length; i++) {
      closest = Math.min(closest, (this.#okSends[i] ?? 0) - (this.#okSends[i - 1] ?? 0))
    }
    return closest
  }

  succeeded(now: number, sentAt: number): void {
    let i = this.#okSends.length
    while (i > 0 && (this.#okSends[i - 1] ?? 0) > sentAt) i--
    this.#okSends.splice(i, 0, sentAt)
    if (this.#okSends.length > SENDS_KEPT) this.#okSends.shift()
    const srtt = this.#trips.srtt
    if (this.#gapMs === null || srtt === null) return
    if (sentAt === this.#probeSentAt) {
      // The bucket held a call at the shorter spacing: the rate is at least that.
      this.#probeSentAt = null
      this.#sinceProbe = 0
      this.#probeEvery = this.#every
      this.#beforeProbe = this.#gapMs
      this.#gapMs *= PROBE_SHARE
      this.#setAt = now
      if (this.#gapMs * ENDS_AT_CALLS_PER_RTT < srtt) this.#end()
      return
    }
    if (++this.#sinceProbe >= this.#probeEvery) this.#beforeProbe = null
    if (this.#grows && sentAt > this.#setAt) this.#grow(now, srtt)
  }

  /** A success of a call sent at the gap as it is: the rate grows (floor-pace.ts's growth). */
  #grow(now: number, srtt: number): void {
    const gap = this.#gapMs as number
    this.#okSince++
    const since = Math.max(this.#okSince, (now - this.#setAt) / 1000)
    // Ms of successes toward the doubling: a doubling's worth at most per success.
    const ms = Math.min(DOUBLING_MS, Math.max(0, now - Math.max(this.#lastOkAt, this.#setAt)))
    if (now > this.#lastOkAt) this.#lastOkAt = now
    const refused = this.#refusedGap
    const past = refused === null || gap * PAST_REFUSED < refused
    this.#gapMs = gap / (1 + paceGrowth(since, 1, past ? ms : null))
    if (this.#gapMs * ENDS_AT_CALLS_PER_RTT < srtt) this.#end()
  }

  #end(): void {
    this.#gapMs = null
    this.#beforeProbe = null
    this.#probeSentAt = null
    this.#sinceProbe = 0
    this.#probeEvery = this.#every
  }

  /** Starts the pace at `gapMs` from a spaced call that carried (spaced-rate.ts). */
  start(now: number, gapMs: number): void {
    this.#end()
    this.#refusedGap = gapMs
    this.#okSince = 0
    this.#gapMs = gapMs
    this.#setAt = now
  }

  /**
   * A refusal that names no refill while the pace holds (one spaced-rate.ts started): true, it is
   * the pace's. A refused probe keeps the gap; another refusal cuts the rate to CUT, once per gap.
   */
  cut(now: number, sentAt: number): boolean {
    if (this.#gapMs === null) return false
    if (sentAt === this.#probeSentAt) {
      this.#probeSentAt = null
      this.#sinceProbe = 0
      this.#probeEvery = Math.min(PROBE_EVERY_MAX, this.#probeEvery * 2)
      return true
    }
    if (sentAt < this.#setAt) return true
    this.#refusedGap = this.#gapMs
    this.#okSince = 0
    this.#gapMs = Math.max(this.#gapMs / CUT, this.#beforeProbe ?? 0)
    if (this.#beforeProbe !== null) {
      this.#beforeProbe = null
      this.#probeEvery = Math.min(PROBE_EVERY_MAX, this.#probeEvery * 2)
    }
    this.#setAt = now
    return true
  }

  /**
   * A refusal: true if it named a refill (the pace starts or is set by it, and it is the pace's to
   * answer, not the controller's). Only `retry-after-ms` names one: `retry-after: 1` is a slot's.
   */
  refused(now: number, sentAt: number, headers: Record<string, string> | undefined): boolean {
    let raw: string | undefined
    for (const k in headers) if (k.toLowerCase() === 'retry-after-ms') raw = headers[k]
    const waitMs = raw === undefined ? undefined : parseNumber(raw)
    const probe = sentAt === this.#probeSentAt
    if (probe) {
      this.#probeSentAt = null
      this.#sinceProbe = 0
      this.#probeEvery = Math.min(PROBE_EVERY_MAX, this.#probeEvery * 2)
    }
    const srtt = this.#trips.srtt
    if (srtt === null || waitMs === undefined || !(waitMs > 0)) return false
    if (waitMs > srtt * REFILL_RTT_SHARE) return false
    if (sentAt < this.#setAt) return this.#gapMs !== null
    const at = this.#sends.lastIndexOf(sentAt)
    const prev = this.#sends[at - 1]
    if (at < 1 || prev === undefined) return false
    // Δ + wait is exact where the bucket holds one call; where it holds more, the call before
    // left some, and it reads the rate too high: a refusal at the pace cuts it at least to CUT.
    // A refused probe only says the gap it left was too short.
    const gap = sentAt - prev + waitMs
    // Two calls that both went through closer than half of it: the bucket holds more than one.
    if (this.#gapMs === null && this.#closestOkMs() < gap * BURST_SHARE) return false
    const floor = (this.#gapMs ?? 0) / (probe ? 1 : CUT)
    this.#gapMs = Math.max(gap, floor, this.#beforeProbe ?? 0)
    if (this.#beforeProbe !== null) {
      this.#beforeProbe = null
      this.#probeEvery = Math.min(PROBE_EVERY_MAX, this.#probeEvery * 2)
    }
    this.#setAt = now
    return true
  }
}
