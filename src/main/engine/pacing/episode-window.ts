// How long a cut of the announced pace's share stays one episode. One cut per episode (TCP
// NewReno) counted a refusal as new evidence as soon as its call was sent after the cut; but a
// call sent right after a cut was not paced at the cut rate, whatever it sent into: with several
// processes on one database each one's first call after learning of a cut goes at once (a lane
// holds one call), into a provider whose bucket of one call the last success had just emptied.
// Three processes on a per-call request limit cut the shared share five times in 600 ms (1 ->
// 0.33 of the rate) and then sent nothing for 17 s (the live leg's #100010). Once the pace is one
// call at a time and several workers send at the rate, a refusal of a call sent within half the
// partition's spacing at the cut rate (every worker's calls together) is that cut's episode. A
// worker alone keeps the plain rule: each call it sent after the cut was paced by the pace that
// cut (its levels are settled at the cut), so its refusal is evidence (with the window, the
// single-process family lost on #200011 and #100004: the 90th percentile of throttling 3.40 ->
// 3.57 % on seed 2).

/** The share of the partition's call spacing after a cut that is still the cut's episode. */
const EPISODE_SPACINGS = 0.5

/**
 * Ms after a cut during which a refused call is the cut's episode: `burstMs` the pace's burst (0:
 * one call at a time), `callsPerMs` the partition's rate at the cut share (null: no call taken),
 * `workers` how many send at it. 0 while the pace still bursts (calls then go in bursts, not one
 * per spacing) and for a worker alone.
 */
export function episodeWindowMs(
  burstMs: number,
  callsPerMs: number | null,
  workers: number,
): number {
  if (workers <= 1 || burstMs !== 0 || callsPerMs === null || !(callsPerMs > 0)) return 0
  return EPISODE_SPACINGS / callsPerMs
}
