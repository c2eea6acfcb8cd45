// Admissions spread at the announced rate, whatever window the provider says it counts in. An
// announced "per minute" may be enforced per second or per request (OpenAI documents such
// "quantized" limits: 60 RPM can mean one request a second), and another tenant of the key may
// spend part of it: a model that admits whatever `remaining` shows sends bursts into a window
// that refuses them. So every dimension also has a pace: a bucket refilled at the rate that is
// ours (the announced one, less what others were seen to spend), holding at most `burstMs` of it.
// The burst starts at the announced window (the evidence: the provider said "per minute") and
// falls to a single call at the first refusal the announced budget does not explain: the window
// enforced is shorter, and one call at a time at the rate suits every window. (A step through a
// one-second burst first was measured on the family: more refusals, a worse 10th percentile.)
// Refusals after that are not about spacing. The refusal also says how short the window is
// (rate-budget.ts reads it from its `remaining`): the pace keeps it, and while the headers show
// clear room in that window (before a refusal, the announced minute's, up to the burst) the pace
// holds no less (`raise`): the rate ours need not be known to the percent. Pure: takes `now`.
import { episodeWindowMs } from './episode-window'
import { FallRefusal, type FallContext, type ShareState } from './fall-refusal'
import { freshSingleLane } from './fresh-lane'
import { LaneBook } from './lane-book'
import type { Lane, PaceView } from './pace-lane'
import type { SendLearned } from './learned-pace'
import type { BudgetDimension } from './budget-reading'
import { readOthers } from './others-estimate'
import { ShareCycle } from './share-cycle'
import { narrowedWindow } from './window-floor'
import {
  SINGLE_CALL_MARGIN,
  SINGLE_CALL_TOKENS,
  SCALE_CUT,
  MIN_SCALE,
  SCALE_GROWTH_PER_S,
  SCALE_REGROWTH_CALLS,
} from './send-pace-settings'

export type { PaceView } from './pace-lane'

/** The burst the pace allows until a refusal says the window is shorter: the announced window. */
export const INITIAL_BURST_MS = 60_000

const UNLEARNED: SendLearned = Object.freeze({
  burstMs: INITIAL_BURST_MS,
  scale: 1,
  scaleAt: null,
  cutAt: null,
})

export class SendPace {
  readonly #lanes = new Map<BudgetDimension, Lane>()
  #burstMs = INITIAL_BURST_MS
  // The window the provider enforces, in ms of the announced rate: where a refusal came, as its
  // `remaining` showed (the announced window until one did).
  #windowMs = INITIAL_BURST_MS
  #lastCutAt = Number.NEGATIVE_INFINITY
  // The share of the announced rate that is ours, as refusals one call at a time taught it: a
  // tenant the headers hide, a `remaining` that lags, a cap on calls in flight.
  #scale = 1
  #scaleAt = Number.NEGATIVE_INFINITY
  // Calls admitted since the share was last cut: a slow rate regrows per call, not per second.
  #callsSinceCut = 0
  // Workers sending at this rate (the store counts them): each takes its share, whatever the
  // headers show. What others spend is learned from `remaining` only while the minute's bucket
  // is below 90 %: three processes on a full bucket each took the whole rate and were refused.
  #workers = 1
  // The latest moment the pace was asked about, for the view.
  #seen = Number.NEGATIVE_INFINITY
  // Falls of the announced limit: a refusal they explain cuts nothing (fall-refusal.ts).
  readonly #falls = new FallRefusal()
  readonly #cycle = new ShareCycle() // where refusals came: a repeat cuts less (share-cycle.ts)

  get burstMs(): number {
    return this.#burstMs
  }

  /** The window the provider enforces as refusals showed it, ms of the announced rate. */
  get windowMs(): number {
    return this.#windowMs
  }

  /** Workers sending at this rate, this one included. */
  get workers(): number {
    return this.#workers
  }

  /** When the pace was last narrowed or cut (epoch ms): a new value is a cut to share. */
  get cutAt(): number {
    return this.#lastCutAt
  }

