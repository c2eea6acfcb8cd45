// Where the announced share was refused outlives a fall of the announced rate (share-cycle.ts).
// The share is a fraction of the rate announced: a tenant the headers hide takes a fraction of
// the limit, and the refusals one call at a time find it there whatever the limit. A move of the
// announced rate forgot where they came (the refusals "said nothing of the new rate"), so after
// a fall the sawtooth began again from a first refusal: its full cut, its full-pace regrowth, and
// a second refusal at the same share before the cycle slowed (#100038, requests 36 -> 30 a minute
// behind a tenant of 0.12: refused at 0.88 of the new rate at 25 s and again at 50 s, as it had
// been at 0.90 of the old one). A fall of a rate of requests by more than a tenth now keeps the
// memory; a rise still forgets it (the level may have risen with the rate), and so does a fall of
// a rate of tokens (a refusal one call at a time there may be the call's size, not the share:
// kept on tokens too, #500065 0.628 -> 0.610 and #300032 0.635 -> 0.616 used, the 10th
// percentiles of seeds 4 and 2). What the fall itself refused is not the share's: a refusal of a
// call that was out when the fall was read cuts as a first refusal and regrows at the full pace,
// leaving where the share's refusals came as it was, and a cut just before the fall was read
// (within FALL_UNDO_SPACINGS calls of the new rate, at least FALL_UNDO_MIN_MS: headers one answer
// late, fall-refusal.ts) is undone from the memory. (Counted as a repeat instead, the fall's
// refusal cut shallow and set a ceiling over the new level: #300018, 46 -> 30 a minute, 2.91 ->
// 3.38 % refused; regrown slowly under the ceiling kept, the share cut by the fall came back late:
// #400020 0.837 -> 0.794 used, #900062 0.939 -> 0.926.) On diag.ts --seed 0..5: seed 0's 90th
// percentile of throttling 3.18 -> 2.91 % (#100038 3.38 -> 2.91 %, 0.853 -> 0.880 used), every
// draw that moved used more, mean utilization 0.8443 -> 0.8448 over the 360 draws, mean
// throttled 1.065 -> 1.063 % (docs/pacing.md). Pure: every method takes `now`.
import { FALL_UNDO_MIN_MS, FALL_UNDO_SPACINGS } from './fall-refusal'

/** The share cycle's memory: where the last refusal came, and the slow regrowth's ceiling. */
export interface CycleMemory {
  refusedAt: number
  ceiling: number
}

/** The lane whose announced rate moved: its mean call, and whether it counts tokens. */
export interface FallenLane {
  meanCost: number
  tokens: boolean
}

export class ShareFall {
  // The cycle's memory before its last cut, and when that cut came.
  #before: CycleMemory | null = null
  #cutAt = Number.NEGATIVE_INFINITY
  // When the announced rate last fell by more than a tenth.
  #fellAt = Number.NEGATIVE_INFINITY

  /** A refused call sent at `sentAt` was out when the rate fell: the fall's refusal. */
  before(sentAt: number): boolean {
    return sentAt <= this.#fellAt
  }

  /** The cycle cuts at `now`; `before`: its memory as the refusal found it. */
  cut(now: number, before: CycleMemory): void {
    this.#before = before
    this.#cutAt = now
  }

  /**
   * The announced rate of `lane` moved `from` -> `to` (per ms) at `now`, by more than the share
   * cycle's tenth (share-cycle.ts moved): the memory to keep (`current`, or what it was before a
   * cut the fall explains), or null to forget it.
   */
  kept(from: number, to: number, now: number, lane: FallenLane, current: CycleMemory) {
    if (lane.tokens || !(to < from)) return null
    this.#fellAt = now
    const spacing = to > 0 && lane.meanCost > 0 ? lane.meanCost / to : 0
    const within = Math.max(FALL_UNDO_MIN_MS, FALL_UNDO_SPACINGS * spacing)
    const before = this.#before
    this.#before = null
    return before && now - this.#cutAt <= within ? before : current
  }
}
