import { CountedOutput, readCounted } from './counted-output'
import { EnforcedWindow } from './enforced-window'
import { EstimateCosts } from './estimate-costs'
import { INITIAL_BURST_MS, SendPace, type PaceView } from './send-pace'
import { UnreadFixes } from './unread-fixes'
import type {
  BudgetChange,
  BudgetDimension,
  BudgetReading,
  CallEstimate,
  CallUsage,
  DimensionReading,
} from './budget-reading'
import { BUDGET_DIMENSIONS, costOf, readBudgetHeaders, refillRate } from './budget-reading'

const NOTHING: Readonly<CallUsage> = Object.freeze({ inputTokens: 0, outputTokens: 0 })
/** What a refused call cost: nothing. */
const REFUSED: Readonly<Record<BudgetDimension, number>> = Object.freeze(costOf(NOTHING, 0))

/** A call admitted against the budget; settle it once with its answer. */
export interface Reservation {
  readonly seq: number
  readonly sentAt: number
  /** The caller's input estimate, before calibration. */
  readonly estimatedInput: number
  /** The caller's output estimate (max_tokens, or a typical answer). */
  readonly estimatedOutput: number
  /**
   * What the call was charged, the model and the pace alike: what a provider reserves when it
   * admits a call, the output at its estimate (`max_tokens`); the answer gives back what was not
   * used (Anthropic, Azure); where the readings show that the provider keeps it (OpenAI), the
   * answer gives back nothing (counted-output.ts).
   */
  readonly cost: Readonly<Record<BudgetDimension, number>>
  /** Cumulative cost admitted up to and including this call, per dimension. */
  readonly spentAfter: Readonly<Record<BudgetDimension, number>>
  /** What answers had given back of their reserved output when this call was admitted. */
  readonly refunded: number
}

/** What a call's answer said, for the budget. */
interface SettledAnswer {
  refused: boolean
  headers?: Record<string, string>
  usage?: CallUsage
  /** The headers' reading, when the caller read them already (null: none). */
  reading?: BudgetReading | null
}

interface DimensionState {
  limit: number
  /** Refill per ms: the bucket is full again one window after it was empty. */
  ratePerMs: number
  /** What the provider would accept now, as of `at`. */
  level: number
  at: number
}

/** One dimension's state, for tests and the console. */
export interface DimensionSnapshot {
  limit: number
  level: number
  perMinute: number
}

export interface RateBudgetOptions {
  /** The window an announced limit refers to. @default 60_000 (both vendors count per minute) */
  windowMs?: number
}

/** Token counts are estimates; their error is learned from real usage (EWMA weight). */
const CALIBRATION_WEIGHT = 0.1
/**
 * Admission keeps this many mean deviations of the estimates in reserve, over every call the
 * provider has counted but no answer has reported yet (their estimates are what the model holds).
 */
const RESERVE_DEVIATIONS = 3

/**
 * One partition's header-announced rate budget: a local model of the provider's buckets (both
 * vendors refill continuously up to the limit), resynchronised from every answer's headers and
 * settled with real usage, so admissions follow the announced rate instead of finding it by
 * refusals. Pure: every method takes `now`.
 *
 * An answer's `remaining` is the provider's count when it received that call; calls admitted after
 * it are not in that count and are taken off again. Answers that arrive out of order are ignored
 * when an answer to a later call has already been read.
 */
