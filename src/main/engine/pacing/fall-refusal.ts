// A refusal that a fall of the announced limit explains does not cut the pace's share. One call at
// a time, a refusal the announced budget does not explain cuts the share of the rate that is ours
// to 80 % (send-pace.ts): a tenant the headers hide, a `remaining` that lags. But when the limit
// itself falls, the calls sent before the pace knew of it went at the old rate, and a bucket of a
// second or of one call refuses the first of them: the refusal says the limit fell, which the
// headers say too, and the pace already follows the new limit. Cut as well, the share stayed 20 %
// under the new rate and regrew by a cut's worth per ten calls: at 52 requests a minute the pace
// took 30 s to come back (#500066), at 150 a minute after two falls it ran at 0.7 of the rate
// (#400013). Headers current, the fall is read from the refused answer before the refusal is
// judged: a refused call sent before the fall was known is the fall's. Headers one answer late,
// the refusal is judged (and cuts) first and the fall is read on the next answers: a cut at most
// two of the new rate's call spacings (and at least a second) before the fall was known is undone.

/** A fall of the announced rate below this share of what it was is a fall. */
export const FALL_SHARE = 0.98
/** The window enforced holds at most this many calls (a larger one a fall leaves in debt)... */
export const FALL_WINDOW_CALLS = 2
/** ... and the share of the rate that is ours at least this (no cut still regrowing)... */
export const FALL_WHOLE_SHARE = 0.95
/** How many call spacings at the new rate after a cut a fall read still explains it... */
export const FALL_UNDO_SPACINGS = 2
/** ... and at least this long (ms): a reading one answer late comes with the next answer. */
export const FALL_UNDO_MIN_MS = 1000

/** The share of the pace as a cut found it, to be restored if a fall explains the cut. */
export interface ShareState {
  scale: number
  scaleAt: number
  callsSinceCut: number
}

/**
 * The pace as a refusal finds it: its window, a mean call (both ms of the rate), its share as of
 * now and the state it regrows from.
 */
export interface FallContext {
  windowMs: number
  oneCallMs: number
  share: number
  state: ShareState
}

/** What the pace remembers of falls of the announced limit and of its last cut. */
export class FallRefusal {
  #fallAt = Number.NEGATIVE_INFINITY
  #cut: (ShareState & { at: number }) | null = null

  /** A refused call sent at `sentAt` is the fall's: it was paced before the fall was known. */
  explains(sentAt: number, pace: FallContext): boolean {
    return sentAt <= this.#fallAt && applies(pace)
  }

  /** The pace cuts its share at `now`, as `pace` was before the cut. */
  cut(now: number, pace: FallContext): void {
    this.#cut = applies(pace) ? { ...pace.state, at: now } : null
  }

  /**
   * An announced rate moved `from` → `to` (per ms) at `now`; `meanCost` a mean call. Returns the
   * share to restore when a fall explains a cut just before it, else null.
   */
  announced(from: number, to: number, now: number, meanCost: number): ShareState | null {
    if (!(to < from * FALL_SHARE)) return null
    this.#fallAt = now
    const cut = this.#cut
    if (!cut) return null
    const spacing = to > 0 && meanCost > 0 ? meanCost / to : 0
    const within = Math.max(FALL_UNDO_MIN_MS, FALL_UNDO_SPACINGS * spacing)
    if (now - cut.at > within) return null
    this.#cut = null
    return { scale: cut.scale, scaleAt: cut.scaleAt, callsSinceCut: cut.callsSinceCut }
  }
}

/**
 * Only where the window enforced holds about a call (a larger one a fall leaves drained, and its
 * refill needs the cut: #500041, a ten-second window, 0.819 -> 0.774 used) and the share was
 * whole (a share regrowing after a cut is a tenant's: #100038 refused again at the share restored).
 */
function applies(pace: FallContext): boolean {
  const { windowMs, oneCallMs, share } = pace
  return oneCallMs > 0 && windowMs <= FALL_WINDOW_CALLS * oneCallMs && share >= FALL_WHOLE_SHARE
}
