// The announced share's cycle (send-pace.ts): one call at a time, each refusal cuts the share to
// 80 % and it regrows with time and calls until it is refused again, most often near the same
// share (a tenant the headers hide that holds still, a bucket of about a call). The share then
// runs a sawtooth between the refused level and 80 % of it, its mean some 10 % under what holds.
// Seen as a control loop, the cut sets the cycle's amplitude (what it leaves unused) and the
// regrowth its period (how often it is refused): when a refusal comes within a tenth of the share
// the last one came at, the cut is half as deep in log terms (to 0.89) and the regrowth up to
// that share runs at a quarter of its pace, so the share runs half as far under the level and
// comes back to it half as often. Past the share last refused the regrowth is back to its full
// pace (CUBIC's convex side: the level may have risen). A rise of the announced rate by more than
// a tenth forgets it all: the refusals said nothing of the new rate; a fall keeps it (a tenant's
// fraction of the limit outlives the limit: share-fall.ts). Pure: every clock is an argument.
import { ShareFall, type FallenLane } from './share-fall'

/** A lane of requests whose mean call is unknown. */
const REQUESTS: FallenLane = { meanCost: 0, tokens: false }

/** A refusal within this ratio (either way) of the share the last one came at repeats it. */
export const SAME_SHARE = 1.1
/** A repeated refusal cuts this fraction of the usual cut's depth (in log terms)... */
export const REPEAT_CUT_DEPTH = 0.5
/** ... and the share regrows at this fraction of its pace up to the share refused. */
export const REPEAT_GROWTH = 0.25

/** The share's memory of where refusals came. */
export class ShareCycle {
  // The share the last refusal came at (0: none yet).
  #refusedAt = 0
  // The share a repeated cycle regrows slowly up to (0: regrowth at its full pace).
  #ceiling = 0
  // What a fall of the announced rate keeps of it (share-fall.ts).
  readonly #fall = new ShareFall()

  /** The share regrowth is slow under, until it passes it (0: none). */
  get ceiling(): number {
    return this.#ceiling
  }

  /**
   * A refusal at `share`: the factor to cut it by, given the usual one (`cut`, e.g. 0.8). A
   * refusal near the share the previous one came at cuts half as deep and slows the regrowth.
   */
  cut(share: number, cut: number, sentAt = Number.NaN, now = Number.NaN): number {
    // A call that was out when the announced rate fell: its refusal is the fall's, a first one
    // regrown at the full pace; where the share's refusals came stays (share-fall.ts).
    if (this.#fall.before(sentAt)) {
      this.#ceiling = 0
      return cut
    }
    this.#fall.cut(now, { refusedAt: this.#refusedAt, ceiling: this.#ceiling })
    const last = this.#refusedAt
    this.#refusedAt = share
    const repeat = last > 0 && share <= last * SAME_SHARE && share * SAME_SHARE >= last
    this.#ceiling = repeat ? share : 0
    return repeat ? cut ** REPEAT_CUT_DEPTH : cut
  }

  /**
   * The announced rate of `lane` went from `from` to `to` at `now`: a rise by more than a tenth
   * forgets where the refusals came, a fall of a rate of requests keeps it (share-fall.ts). True
   * if a slow regrowth ended or goes on under the memory kept (the share regrows from now).
   */
  moved(from: number, to: number, now = Number.NaN, lane = REQUESTS): boolean {
    if (to <= from * SAME_SHARE && to * SAME_SHARE >= from) return false
    const slow = this.#ceiling > 0
    const memory = { refusedAt: this.#refusedAt, ceiling: this.#ceiling }
    const kept = this.#fall.kept(from, to, now, lane, memory)
    this.#refusedAt = kept?.refusedAt ?? 0
    this.#ceiling = kept?.ceiling ?? 0
    return slow || this.#ceiling > 0
  }

  /**
   * The share regrown from `scale`, given `progress`, the log of the growth the usual pace
   * allows since the cut: at REPEAT_GROWTH of it up to the ceiling, at all of it past.
   */
  regrown(scale: number, progress: number): number {
    const ceiling = this.#ceiling
    if (!(ceiling > scale)) return scale * Math.exp(progress)
    const slowSpan = Math.log(ceiling / scale) / REPEAT_GROWTH
    if (progress <= slowSpan) return scale * Math.exp(progress * REPEAT_GROWTH)
    return ceiling * Math.exp(progress - slowSpan)
  }
}