export class RateBudget {
  readonly #windowMs: number
  readonly #dims = new Map<BudgetDimension, DimensionState>()
  // Cumulative cost admitted (a call at its max_tokens), and what settled calls cost beyond it
  // (the unused output back, a refusal: nothing), up to the last reading: what we spent as the
  // provider counted it, calls still out at max_tokens. Not corrected (every call, refused too, at
  // the charge), others' spend read 0.29 of the rate where a tenant took 0.45 (#100062).
  readonly #spent: Record<BudgetDimension, number> = costOf(NOTHING, 0)
  readonly #settledFix: Record<BudgetDimension, number> = costOf(NOTHING, 0)
  // The fixes a reading counts, each with the reading that covers its call (unread-fixes.ts).
  readonly #unread = new UnreadFixes(this.#settledFix)
  #seq = 0
  #syncedSeq = -1
  // Cumulative cost admitted up to the call the model was last resynchronised from.
  #syncedSpent: Readonly<Record<BudgetDimension, number>> = costOf(NOTHING, 0)
  // Learned ratio real / estimated tokens, and its mean absolute deviation.
  #ratio = 1
  #deviation = 0.1
  // Admissions spread at the rate that is ours, in bursts the enforcement window allows.
  readonly #pace = new SendPace()
  // The window enforced, as the announced bucket shows it.
  readonly #window = new EnforcedWindow()
  readonly #rooms: number[] = [] // the room each dimension's headers show (#lendRoom)
  // What each token budget counts of a call's output, as the readings show it: the input-token
  // budget (also the output?) and the token budget (keeps what was reserved?) (counted-output.ts).
  readonly #learners = { 'input-tokens': new CountedOutput(), tokens: new CountedOutput() }
  #refunded = 0 // what answers gave back of the output reserved, in all (counted-output.ts)
  // The costs of the latest estimate, while its calibration holds (estimate-costs.ts).
  readonly #costs = new EstimateCosts()

  constructor(options: RateBudgetOptions = {}) {
    const { windowMs = 60_000 } = options
    if (!Number.isFinite(windowMs) || windowMs <= 0) {
      throw new TypeError(`Expected \`windowMs\` to be a number > 0, got \`${String(windowMs)}\``)
    }
    this.#windowMs = windowMs
  }

  /** True once an answer announced a budget. */
  get known(): boolean {
    return this.#dims.size > 0
  }

