// What a partition's workers learn from refusals about how fast to send, shared through the
// store's record so that N processes on one database (or machines on one Redis) pace like one:
// the announced rate's pace (send-pace.ts: the burst narrowed to one call at a time, the share of
// the rate that is ours) and the floor's learned pace (floor-pace.ts). Kept per process, three
// processes on a quantized limit each had to be refused to learn it, and were refused more than
// one process (the live leg of issue 19). A refusal seen by one worker cuts the shared pace once
// per episode for all (the cut's time is shared, so a refusal of a call sent before it is the same
// episode wherever it lands); growth is shared too (the send pace regrows with time since the
// shared cut, the floor's with every worker's successes). Plain JSON: written rarely (cuts at once,
// the floor's growth with the lessee's renewals), never on a call that learned nothing.

/** The announced rate's pace, as every worker continues from it. */
export interface SendLearned {
  /** The burst admissions may take, ms of the rate (0: one call at a time). */
  burstMs: number
  /** The share of the announced rate that is ours, as of `scaleAt` (it regrows with time). */
  scale: number
  /** When the share was last cut (epoch ms; null: never). */
  scaleAt: number | null
  /** The last narrowing or cut (epoch ms; null: never): one per episode across workers. */
  cutAt: number | null
  /**
   * The window the provider enforces as a refusal's `remaining` showed it, ms of the announced
   * rate; absent: the announced window.
   */
  windowMs?: number
}

/** The floor's learned pace, the partition's whole rate (from below one call in flight to 64). */
export interface FloorLearned {
  /** Calls per ms for the whole partition; null: the pace does not hold. */
  ratePerMs: number | null
  /**
   * The rate the last cut answered, calls per ms (null: none since the pace began). Well past it
   * the pace doubles (floor-pace.ts). Absent in records written before it: a record with a cut
   * then counts its rate as the one refused.
   */
  refusedPerMs?: number | null
  /** The last cut (epoch ms; null: never). */
  cutAt: number | null
  /** Successes since the cut, every worker's. */
  sinceCut: number
  /** The last success (epoch ms; null: none since the pace began). */
  lastOkAt: number | null
  /**
   * The workers that sent at the floor and when they last did: each spaces its own sends at its
   * share of the rate, the rate split between the ones recently active.
   */
  workers: Record<string, number>
}

/** A partition's learned paces; absent parts were never learned. */
export interface LearnedPaces {
  send?: SendLearned
  floor?: FloorLearned
}

/** One thing a worker learned from a finished call, replayed on the shared paces it is written to. */
export type LearnEvent =
  | { kind: 'send-cut'; sentAt: number; now: number; windowMs?: number }
  | { kind: 'floor-cut'; sentAt: number; now: number }
  | { kind: 'floor-ok'; sentAt: number; now: number }
  | { kind: 'floor-start'; sentAt: number; now: number; perMs: number }

/**
 * Computes the learned paces to write from the record's (read inside the store's atomic step): the
 * record's paces with this worker's events replayed on them. Depends on its argument only, as a
 * store's `decide` must.
 */
export type Learn = (learned: LearnedPaces | null | undefined) => LearnedPaces | null

/** The two are the same paces: nothing to write. */
export function sameLearned(
  a: LearnedPaces | null | undefined,
  b: LearnedPaces | null | undefined,
): boolean {
  if ((a ?? null) === null || (b ?? null) === null) return (a ?? null) === (b ?? null)
  return JSON.stringify(a) === JSON.stringify(b)
}

/**
 * A change a lessee alone on the partition may keep until its next renewal: growth. A cut, a
 * narrowing or a floor pace that began is written at once (the brief moment another worker may
 * join, it should start from it).
 */
export function isCut(
  before: LearnedPaces | null | undefined,
  after: LearnedPaces | null,
): boolean {
  const s0 = before?.send
  const s1 = after?.send
  if (s1 && (s1.cutAt !== (s0?.cutAt ?? null) || s1.burstMs !== s0?.burstMs)) return true
  const f0 = before?.floor
  const f1 = after?.floor
  if (!f1) return false
  return f1.cutAt !== (f0?.cutAt ?? null) || (f1.ratePerMs === null) !== (f0?.ratePerMs == null)
}

/** Whether two records of the send pace are the same pace (both absent included). */
export function sameSend(a: SendLearned | undefined, b: SendLearned | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  return (
    a.burstMs === b.burstMs &&
    a.scale === b.scale &&
    a.scaleAt === b.scaleAt &&
    a.cutAt === b.cutAt &&
    a.windowMs === b.windowMs
  )
}
