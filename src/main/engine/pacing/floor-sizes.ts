// The floor's pace spaced by the calls' sizes where refusals pick the large calls. The floor's
// learned pace (floor-pace.ts) counts calls: on a rate nobody announces that counts tokens, with
// a bucket of about a second, calls whose sizes vary twentyfold were refused whenever a large
// one followed a normal gap, and each refusal cut the pace (#100034, #300037). A bucket in tokens
// refuses the calls larger than what it refilled since the last one; a bucket in requests refuses
// whichever call comes. So each refusal while the floor's pace holds is ranked among the sizes of
// the calls lately admitted (0: the smallest, 1: the largest; a bucket in requests ranks them at
// 0.5 on average): when the mean rank of the last RANKED refusals, at least MIN_REFUSALS of them,
// reaches TOKENS_RANK, the bucket counts tokens, and from then on a call waits its size's share of
// the spacing (its size over the mean size: the mean spacing, so the rate in calls, is unchanged),
// as a token bucket refills what the call takes. Kept per process; pure.
import type { CallEstimate } from './budget-reading'

/** Sizes of the calls lately admitted that a refusal is ranked among. */
const WINDOW = 64
/**
 * Refusals ranked before the evidence counts. At 6 (over the last 10), a rate in requests of a
 * second read as tokens on family seed 2 (#200064, 5.50 -> 6.09 % refused); at 8 over 12, none on
 * seeds 1-6.
 */
const MIN_REFUSALS = 8
/** The last refusals whose ranks are averaged. */
const RANKED = 12
/** The mean rank that says tokens bind: 0.65 is 1.8 standard errors above 0.5 over 12 ranks. */
const TOKENS_RANK = 0.65

/** What the floor's spacing knows of a call: its size as the caller estimated it. */
export interface SizedCall {
  readonly estimatedInput: number
  readonly estimatedOutput: number
}

/** A call's size as its estimate says: input and output tokens; 0 when unknown. */
function sizeOf(estimate: CallEstimate | undefined): number {
  return Math.max(0, (estimate?.inputTokens ?? 0) + (estimate?.outputTokens ?? 0))
}

/** The sizes of the calls at the floor, and whether refusals said the bucket counts them. */
export class FloorSizes {
  readonly #sizes: number[] = []
  readonly #ranks: number[] = []
  // The sizes refused lately: a refused call goes again, and its second refusal is not evidence.
  readonly #refused: number[] = []
  #tokens = false

  /** Whether refusals said the floor's bucket counts tokens. */
  get tokens(): boolean {
    return this.#tokens
  }

  /** A call of this estimate was admitted. */
  admitted(estimate: CallEstimate | undefined): void {
    const size = sizeOf(estimate)
    if (size <= 0) return
    this.#sizes.push(size)
    if (this.#sizes.length > WINDOW) this.#sizes.shift()
  }

  /** A call was refused while the floor's pace held. */
  refused(call: SizedCall): void {
    const size = sizeOf({ inputTokens: call.estimatedInput, outputTokens: call.estimatedOutput })
    if (this.#tokens || size <= 0 || this.#sizes.length < MIN_REFUSALS) return
    if (this.#refused.includes(size)) return
    this.#refused.push(size)
    if (this.#refused.length > RANKED) this.#refused.shift()
    let below = 0
    for (const s of this.#sizes) below += s < size ? 1 : s === size ? 0.5 : 0
    this.#ranks.push(below / this.#sizes.length)
    if (this.#ranks.length > RANKED) this.#ranks.shift()
    if (this.#ranks.length < MIN_REFUSALS) return
    const mean = this.#ranks.reduce((a, b) => a + b, 0) / this.#ranks.length
    if (mean >= TOKENS_RANK) this.#tokens = true
  }

  /** The share of the floor's spacing a call of this estimate waits: 1 until tokens bind. */
  weight(estimate: CallEstimate | undefined): number {
    const size = sizeOf(estimate)
    if (!this.#tokens || size <= 0 || this.#sizes.length === 0) return 1
    const mean = this.#sizes.reduce((a, b) => a + b, 0) / this.#sizes.length
    return size / mean
  }
}
