// The send pace's settings, each with what it is for and how it was chosen (send-pace.ts).
/**
 * One call at a time, calls go this much under the rate, so that jitter between our clock and the
 * provider's is not a refusal (a burst of a second or more absorbs it).
 */
export const SINGLE_CALL_MARGIN = 0.98
/**
 * One call at a time, a lane of tokens holds this share of a mean call: after a pause the pace
 * cannot spend more than a provider's bucket of about one call holds (calls vary in size: a call
 * larger than the bucket was refused after every idle moment, and each refusal cut the share by a
 * fifth), and a call larger than what it holds leaves a debt that the next one waits for, so the
 * rate is the same. 0.7 on seeds 1, 2 and 3 of the family: 10th percentile of utilization 0.522 ->
 * 0.552 on seed 1, mean utilization up on all three (+0.005 / +0.003 / +0.001), throttled shares
 * unchanged (0.8: 0.541; 0.6: a median 0.003 lower).
 */
export const SINGLE_CALL_TOKENS = 0.7
/** Weight of a new estimate of what others spend (EWMA). */
export const OTHERS_WEIGHT = 0.3
/** Two readings closer than this say too little about a rate (remaining is rounded to a unit). */
export const MIN_SPAN_MS = 500
/** ... or than this many units of the rate's refill (two calls at 124 a minute take 970 ms)... */
export const MIN_SPAN_UNITS = 2
/**
 * ... or, on tokens, than this many mean calls: a reading is a call's size off either way (a call
 * counted late or early), and over one call's refill an estimate was that call's size off (a
 * standard deviation of 1.15 of the rate on #100009, 0.9 on #100004, with no tenant at all).
 */
export const MIN_SPAN_CALLS = 2
/** What others spend, as kept between estimates: signed, within these bounds. */
export const MIN_OTHERS = -0.5
export const MAX_OTHERS = 0.9
/** A refusal one call at a time cuts the rate that is ours to this share of what it was. */
export const SCALE_CUT = 0.8
/** The least share of the announced rate a cut leaves. */
export const MIN_SCALE = 0.05
/** Without refusals the share regrows this much per second (x1.25 in about 10 s), up to 1... */
export const SCALE_GROWTH_PER_S = 1.025
/** ... and no faster than one cut's worth per this many calls admitted since the cut. */
export const SCALE_REGROWTH_CALLS = 10
