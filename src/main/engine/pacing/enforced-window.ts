// The window a provider enforces, as the announced bucket shows it. An announced "per minute"
// enforced over a second or a single call (OpenAI's quantized limits) is a second bucket at the
// same rate with a smaller burst: every call is taken from both, both refill alike, so the
// enforced window is short of exactly what the announced bucket is short of (`limit - remaining`),
// once both were full. A refusal the announced budget does not explain therefore says how much
// the enforced window holds: about what the announced bucket was short of then (send-pace.ts
// keeps it, in ms of the announced rate). And from then on every answer's `remaining` says how
// much room is left in that window: the pace holds no less than that room, less what the readings
// were seen to miss by (`room`), so calls go as fast as the window refills instead of at a rate
// estimated under it (0.98 of it, less what others were estimated to spend), which left short
// windows full: a window full at the end of a phase is refill lost. Before any such refusal the
// window is the announced minute, and the room is lent in it alike (up to the pace's burst).
//
// A limit that moves moves the enforced window's burst with it but not what it holds: the
// announced bucket's shortfall then differs from the enforced window's by an offset, kept per
// dimension until the bucket is full again.
import type { BudgetDimension, DimensionReading } from './budget-reading'

/** Room is only lent where the window learned holds at least this many calls... */
const MIN_WINDOW_CALLS = 4
/** ... where the estimate of what others spend has this many readings behind it... */
const MIN_OTHERS_SAMPLES = 5
/**
 * ... and less this many root-mean-square errors of the model of the bucket against the next
 * reading (a late `remaining`, a tenant, output the headers do not count). 3 to 8 gave the same
 * figures on the family; 5 refused least.
 */
const ERROR_MARGIN = 5
/** Weight of a new squared error (EWMA). */
const ERROR_WEIGHT = 0.1

/** The last reading of a dimension, as of the call it came with. */
interface Reading {
  limit: number
  remaining: number
  /** When the provider counted the call (epoch ms). */
  sentAt: number
  /** What we had sent up to that call, at the paced cost (cumulative, rate-budget.ts). */
  sent: number
}

interface Dimension {
  last: Reading | null
  /** The announced bucket's shortfall less the enforced window's (0 once both were full). */
  offset: number
  /** Mean squared error of the model's level against the next reading; null: none yet. */
  error: number | null
}

/** What comes with a reading, for one dimension. */
export interface ReadInputs {
  /** When the provider counted the call the reading came with (epoch ms). */
  sentAt: number
  /** What we had sent up to that call, at the paced cost (cumulative). */
  sent: number
  /** The window learned, ms of the announced rate. */
  windowMs: number
  /** The announced window (both vendors: a minute). */
  announcedMs: number
  /** The model's level before the reading (null: none, or another limit), for its error... */
  predicted: number | null
  /** ... and after it. */
  level: number
}

/** What the room in the window is worked out from at a moment, for one dimension. */
export interface RoomInputs {
  /** The window learned, ms of the announced rate (the announced window until a refusal). */
  windowMs: number
  /** The announced window (both vendors: a minute). */
  announcedMs: number
  /** The share of the announced rate that is ours (what others leave, less the cuts). */
  ours: number
  /** One call's least burst in this dimension (send-pace.ts). */
  single: number
  /** Estimates of what others spend behind `ours`. */
  samples: number
  /** What we have sent at the paced cost, up to now (cumulative). */
  sent: number
}

export class EnforcedWindow {
  readonly #dims = new Map<BudgetDimension, Dimension>()

  /** An answer's reading of a dimension, as of the call it came with. */
  read(dim: BudgetDimension, r: DimensionReading, x: ReadInputs): void {
    const { sentAt, sent, windowMs, announcedMs, predicted, level } = x
    let d = this.#dims.get(dim)
    if (!d) {
      d = { last: null, offset: 0, error: null }
      this.#dims.set(dim, d)
    }
    const window = Math.min(windowMs, announcedMs)
    let offset = d.offset
    if (d.last && d.last.limit !== r.limit) {
      // What the enforced window held stays; its burst moves with the limit.
      const was = d.last
      const wasShort = Math.min(
        (window * was.limit) / announcedMs,
        Math.max(0, was.limit - was.remaining - offset),
      )
      const short = wasShort + (window * (r.limit - was.limit)) / announcedMs
      offset = r.limit - r.remaining - short
    } else if (predicted !== null) {
      const e = (predicted - level) ** 2
      d.error = d.error === null ? e : d.error + ERROR_WEIGHT * (e - d.error)
    }
    // The enforced window is short of nothing less than nothing, and of no more than it holds.
    const short = r.limit - r.remaining
    d.offset = Math.max(short - (window * r.limit) / announcedMs, Math.min(offset, short))
    d.last = { limit: r.limit, remaining: r.remaining, sentAt, sent }
  }

  /** What the enforced window was short of when a call was refused with this reading. */
  shortAt(dim: BudgetDimension, r: DimensionReading): number {
    return Math.max(0, r.limit - r.remaining - (this.#dims.get(dim)?.offset ?? 0))
  }

  /**
   * The room the headers show in the enforced window now, less what the model was seen to miss
   * by; null where it cannot be trusted (the window too short to lend room in, a limit just
   * changed, too few estimates of what others spend, no error measured yet).
   */
  room(dim: BudgetDimension, now: number, x: RoomInputs): number | null {
    const d = this.#dims.get(dim)
    const last = d?.last
    if (!d || !last || d.error === null || x.samples < MIN_OTHERS_SAMPLES) return null
    const holds = (Math.min(x.windowMs, x.announcedMs) * last.limit) / x.announcedMs
    if (holds < MIN_WINDOW_CALLS * x.single) return null
    // The bucket as of the last reading, refilled at the rate that is ours, less what we sent.
    const refill = ((last.limit * x.ours) / x.announcedMs) * Math.max(0, now - last.sentAt)
    const level = Math.min(last.limit, last.remaining + refill) - (x.sent - last.sent)
    const short = Math.max(0, last.limit - level - d.offset)
    return holds - short - ERROR_MARGIN * Math.sqrt(d.error)
  }
}
