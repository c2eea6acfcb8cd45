// What an input-token budget counts. Anthropic's `input-tokens` headers announce a budget of input
// tokens (Anthropic's own counts input only, and announces an `output-tokens` budget beside it),
// but a proxy or a compatible server that sends them alone may count the output in the same
// bucket (the family's token buckets with these headers do): paced on input alone, such a bucket
// is spent a quarter faster than the pace believes, refuses every few seconds, and each refusal
// cuts the share that is ours by a fifth (#100058: 0.64 used, 3.85 % refused). So until the
// readings decide, the output is charged where no output-token budget is announced beside it (on
// the family's draws with these headers, mean used 0.826 -> 0.845, refused 0.98 -> 0.88 %: the
// readings it takes had cost refusals and cuts), and not where one is.
//
// Between two readings of `remaining` the bucket refilled at the announced rate (to its limit at
// most) and lost what was spent: the call's cost, and what others (a tenant) spent meanwhile. The
// deficit beyond the call's input is fitted, by least squares, to the call's output and to the time
// between the readings (others spend in proportion to it): the output's coefficient is what the
// bucket counts of it. The output is the one the answer reported (a bucket that counts what was
// used) or the one reserved at admission (`max_tokens`, what OpenAI counts against the minute and
// Anthropic's output limit takes at first): fitted on the output used alone, a bucket that counts
// 600 reserved a call whatever was used was explained by half and the charge came and went
// (#800027 0.408 -> 0.466 with both), or that reserved less what the answers between the two
// readings gave back of theirs (a bucket that gives the unused part back, as Anthropic's and
// Azure's do: its deficit is the output of the calls answered in between, noise to the others;
// #1400052 0.465 -> 0.708). A `remaining` may be one answer late (then the reading is as of the
// call before, 30 % of the family's draws), so each fit is kept both ways and, after ten pairs
// of readings, the one of the six that leaves the smallest error is believed (six pairs, with
// six fits, read noise as the output now and then). The output is charged when its coefficient is at least
// 0.5 and it explains at least half of what the time alone leaves: with a tenant taking 30-45 % of
// an input-only bucket, the coefficient alone had read 1 for a few readings (the tenant's spend
// is noise of the size of an output).
//
// Where the fit on the output reserved explains nearly all (KEPT_EXPLAINED), the bucket keeps what
// it reserved: an answer gives the pace back nothing of a call's max_tokens, as the provider gives
// nothing back. Given back, the pace ran ahead of a bucket of about a call and each refusal cut
// the share that is ours (on the family's draws with these headers that keep it, mean used 0.828
// -> 0.859; those that give it back 0.834 -> 0.829, read as keeping it now and then). A token
// budget of input and output (OpenAI's `x-ratelimit-*-tokens`) is read the same way, for that
// alone: whether it keeps what it reserved (the family's draws that keep it, 0.871 -> 0.878 used,
// refused 0.67 -> 0.59 %).

import type {
  BudgetDimension,
  BudgetReading,
  CallEstimate,
  CallUsage,
  DimensionReading,
} from './budget-reading'
import { costOf } from './budget-reading'

/** A call's reading of a token budget, and what the call was charged apart from it. */
export interface CountedSample {
  /** The call's place among the calls admitted (the readings come in this order). */
  seq: number
  sentAt: number
  remaining: number
  limit: number
  /** The announced refill per ms. */
  ratePerMs: number
  /** The call's input and output tokens as its answer reported them (0 for a refused call). */
  input: number
  output: number
  /** The output the call was charged at admission (its max_tokens; 0 for a refused call). */
  reserved: number
  /** What answers had given back of their reserved output when the call was admitted (in all). */
  refunded: number
}

/** Pairs of readings needed before the output is charged. */
export const COUNTED_MIN_SAMPLES = 10
/** The share of the deficit the output must explain beyond what the time between readings does. */
export const COUNTED_EXPLAINED = 0.5
/** What the time between readings leaves unexplained below this share of the deficits is noise
 * (or below the readings' rounding). */
const ALONE_NOISE = 1e-6
/**
 * The share of what the time leaves that the output reserved must explain for the bucket to be
 * read as keeping it (no refund at the answer): a bucket that gives the unused part back was fitted
 * best by the output reserved now and then too, by less (0.9 left #100058 at 0.799 used, not 0.868).
 */
