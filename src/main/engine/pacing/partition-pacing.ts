import type { PauseView } from '../../../shared/contract'
import { retryAfterMs, retryDelayMs } from '../providers/classify'
import type { LimitChange, Outcome } from '../core/types'
import { timerMs } from '../core/timers'
import type { DimensionSnapshot, Reservation } from './rate-budget'
import type {
  BudgetChange,
  BudgetDimension,
  BudgetReading,
  CallEstimate,
  CallUsage,
} from './budget-reading'
import { RateBudget } from './rate-budget'
import { costOf, readBudgetHeaders, readingShort } from './budget-reading'
import type { BudgetCost, BudgetSettle, BudgetTicket } from './shared-budget'
import { budgetAccount } from './budget-account'
import { INITIAL_BURST_MS, type PaceView } from './send-pace'
import { FloorPace } from './floor-pace'
import { FloorSizes } from './floor-sizes'
import { FloorCycle } from './floor-cycle'
import { SpacedRate } from './spaced-rate'
import { WindowSpread } from './window-spread'
import { GrowthSpread } from './growth-spread'
import { LaneGate } from './lane-gate'
import { MAX_PAUSE_MS, type PacingOptions } from './pacing-options'
import { sameSend, type Learn, type LearnEvent, type LearnedPaces } from './learned-pace'
import type { AnnouncedRate } from './announced-ceiling'
import { adoptOnRelease } from './release-adopt'

export type { PacingOptions } from './pacing-options'
export { MAX_PAUSE_MS, checkPacingOptions } from './pacing-options'

/** What the caller knows of a call's answer, for pacing: its headers and real usage. */
export interface CallAnswer {
  headers?: Record<string, string>
  usage?: CallUsage
}

/** A pause that began or grew longer: the contract's view of it. */
export type PauseChange = PauseView

/** A partition's pacing state, for tests and the console. */
export interface PacingSnapshot {
  pausedUntil: number | null
  budget: Partial<Record<BudgetDimension, DimensionSnapshot>>
  /** How admissions are spread once a budget is announced: the burst learned, the rate ours. */
  pace?: PaceView
  /** Why the partition last paused (the pause's reason line), or null if it never did. */
  pauseReason: string | null
}

/** What settling a call decided. */
export interface Settled {
  /** A pause that started or grew longer. */
  pause: PauseChange | null
  /**
   * The refusal is explained by an announced budget running out: the rate budget deals with it,
   * so the concurrency limit should hold instead of being cut.
   */
  absorbed: boolean
  /** Budgets whose announced limit this answer changed (cause `headers`). */
  budgets: LimitChange[]
  /** The answer's budget headers, read (budgets on, or a refusal). */
  reading: BudgetReading | undefined
}

/** One partition's pause and rate budget; the scheduler asks it before each admission. */
export class PartitionPacing {
  readonly #partition: string
  readonly #o: Required<PacingOptions>
  readonly #budget: RateBudget
  #pausedUntil = Number.NEGATIVE_INFINITY
  // Successes since the last refusal: a refusal after some is a lone one, not an empty budget.
  #oksSinceRefusal = 0
  // Why the partition last paused, for the console.
  #pauseReason: string | null = null
  #wake: NodeJS.Timeout | undefined
  #wakeAt = Number.POSITIVE_INFINITY
  readonly #floor: FloorPace
  readonly #sizes = new FloorSizes()
  readonly #cycle = new FloorCycle()
  // A window's calls spread over its round trip while the window enforced is not known; with no
  // budget announced, the calls above the level served (growth-spread.ts).
  readonly #spread = new WindowSpread()
  readonly #refill = new SpacedRate(this.#spread)
  readonly #growth = new GrowthSpread(this.#spread)
  readonly #lane = new LaneGate()
  // What this worker learned since its last release was written: replayed on the shared paces.
  #events: LearnEvent[] = []
  #adopted: LearnedPaces | null | undefined = null
  #workers = 1

  /** `worker`: this worker's name on the store; `ownStore`: no other worker shares the store. */
  constructor(partition: string, options: Required<PacingOptions>, worker = '', ownStore = true) {
    if (!ownStore) this.#refill.counted(undefined)
    this.#partition = partition
    this.#o = options
    this.#budget = new RateBudget({ windowMs: options.windowMs })
    this.#floor = new FloorPace(worker)
  }