  /** Ms until a call of this estimate fits every announced budget; 0 when it may go now. */
  delayMs(now: number, estimate: CallEstimate = {}): number {
    const cost = this.#costOf(estimate)
    let wait = 0
    // keys() and get(): destructured, a Map's entries are an array each, on every admission.
    for (const dim of this.#dims.keys()) {
      const state = this.#dims.get(dim) as DimensionState
      const unreported = this.#spent[dim] - this.#syncedSpent[dim]
      const reserve =
        dim === 'requests' ? 0 : (unreported + cost[dim]) * RESERVE_DEVIATIONS * this.#deviation
      // A call bigger than the whole budget goes when the bucket is full, or it would never go.
      const need = Math.min(state.limit, cost[dim] + reserve)
      const level = this.#level(state, now)
      if (level < need) wait = Math.max(wait, (need - level) / state.ratePerMs)
    }
    this.#lendRoom(now, cost)
    return Math.max(Math.ceil(wait), this.#pace.delayMs(now, cost))
  }

  /**
   * Where the headers show room for this call in the window enforced (beyond what the model of
   * the bucket was seen to miss by), the pace holds at least that room (enforced-window.ts): the
   * window a refusal taught, one call at a time, or the announced minute before any did, up to
   * the pace's burst (a short draw's full bucket, a tenant gone: the pace's own refill at the
   * share it learned left them unspent). Not with several workers: this one's model does not
   * count what the others sent. Per admission: the rooms go in an array kept (`#rooms`).
   */
  #lendRoom(now: number, cost: Readonly<Record<BudgetDimension, number>>): void {
    const pace = this.#pace
    const announced = pace.burstMs === INITIAL_BURST_MS && pace.windowMs >= INITIAL_BURST_MS
    const learned = pace.burstMs === 0 && pace.windowMs < INITIAL_BURST_MS
    if (!(announced || learned) || pace.workers > 1) return
    const rooms = this.#rooms
    let n = 0
    for (const dim of this.#dims.keys()) {
      const room = this.#window.room(dim, now, {
        windowMs: pace.windowMs,
        announcedMs: this.#windowMs,
        ours: pace.ourShare(dim, now),
        single: pace.singleCost(dim),
        samples: pace.othersSamples(dim),
        sent: this.#spent[dim],
      })
      if (room === null || room < cost[dim]) return
      rooms[n++] = room
    }
    n = 0
    for (const dim of this.#dims.keys()) pace.raise(dim, rooms[n++] as number, now)
  }

  /** The pace admissions keep: its burst and the rate that is ours, per dimension. */
  get pace(): PaceView {
    return this.#pace.view()
  }

  /**
   * A refusal that the announced budget does not explain (it showed room for the call): the
   * provider enforces a shorter window than the burst: the pace narrows (send-pace.ts), and
   * keeps the window as the refusal's reading shows it (what the announced bucket was short of,
   * in ms of its rate: the least over the dimensions read). Returns the window kept (undefined:
   * no reading).
   */
  refusedUnexplained(sentAt: number, now: number, reading?: BudgetReading): number | undefined {
    let windowMs: number | undefined
    for (const [dim, r] of Object.entries(reading ?? {}) as [BudgetDimension, DimensionReading][]) {
      const ms = (this.#window.shortAt(dim, r) * this.#windowMs) / r.limit
      windowMs = Math.min(windowMs ?? ms, ms)
    }
    this.#pace.refusedUnexplained(sentAt, now, windowMs)
    return windowMs
  }

  /** The pace itself: what refusals taught it is shared (learned-pace.ts). */
  get sendPace(): SendPace {
    return this.#pace
  }

  /** Takes the call's estimated cost out of every budget. */
  reserve(now: number, estimate: CallEstimate = {}): Reservation {
    const cost = this.#costOf(estimate)
    for (const dim of this.#dims.keys()) {
      const state = this.#dims.get(dim) as DimensionState
      state.level = this.#level(state, now) - cost[dim]
      state.at = now
    }
    this.#pace.take(now, cost)
    for (const dim of BUDGET_DIMENSIONS) this.#spent[dim] += cost[dim]
    return {
      seq: this.#seq++,
      sentAt: now,
      estimatedInput: Math.max(0, estimate.inputTokens ?? 0),
      estimatedOutput: Math.max(0, estimate.outputTokens ?? 0),
      cost,
      spentAfter: { ...this.#spent },
      refunded: this.#refunded,
    }
  }

  /**
   * Settles a call with what its answer said: resynchronises from its headers, gives a refused
   * call's cost back, corrects an estimate with real usage, and learns the estimate's error.
   * Returns the announced limits the answer changed.
   */
  settle(now: number, reservation: Reservation, answer: SettledAnswer): BudgetChange[] {
    const changes = this.#settle(now, reservation, answer)
    // Last: a reading from this call counts only the fixes of the calls up to it.
    this.#unread.answered(reservation.seq)
    return changes
  }

  #settle(now: number, reservation: Reservation, answer: SettledAnswer): BudgetChange[] {
    // A refused call cost nothing; an answer without usage keeps its estimate.
    const actual = answer.refused
      ? REFUSED
      : answer.usage
        ? this.usageCost(answer.usage, reservation.cost['output-tokens'])
        : undefined
    if (answer.usage && !answer.refused) {
      this.#learn(reservation, answer.usage)
      this.#refunded += Math.max(0, reservation.estimatedOutput - answer.usage.outputTokens)
    }
    if (actual) {
      // What the call cost the provider beyond its charge: counted with the next reading. A
      // refused call keeps its place in the pace: an attempt spent that moment of the window.
      const fix = costOf(NOTHING, 0)
      for (const dim of BUDGET_DIMENSIONS) {
        const refund = answer.refused ? 0 : reservation.cost[dim] - actual[dim]
        this.#pace.refund(now, dim, refund, reservation.sentAt)
        fix[dim] = actual[dim] - reservation.cost[dim]
      }
      this.#unread.add(reservation.seq, fix)
    } else for (const dim of BUDGET_DIMENSIONS) this.#pace.refund(now, dim, 0, reservation.sentAt)
    const reading =
      answer.reading !== undefined
        ? answer.reading
        : answer.headers
          ? readBudgetHeaders(answer.headers, now)
          : undefined
    if (reading && reservation.seq > this.#syncedSeq) {
      this.#readCounted(reservation, reading, answer.refused, answer.usage)
      return this.#sync(now, reservation, reading)
    }
    // An answer already read from a later call counted this one as the provider saw it.
    if (!actual || reservation.seq <= this.#syncedSeq) return []
    for (const [dim, state] of this.#dims) {
      state.level = this.#level(state, now) - (actual[dim] - reservation.cost[dim])
      state.at = now
    }
    return []
  }

  /** Fixes kept for a reading to come (calls answered while an older one was out), for tests. */
  get unreadFixes(): number {
    return this.#unread.size
  }

  /** Every announced budget as the model sees it now. */
  snapshot(now: number): Partial<Record<BudgetDimension, DimensionSnapshot>> {
    const out: Partial<Record<BudgetDimension, DimensionSnapshot>> = {}
    for (const [dim, state] of this.#dims) {
      out[dim] = {
        limit: state.limit,
        level: this.#level(state, now),
        perMinute: state.ratePerMs * 60_000,
      }
    }
    return out
  }

  #sync(now: number, reservation: Reservation, reading: BudgetReading): BudgetChange[] {
    this.#syncedSeq = reservation.seq
    this.#syncedSpent = reservation.spentAfter
    // The calls up to this one are in this reading, as they turned out to cost.
    this.#unread.read(reservation.seq)
    const changes: BudgetChange[] = []
    for (const dim of BUDGET_DIMENSIONS) {
      const r = reading[dim]
      if (!r) continue
      const old = this.#dims.get(dim)
      const before = old?.limit ?? null
      if (before !== r.limit) changes.push({ dimension: dim, from: before, to: r.limit })
      const ratePerMs = refillRate(r, now, this.#windowMs)
      const refilled = Math.min(r.limit, r.remaining + ratePerMs * (now - reservation.sentAt))
      const admittedSince = this.#spent[dim] - reservation.spentAfter[dim]
      const level = refilled - admittedSince
      const predicted = old && old.limit === r.limit ? this.#level(old, now) : null
      if (old) {
        // In place: this runs on every answer.
        old.limit = r.limit
        old.ratePerMs = ratePerMs
        old.level = level
        old.at = now
      } else this.#dims.set(dim, { limit: r.limit, ratePerMs, level, at: now })
      // What we had spent up to this call as the provider counted it.
      const spent = reservation.spentAfter[dim] + this.#settledFix[dim]
      this.#window.read(dim, r, {
        sentAt: reservation.sentAt,
        sent: reservation.spentAfter[dim],
        windowMs: this.#pace.windowMs,
        announcedMs: this.#windowMs,
        predicted,
        level,
      })
      // The pace spreads at the announced window's rate; a slower refill derived from a far reset
      // (a daily quota) is the level's to count, not a spacing.
      const sent = { at: reservation.sentAt, cost: reservation.cost[dim] }
      this.#pace.announce(dim, r.limit / this.#windowMs, now, sent)
      this.#pace.observe(dim, reservation.sentAt, r.remaining, r.limit, spent)
    }
    return changes
  }

  /** What the token budgets count, from this reading (counted-output.ts). */
  #readCounted(r: Reservation, reading: BudgetReading, refused: boolean, usage?: CallUsage): void {
    const output = r.cost['output-tokens']
    const used = usage ?? { inputTokens: r.cost.tokens - output, outputTokens: output }
    const { seq, sentAt, refunded } = r
    const call = refused
      ? { seq, sentAt, refunded, input: 0, output: 0, reserved: 0 }
      : {
          seq,
          sentAt,
          refunded,
          input: used.inputTokens,
          output: used.outputTokens,
          reserved: output,
        }
    readCounted(this.#learners, call, reading, this.#windowMs)
  }

  #learn(reservation: Reservation, usage: CallUsage): void {
    const estimated = reservation.estimatedInput
    if (!(estimated > 0)) return
    const ratio = usage.inputTokens / estimated
    this.#deviation += CALIBRATION_WEIGHT * (Math.abs(ratio - this.#ratio) - this.#deviation)
    this.#ratio += CALIBRATION_WEIGHT * (ratio - this.#ratio)
  }

  /**
   * What a call cost per dimension as its answer reported it, as the provider counts it:
   * `reserved`, the output it was charged at admission, where the provider keeps that.
   */
  usageCost(usage: CallUsage, reserved: number): Record<BudgetDimension, number> {
    const cost = this.#learners['input-tokens'].settledCost(usage, reserved)
    if (this.#learners.tokens.kept) cost.tokens += Math.max(0, reserved - usage.outputTokens)
    return cost
  }

  /** What a call of this estimate is charged per dimension (the input estimate calibrated). */
  costOf(estimate: CallEstimate = {}): Record<BudgetDimension, number> {
    return this.#costOf(estimate)
  }

  #costOf(estimate: CallEstimate): Readonly<Record<BudgetDimension, number>> {
    return this.#costs.charged(estimate, this.#ratio, this.#learners['input-tokens'])
  }

  #level(state: DimensionState, now: number): number {
    return Math.min(state.limit, state.level + state.ratePerMs * Math.max(0, now - state.at))
  }
}