export const KEPT_EXPLAINED = 0.97
/** Weight of the sums' past (so a provider that changes what it counts is followed). */
const DECAY = 0.95

/**
 * Learns whether a token budget counts the output (an input-token one may not), and whether it keeps
 * what a call reserved (pure: readings in, a share and a flag out).
 */
export class CountedOutput {
  #last: CountedSample | null = null
  #before: CountedSample | null = null
  // Per reading of `remaining` (as of its call, or one answer late), decayed sums for a least-
  // squares fit of each deficit beyond the call's input by its output and the time since the
  // reading before (what others spent in it).
  // Each fitted three ways: by the output the answer reported (a bucket that counts what was used),
  // by the output reserved at admission (one that takes max_tokens and keeps it, as OpenAI counts
  // the minute), and by that less what the answers in between gave back of theirs (Anthropic).
  readonly #fits = [new Fit(), new Fit(), new Fit(), new Fit(), new Fit(), new Fit()]
  #samples = 0
  // COUNTED_MIN_SAMPLES pairs of readings were read and one told something (till then the prior
  // holds).
  #decided = false
  #counts = false
  // The bucket keeps what it reserved, unused or not: the fit on the output reserved explains it.
  #kept = false
  // An output-token budget announced beside it: the output is counted there, not here (Anthropic).
  #separate = true