  /** What this worker learned, for its release to write (learned-pace.ts); undefined: nothing. */
  takeLearning(now?: number): Learn | undefined {
    if (this.#events.length === 0) return adoptOnRelease(this.#workers, now, this)
    const events = this.#events
    this.#events = []
    return (learned) => {
      const at = events[events.length - 1]?.now ?? 0
      // Nobody else wrote the send pace: its cuts are in ours already (replayed on the record's
      // older share, they cut deeper, its per-call regrowth lost). Else from the record exactly.
      const ownSend = sameSend(learned?.send, this.#adopted?.send)
      if (ownSend) {
        this.#adopted = learned
        this.#floor.adopt(learned?.floor)
      } else this.adopt(learned, at, undefined, true)
      for (const e of events) {
        if (e.kind === 'send-cut') {
          if (!ownSend) this.#budget.sendPace.refusedUnexplained(e.sentAt, e.now, e.windowMs)
        } else {
          this.#floor.seen(e.now)
          if (e.kind === 'floor-cut') this.#floor.refused(e.now, e.sentAt)
          else if (e.kind === 'floor-start') this.#floor.start(e.now, e.perMs)
          else this.#floor.grow(e.now, e.sentAt)
        }
      }
      return this.learned(at)
    }
  }

  /** The paces this worker knows, as the shared record keeps them; null: nothing learned. */
  learned(now: number): LearnedPaces | null {
    const send = this.#budget.sendPace.learned()
    const floor = this.#floor.learned(now)
    if (send.cutAt === null && floor.cutAt === null) return null
    return { ...(send.cutAt !== null && { send }), ...(floor.cutAt !== null && { floor }) }
  }

  /** Continues from the paces the partition's workers learned (another worker's cut included). */
  adopt(learned: LearnedPaces | null | undefined, now: number, workers?: number, force = false) {
    if (workers !== undefined) this.#refill.counted(workers)
    // Every admission brings the record's paces: the same object until another worker wrote.
    if (!force && learned === this.#adopted && (workers ?? this.#workers) === this.#workers) return
    this.#adopted = learned
    this.#workers = workers ?? this.#workers
    this.#budget.sendPace.adopt(learned?.send, now, workers)
    this.#floor.adopt(learned?.floor)
  }

  /** Ms until a call of this estimate may be admitted; 0 when it may go now. */
  delayMs(now: number, estimate?: CallEstimate): number {
    const paused = Math.max(0, this.#pausedUntil - now)
    const asked = this.#o.budget && this.#budget.known ? this.#budget.delayMs(now, estimate) : 0
    const budget = this.#lane.waitMs(asked, this.#budget.sendPace, this.#o.windowMs)
    const spread = this.#spread.delayMs(now, this.#spreading(now))
    const growth = this.#growth.delayMs(now, this.#o.budget && this.#budget.known)
    const floor = this.#o.pause ? this.#floor.delayMs(now, this.#sizes.weight(estimate)) : 0
    return Math.max(paused, budget, spread, growth, floor, this.#refill.delayMs(now))
  }

  /** Of `waiting` calls, those only the growth's spread holds back (growth-spread.ts). */
  growthHeld(now: number, waiting: number): number {
    return this.#growth.spreading(now, this.#o.budget && this.#budget.known) ? waiting : 0
  }

  /** A budget is announced and no refusal showed the window it is enforced in yet. */
  #spreading(now: number): boolean {
    if (!this.#o.budget || !this.#budget.known) return false
    const pace = this.#budget.sendPace
    return pace.burstMs >= INITIAL_BURST_MS && !this.#spread.withinRate(pace.callsPerMs(now))
  }

  /**
   * True if a call of this estimate may be admitted now; otherwise `wake` is called once it may
   * (one timer per partition, moved earlier if a later ask needs less).
   */
  ready(now: number, estimate: CallEstimate | undefined, wake: () => void): boolean {
    const wait = this.delayMs(now, estimate)
    if (wait <= 0) return true
    const at = now + wait
    if (this.#wake !== undefined && this.#wakeAt <= at) return false
    clearTimeout(this.#wake)
    this.#wakeAt = at
    // Not unref'd: a caller may be waiting on nothing but this timer. A wait beyond one timer's
    // reach wakes early: the caller asks again and the rest is armed anew.
    this.#wake = setTimeout(() => {
      this.#wake = undefined
      this.#wakeAt = Number.POSITIVE_INFINITY
      wake()
    }, timerMs(wait))
    return false
  }

  /** Cancels a pending wake-up (the scheduler closed). */
  stop(): void {
    clearTimeout(this.#wake)
    this.#wake = undefined
    this.#wakeAt = Number.POSITIVE_INFINITY
  }

  /** A call's charge in the shared announced budget (every worker's); undefined: budgets off. */
  cost(estimate?: CallEstimate): BudgetCost | undefined {
    return this.#o.budget ? this.#lane.cost(this.#budget.costOf(estimate)) : undefined
  }

  /**
   * A finished call's account in the shared announced budget: its reading as the store applies
   * it, and the estimate's error where no reading covers it (budget-account.ts).
   */
  account(
    now: number,
    sentAt: number,
    charged: { ticket: BudgetTicket; cost: BudgetCost },
    refused: boolean,
    reading: BudgetReading | undefined,
    usage: CallUsage | undefined,
  ): BudgetSettle {
    const reserved = charged.cost['output-tokens']
    const actual = refused
      ? costOf({}, 0)
      : usage
        ? this.#budget.usageCost(usage, reserved)
        : undefined
    return budgetAccount(now, sentAt, charged, actual, reading, this.#o.windowMs)
  }

  /** Takes an admitted call's estimated cost out of the budget. */
  admit(now: number, estimate?: CallEstimate): Reservation {
    this.#floor.admitted(now)
    this.#refill.admitted(now)
    this.#sizes.admitted(estimate)
    this.#spread.admitted(now, this.#spreading(now))
    this.#growth.admitted(now)
    return this.#lane.admitted(this.#budget.reserve(now, estimate), this.#budget.sendPace, now)
  }

  /**
   * Settles a finished call: the budget from its headers and usage, and for a refusal a pause:
   * its retry-after, or else, when no budget can be read to pace by, its exhausted reset.
   * `overshoot`: the controller read the refusal as a call above a cap's edge (cap-edge.ts), or
   * another worker's call succeeded since this one's last refusal (partition-oks.ts): it is lone.
   */
  settle(
    now: number,
    reservation: Reservation,
    outcome: Outcome,
    answer?: CallAnswer,
    overshoot = false,
  ): Settled {
    const refused = outcome === 'throttled' || outcome === 'overloaded'
    this.#growth.settled(now, reservation.sentAt, outcome)
    this.#spread.settled(now, reservation.sentAt, outcome === 'ok' || outcome === 'near_limit')
    this.#refill.settled(now, reservation.sentAt, outcome)
    if (outcome === 'ok' || outcome === 'near_limit') {
      this.#floor.succeeded(now, reservation.sentAt)
      this.#oksSinceRefusal++
      // Every worker's successes grow the shared floor pace (and say who shares it).
      if (this.#floor.perMinute !== null) {
        this.#events.push({ kind: 'floor-ok', sentAt: reservation.sentAt, now })
      }
    }
    const lone = refused && (this.#oksSinceRefusal > 0 || overshoot)
    if (refused) this.#oksSinceRefusal = 0
    if (refused && this.#floor.perMinute !== null) this.#sizes.refused(reservation)
    const headers = answer?.headers
    const reading =
      headers && (refused || this.#o.budget) ? readBudgetHeaders(headers, now) : undefined
    const explained = !!reading && readingShort(reading, reservation.cost)
    const budgets = this.#o.budget
      ? this.#budget
          .settle(now, reservation, {
            refused,
            headers,
            usage: answer?.usage,
            reading: reading ?? null,
          })
          .map((c) => this.#budgetChange(now, c))
      : []
    // With a rate announced, a refusal is first the rate's business: explained by the announced
    // budget (the model waits for its refill), or not, when the provider counts in a shorter
    // window (the pace narrows, then cuts the share that is ours): never a sign of too many in
    // flight.
    const rated = this.#o.budget && refused && this.#budget.known
    const cutAt = this.#budget.sendPace.cutAt
    const narrowed = rated && !explained
    const windowMs = narrowed
      ? this.#budget.refusedUnexplained(reservation.sentAt, now, reading)
      : undefined
    if (this.#budget.sendPace.cutAt !== cutAt) {
      const sentAt = reservation.sentAt
      this.#events.push({
        kind: 'send-cut',
        sentAt,
        now,
        ...(windowMs !== undefined && { windowMs }),
      })
    }
    const refill = refused && this.#o.pause && !(this.#o.budget && this.#budget.known)
    const absorbed =
      (rated && explained) ||
      narrowed ||
      (refill && this.#refill.refused(now, reservation.sentAt, headers))
    if (!refused || !this.#o.pause || !headers) return { pause: null, absorbed, budgets, reading }
    // Evidence decides what a wait applies to: an empty budget or refusals in a row pause the
    // partition; a lone refusal among successes retries its own call when the controller admits it.
    if (lone && !explained && !this.#o.pauseOnLoneRefusal) {
      return { pause: null, absorbed, budgets, reading }
    }
    // With a budget the model waits exactly for the refill; a reset is when the bucket is full
    // again (both vendors), far later than the next call fits.
    const paced = this.#o.budget && reading !== undefined
    const asked = retryAfterMs(headers, now) ?? (paced ? undefined : retryDelayMs(headers, now))
    if (asked === undefined || asked <= 0) return { pause: null, absorbed, budgets, reading }
    const wait = Math.min(asked, MAX_PAUSE_MS)
    const jitter = this.#o.random() * Math.min(this.#o.resumeJitterMs, wait * 0.2)
    const why = explained
      ? 'the announced budget is empty'
      : lone
        ? 'a refusal among successes (pausing on every one)'
        : 'refused again with no success between'
    const held =
      asked > wait ? `; held to ${MAX_PAUSE_MS / 3_600_000} h, then one call asks again` : ''
    const said = `${outcome === 'overloaded' ? 'overloaded' : '429'} said wait ${Math.round(asked)} ms`
    const pause = this.#pauseUntil(now, Math.ceil(now + wait + jitter), ` (${said}: ${why}${held})`)
    return { pause, absorbed, budgets, reading }
  }

  /** What the announced pace admits, every worker's sends together (the limit is shared). */
  announcedRate(now: number): AnnouncedRate | null {
    const refill = this.#refill.callsPerMs
    if (!this.#o.budget || !this.#budget.known)
      return refill === null ? null : { callsPerMs: refill, spread: true }
    const pace = this.#budget.sendPace
    const calls = pace.callsPerMs(now)
    return calls === null ? null : { callsPerMs: calls * pace.workers, spread: pace.burstMs === 0 }
  }

  /** The floor's learned pace holds: refusals are its to answer, whatever the limit. */
  get floorPacing(): boolean {
    return this.#floor.perMinute !== null
  }

  /**
   * A refusal while the limit cannot be cut any lower and no budget is announced: the calls go at
   * a learned rate below one per round trip (floor-pace.ts), cut by this refusal. False when
   * pauses are off or a budget paces the partition.
   */
  floorPaced(now: number, sentAt: number): boolean {
    if (!this.#o.pause || (this.#o.budget && this.#budget.known)) return false
    const cutAt = this.#floor.cutAt
    this.#floor.refused(now, sentAt)
    if (this.#floor.cutAt !== cutAt) this.#events.push({ kind: 'floor-cut', sentAt, now })
    return true
  }

  #pauseUntil(now: number, until: number, why: string): PauseChange | null {
    if (until <= this.#pausedUntil) return null
    this.#pausedUntil = until
    const reason = `paused until ${new Date(until).toISOString()}${why}`
    this.#pauseReason = reason
    return { partition: this.#partition, ts: now, until, reason }
  }

  #budgetChange(now: number, c: BudgetChange): LimitChange {
    const per = this.#o.windowMs === 60_000 ? '/min' : ` per ${this.#o.windowMs / 1000} s`
    return {
      partition: this.#partition,
      ts: now,
      from: c.from ?? 0,
      to: c.to,
      reason: `headers: ${c.dimension} ${c.to}${per}`,
      cause: 'headers',
    }
  }

  /** The limit as this answer found it: a cycle to the floor starts its pace (floor-cycle.ts). */
  observeLevel(now: number, level: number, min: number, outcome: Outcome): void {
    const start = this.#cycle.observe(now, level, min, outcome === 'ok')
    if (start === null || this.#floor.perMinute !== null || !this.#o.pause) return
    if (this.#o.budget && this.#budget.known) return
    this.#floor.start(now, start)
    this.#events.push({ kind: 'floor-start', sentAt: now, now, perMs: start })
  }

  #floorView(): { pace?: PaceView } {
    const perMinute = this.#floor.perMinute
    return perMinute === null
      ? {}
      : { pace: { burstMs: 0, perMinute: { requests: perMinute }, learned: true } }
  }

  snapshot(now: number): PacingSnapshot {
    return {
      pausedUntil: this.#pausedUntil > now ? this.#pausedUntil : null,
      budget: this.#budget.snapshot(now),
      ...(this.#budget.known ? { pace: this.#budget.pace } : this.#floorView()),
      pauseReason: this.#pauseReason,
    }
  }
}