  /** What refusals taught the pace, as the partition's other workers continue from it. */
  learned(): SendLearned {
    const finite = (t: number) => (Number.isFinite(t) ? t : null)
    return {
      burstMs: this.#burstMs,
      scale: this.#scale,
      scaleAt: finite(this.#scaleAt),
      cutAt: finite(this.#lastCutAt),
      ...(this.#windowMs < INITIAL_BURST_MS && { windowMs: this.#windowMs }),
    }
  }

  /**
   * Continues from what the partition's workers learned (learned-pace.ts); undefined: nothing
   * yet, the pace as it starts.
   */
  adopt(learned: SendLearned | undefined, now: number, workers = this.#workers): void {
    const l = learned ?? UNLEARNED
    if (
      workers === this.#workers &&
      l.burstMs === this.#burstMs &&
      (l.windowMs ?? INITIAL_BURST_MS) === this.#windowMs &&
      l.scale === this.#scale &&
      (l.cutAt ?? Number.NEGATIVE_INFINITY) === this.#lastCutAt
    ) {
      return
    }
    // The lanes' levels refill at the old rate up to now; the new one applies from here.
    this.#settleLevels(now)
    this.#burstMs = l.burstMs
    this.#windowMs = l.windowMs ?? INITIAL_BURST_MS
    this.#scale = l.scale
    this.#scaleAt = l.scaleAt ?? Number.NEGATIVE_INFINITY
    this.#lastCutAt = l.cutAt ?? Number.NEGATIVE_INFINITY
    this.#workers = Math.max(1, workers)
  }

  /**
   * The rate is announced (or changed) for a dimension: the lane follows it. `sent`: the call
   * whose answer announced it (when it was sent, what the pace would have charged it).
   */
  announce(
    dim: BudgetDimension,
    ratePerMs: number,
    now: number,
    sent?: { at: number; cost: number },
  ): void {
    const lane = this.#lanes.get(dim)
    if (lane) {
      this.#advance(lane, now)
      const undo = this.#falls.announced(lane.ratePerMs, ratePerMs, now, lane.meanCost)
      const share = { scale: this.#currentScale(now), scaleAt: now, callsSinceCut: 0 }
      if (this.#cycle.moved(lane.ratePerMs, ratePerMs, now, lane)) this.#restoreShare(share, now)
      lane.ratePerMs = ratePerMs
      if (undo) this.#restoreShare(undo, now)
      return
    }
    const tokens = dim !== 'requests'
    const fresh: Lane = {
      ratePerMs,
      othersShare: 0,
      level: 0,
      at: now,
      reading: null,
      meanCost: 0,
      tokens,
      held: tokens ? SINGLE_CALL_TOKENS : 1,
      book: tokens ? new LaneBook() : null,
      samples: 0,
    }
    this.#lanes.set(dim, fresh)
    if (this.#burstMs === 0 && sent && sent.cost > 0) {
      // Born one call at a time (other workers narrowed it): the call that announced it counts.
      const rate = this.#rate(fresh, now)
      Object.assign(fresh, freshSingleLane(rate, sent.at, sent.cost, fresh.held, now))
      return
    }
    // A new lane starts with its burst full.
    fresh.level = this.#capacity(fresh, this.#rate(fresh, now))
  }

  /**
   * A reading of the provider's `remaining` as of a call, and what we had spent up to that call as
   * the provider counts it (cumulative: rate-budget.ts counts what answers said calls cost, and
   * nothing for a refusal): from two of them, what others spent in between. Only while the bucket
   * was not full (a full bucket hides what was spent).
   */
  observe(dim: BudgetDimension, at: number, remaining: number, limit: number, spent: number): void {
    const lane = this.#lanes.get(dim)
    if (lane) readOthers(lane, at, remaining, limit, spent)
  }

  /**
   * A refusal the announced budget did not explain: the window enforced is shorter than the
   * announced one, so calls go one at a time; `windowMs`, where the refusal came in the announced
   * bucket (ms of its rate), is kept as the window enforced. Once they go one at a time, a
   * refusal is not about spacing: it cuts the share of the rate that is ours. Always true: the
   * refusal is the pace's to answer, not the concurrency controller's.
   */
  refusedUnexplained(sentAt: number, now: number, windowMs?: number): boolean {
    // One narrowing per episode (TCP NewReno): calls sent before it were paced the old way, and
    // so were those sent too soon after it to be paced the new way (episode-window.ts).
    if (sentAt <= this.#lastCutAt + this.#episodeMs(now)) return true
    if (this.#burstMs === 0 && this.#falls.explains(sentAt, this.#fallContext(now))) return true
    this.#lastCutAt = now
    this.#windowMs = narrowedWindow(this.#windowMs, windowMs, this.#oneCallMs())
    if (this.#burstMs === 0) {
      // Already one call at a time and still refused: less of the rate is ours than announced.
      this.#settleLevels(now)
      this.#falls.cut(now, this.#fallContext(now))
      const share = this.#currentScale(now)
      this.#scale = Math.max(MIN_SCALE, share * this.#cycle.cut(share, SCALE_CUT, sentAt, now))
      this.#scaleAt = now
      this.#callsSinceCut = 0
      return true
    }
    this.#burstMs = 0
    return true
  }

  /**
   * The headers show `room` free in the window enforced (rate-budget.ts; the announced minute, up
   * to the burst, until a refusal taught one): calls go as the provider's bucket refills.
   */
  raise(dim: BudgetDimension, room: number, now: number): void {
    const lane = this.#lanes.get(dim)
    if (!lane || room <= this.#level(lane, now)) return
    lane.level = this.#burstMs === 0 ? room : Math.min(room, this.#cap(lane, now))
    lane.at = now
    lane.book?.reset()
  }

  /** A lane's announced rate per ms, as this worker last read it (0: none yet). */
  announcedPerMs(dim: BudgetDimension): number {
    return this.#lanes.get(dim)?.ratePerMs ?? 0
  }

  /** The least burst of a lane: one call (of tokens, SINGLE_CALL_TOKENS of a mean one). */
  singleCost(dim: BudgetDimension): number {
    const lane = this.#lanes.get(dim)
    if (!lane) return 0
    return lane.meanCost * lane.held
  }

  /** The share of a lane's announced rate that is ours: what others leave, less the cuts. */
  ourShare(dim: BudgetDimension, now: number): number {
    const lane = this.#lanes.get(dim)
    if (!lane) return 1
    return Math.min(1, Math.max(0.05, 1 - Math.max(0, lane.othersShare))) * this.#currentScale(now)
  }

  /** Estimates of what others spend on a lane since its announced limit last changed. */
  othersSamples(dim: BudgetDimension): number {
    return this.#lanes.get(dim)?.samples ?? 0
  }

  /** Ms until a call of this cost fits the pace of every dimension. */
  delayMs(now: number, cost: Readonly<Record<BudgetDimension, number>>): number {
    let wait = 0
    // keys() and get(): destructured, a Map's entries are an array each, on every admission.
    for (const dim of this.#lanes.keys()) {
      const lane = this.#lanes.get(dim) as Lane
      const c = cost[dim]
      if (!(c > 0)) continue
      const rate = this.#rate(lane, now)
      const level = this.#level(lane, now, rate)
      // A call larger than the burst goes once the burst is full, or it would never go; a call
      // before it may have left a debt (the level below 0) that is paid first, as the provider's
      // own bucket would.
      const need = Math.min(c, this.#capacity(lane, rate))
      if (level < need) wait = Math.max(wait, (need - level) / rate)
    }
    return Math.ceil(wait)
  }

  /**
   * Calls a ms the pace admits at the rate that is ours (the slowest dimension, at its mean cost
   * of a call); null before a call was admitted.
   */
  callsPerMs(now: number): number | null {
    let calls: number | null = null
    for (const lane of this.#lanes.values()) {
      if (!(lane.meanCost > 0)) continue
      const c = this.#rate(lane, now) / lane.meanCost
      calls = calls === null ? c : Math.min(calls, c)
    }
    return calls
  }

  /** Takes an admitted call's cost out of the pace. */
  take(now: number, cost: Readonly<Record<BudgetDimension, number>>): void {
    for (const dim of this.#lanes.keys()) {
      const lane = this.#lanes.get(dim) as Lane
      this.#advance(lane, now)
      if (this.#burstMs !== 0) lane.book?.reset()
      else lane.book?.took(now, lane.level, this.#cap(lane, now), cost[dim])
      lane.level -= cost[dim]
      lane.meanCost =
        lane.meanCost === 0 ? cost[dim] : lane.meanCost + 0.1 * (cost[dim] - lane.meanCost)
    }
    this.#callsSinceCut++
  }

  /**
   * Settles the call sent at `sentAt`: charged `amount` too much (negative: too little; 0 when
   * refused: it keeps its place). One call at a time the lane is replayed (lane-book.ts); else a
   * charge too high gives back up to a full burst (never beyond it), a charge too low is a debt.
   */
  refund(now: number, dim: BudgetDimension, amount: number, sentAt = Number.NaN): void {
    const lane = this.#lanes.get(dim)
    if (!lane) return
    const book = this.#burstMs === 0 ? lane.book : null
    if (!book) lane.book?.reset() // out of a spell one call at a time: what it kept is stale
    if (amount === 0 && !book) return
    this.#advance(lane, now)
    lane.level = book?.settle(now, sentAt, amount, this.#cap(lane, now)) ?? lane.level + amount
  }

  view(): PaceView {
    const perMinute: PaceView['perMinute'] = {}
    for (const [dim, lane] of this.#lanes) perMinute[dim] = this.#rate(lane, this.#seen) * 60_000
    return { burstMs: this.#burstMs, perMinute }
  }

  #rate(lane: Lane, now: number): number {
    const w = this.#workers
    const tenants = Math.max(0, lane.othersShare - (w - 1) / w)
    const ours = (lane.ratePerMs * Math.max(0.05, 1 - tenants)) / w
    return ours * (this.#burstMs === 0 ? SINGLE_CALL_MARGIN : 1) * this.#currentScale(now)
  }

  /** The share as of `now`: it regrows without refusals since the last cut. */
  #currentScale(now: number): number {
    if (this.#scale >= 1) return 1
    const seconds = Math.max(0, now - this.#scaleAt) / 1000
    // A slow rate earns its regrowth in calls: per second alone, a limit of 30 a minute was back
    // at the rate refused within five calls, and refused one in fifteen.
    const calls = this.#callsSinceCut / SCALE_REGROWTH_CALLS
    const progress = Math.min(seconds * Math.log(SCALE_GROWTH_PER_S), -calls * Math.log(SCALE_CUT))
    return Math.min(1, this.#cycle.regrown(this.#scale, progress))
  }

  /** How long after a cut a refused call still belongs to its episode (episode-window.ts). */
  #episodeMs(now: number): number {
    let calls: number | null = null
    for (const lane of this.#lanes.values()) {
      if (!(lane.meanCost > 0)) continue
      const c = this.#partitionRate(lane, now) / lane.meanCost
      calls = calls === null ? c : Math.min(calls, c)
    }
    return episodeWindowMs(this.#burstMs, calls, this.#workers)
  }

  /** The announced rate at the share refusals left: every worker's sends together. */
  #partitionRate(lane: Lane, now: number): number {
    return lane.ratePerMs * SINGLE_CALL_MARGIN * this.#currentScale(now)
  }

  /** A mean call in ms of the announced rate (the longest over the lanes; 0: none yet). */
  #oneCallMs(): number {
    let ms = 0
    for (const l of this.#lanes.values())
      if (l.ratePerMs > 0) ms = Math.max(ms, l.meanCost / l.ratePerMs)
    return ms
  }

  /** What tells a refusal a fall of the limit explains (fall-refusal.ts). */
  #fallContext(now: number): FallContext {
    const state = { scale: this.#scale, scaleAt: this.#scaleAt, callsSinceCut: this.#callsSinceCut }
    return {
      windowMs: this.#windowMs,
      oneCallMs: this.#oneCallMs(),
      share: this.#currentScale(now),
      state,
    }
  }

  /** Puts back the share a cut took, which a fall of the limit explained (fall-refusal.ts). */
  #restoreShare(share: ShareState, now: number): void {
    this.#settleLevels(now)
    this.#scale = share.scale
    this.#scaleAt = share.scaleAt
    this.#callsSinceCut = share.callsSinceCut
  }

  /** Brings every lane's level up to `now` before the rate changes under it. */
  #settleLevels(now: number): void {
    for (const lane of this.#lanes.values()) this.#advance(lane, now)
  }

  #capacity(lane: Lane, rate: number): number {
    return Math.max(lane.meanCost * lane.held, rate * this.#burstMs)
  }

  #cap(lane: Lane, now: number): number {
    return this.#capacity(lane, this.#rate(lane, now))
  }

  /** Brings a lane's level up to `now` (its book counts the refill). */
  #advance(lane: Lane, now: number): void {
    const rate = this.#rate(lane, now)
    if (this.#burstMs === 0) lane.book?.gained(rate * Math.max(0, now - lane.at))
    lane.level = this.#level(lane, now, rate)
    lane.at = now
  }

  #level(lane: Lane, now: number, rate = this.#rate(lane, now)): number {
    // Never above the burst, however it narrowed since.
    this.#seen = Math.max(this.#seen, now)
    const refilled = lane.level + rate * Math.max(0, now - lane.at)
    return Math.min(this.#capacity(lane, rate), refilled)
  }
}