  /**
   * The share of a call's output to charge to the input-token budget: 0 or 1. Until the readings
   * decide, 1 where no output-token budget is announced beside it.
   */
  get outputShare(): number {
    if (!this.#decided) return this.#separate ? 0 : 1
    return this.#counts ? 1 : 0
  }

  /** Whether the bucket keeps the output a call reserved, unused or not (no refund at the answer). */
  get kept(): boolean {
    return this.#kept
  }

  /** Whether the headers announce an output-token budget beside the input-token one. */
  set separate(separate: boolean) {
    this.#separate = separate
  }

  /** A call's cost per dimension (budget-reading.ts), with its output where the budget counts it. */
  costOf(call: CallEstimate | CallUsage, requests = 1): Record<BudgetDimension, number> {
    return withCountedOutput(costOf(call, requests), this.outputShare)
  }

  /**
   * What an answered call cost per dimension: its usage, its output as the input-token budget
   * counts it (what was reserved, `reserved`, where the bucket keeps it: the pace gives nothing
   * back that the provider does not).
   */
  settledCost(usage: CallUsage, reserved: number): Record<BudgetDimension, number> {
    const cost = this.costOf(usage)
    if (this.#kept) cost['input-tokens'] += Math.max(0, reserved - usage.outputTokens)
    return cost
  }

  /** A reading as of a call (in the order of the calls); a refused call's cost is nothing. */
  read(s: CountedSample): void {
    const last = this.#last
    if (last && s.seq <= last.seq) return
    const before = this.#before
    const next = last && s.seq === last.seq + 1 && last.limit === s.limit
    this.#before = next ? last : null
    this.#last = s
    if (!next || !last || !before) return
    // No arrays: this runs on every answer that carries a token budget's reading.
    const fits = this.#fits
    for (let i = 0; i < fits.length; i++) {
      const late = i % 2 === 1
      const gap = late ? last.sentAt - before.sentAt : s.sentAt - last.sentAt
      const call = late ? last : s
      // The bucket refilled from the reading before, to its limit at most: what it lacks now is
      // what was spent in between, this call's cost and what others spent.
      const deficit = Math.min(s.limit, last.remaining + s.ratePerMs * gap) - s.remaining
      const back = call.refunded - (late ? before : last).refunded
      const output = i < 2 ? call.output : i < 4 ? call.reserved : call.reserved - back
      ;(fits[i] as Fit).add(deficit - call.input, output, gap / 1000)
    }
    this.#samples++
    if (this.#samples < COUNTED_MIN_SAMPLES) return
    let way = 0
    for (let i = 1; i < fits.length; i++) {
      if ((fits[i] as Fit).error < (fits[way] as Fit).error) way = i
    }
    const best = fits[way] as Fit
    const explained = best.explained()
    // The time alone explains the deficits to their rounding: nothing is learned (the prior or
    // what was learned before holds).
    if (Number.isNaN(explained)) return
    this.#decided = true
    this.#counts = best.slope >= 0.5 && explained >= COUNTED_EXPLAINED
    this.#kept = this.#counts && way >= 2 && way < 4 && explained >= KEPT_EXPLAINED
  }
}

/** Decayed least squares of y on two regressors without intercept. */
class Fit {
  #n = 0 // the readings, decayed
  #xx = 0
  #xz = 0
  #zz = 0
  #xy = 0
  #zy = 0
  #yy = 0

  // The fit, solved at each reading added (read several times after it).
  #a = 0
  #b = 0
  #error = 0

  add(y: number, x: number, z: number): void {
    this.#n = DECAY * this.#n + 1
    this.#xx = DECAY * this.#xx + x * x
    this.#xz = DECAY * this.#xz + x * z
    this.#zz = DECAY * this.#zz + z * z
    this.#xy = DECAY * this.#xy + x * y
    this.#zy = DECAY * this.#zy + z * y
    this.#yy = DECAY * this.#yy + y * y
    const det = this.#xx * this.#zz - this.#xz * this.#xz
    if (!(Math.abs(det) > 1e-9 * this.#xx * this.#zz)) {
      this.#a = this.#xx > 0 ? this.#xy / this.#xx : 0
      this.#b = 0
    } else {
      this.#a = (this.#xy * this.#zz - this.#zy * this.#xz) / det
      this.#b = (this.#zy * this.#xx - this.#xy * this.#xz) / det
    }
    // At least 0: an exact fit came out a few 1e-9 under it, and explained more than all.
    this.#error = Math.max(0, this.#yy - this.#a * this.#xy - this.#b * this.#zy)
  }

  /** The share of the output counted. */
  get slope(): number {
    return this.#a
  }

  /** The sum of squared misses left by the fit. */
  get error(): number {
    return this.#error
  }

  /** The share of the misses of what others spent alone that the output explains. */
  explained(): number {
    const alone = this.#zz > 0 ? this.#yy - (this.#zy * this.#zy) / this.#zz : this.#yy
    // What the time alone leaves is rounding (a reserved output as constant as the spacing of the
    // calls is the time's, as a tenant's spend is): there is nothing for the output to explain,
    // and NaN says so. A deficit is two whole-token readings apart: a variance of 1/6 each.
    const noise = Math.max(ALONE_NOISE * this.#yy, this.#n / 6)
    return alone > noise ? 1 - this.#error / alone : Number.NaN
  }
}

/** A call's cost with `share` of its output charged to the input-token budget as well. */
function withCountedOutput<T extends Record<BudgetDimension, number>>(cost: T, share: number): T {
  if (share === 0) return cost
  return { ...cost, 'input-tokens': cost['input-tokens'] + share * cost['output-tokens'] }
}

/**
 * A reading, for what each token budget counts (`learners`): `call`, the call it is as of (what it
 * was charged of its output, what its answer said it used: nothing for a refused call).
 */
export function readCounted(
  learners: Readonly<Record<'input-tokens' | 'tokens', CountedOutput>>,
  call: Omit<CountedSample, 'remaining' | 'limit' | 'ratePerMs'>,
  reading: BudgetReading,
  windowMs: number,
): void {
  const input = reading['input-tokens']
  if (input) {
    learners['input-tokens'].separate = reading['output-tokens'] !== undefined
    learners['input-tokens'].read(sampleOf(call, input, windowMs))
  }
  const tokens = reading.tokens
  if (tokens) learners.tokens.read(sampleOf(call, tokens, windowMs))
}

/** A call's sample of one reading (a literal: a spread of the call, on every answer, was slow). */
function sampleOf(
  call: Omit<CountedSample, 'remaining' | 'limit' | 'ratePerMs'>,
  r: DimensionReading,
  windowMs: number,
): CountedSample {
  return {
    seq: call.seq,
    sentAt: call.sentAt,
    remaining: r.remaining,
    limit: r.limit,
    ratePerMs: r.limit / windowMs,
    input: call.input,
    output: call.output,
    reserved: call.reserved,
    refunded: call.refunded,
  }
}
