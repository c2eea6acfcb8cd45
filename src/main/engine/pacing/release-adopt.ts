// A worker adopts the paces the partition's workers learned when its call is released, not only
// at its next admission. The release reads the shared record in its own write anyway, but only a
// worker that learned something replayed it there; the others took another's narrowing (the
// window enforced is shorter: one call at a time) with the record of their next admission, so the
// call that admission let through went by the pace of a whole window. Traced on the live leg's
// #100004 (three processes in virtual time): one worker's refusal narrowed the pace and each other
// worker's next call still went by its own burst, into the full window. A worker alone reads no
// one else's record: nothing changes for it.
import type { Learn, LearnedPaces } from './learned-pace'

/** What adopts the record's paces: the worker's partition pacing. */
interface Adopter {
  adopt(learned: LearnedPaces | null | undefined, now: number): void
}

/**
 * What a release that learned nothing does with the shared record: `pacing` adopts its paces, and
 * nothing is written back (the record's own paces). undefined for a worker alone.
 */
export function adoptOnRelease(
  workers: number,
  now: number | undefined,
  pacing: Adopter,
): Learn | undefined {
  if (workers <= 1 || now === undefined) return undefined
  return (learned) => {
    pacing.adopt(learned, now)
    return learned ?? null
  }
}
