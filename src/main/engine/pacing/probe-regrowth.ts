/**
 * How far past a probed level that carried a full window the limit regrows at slow start's pace.
 * The probe proved the capacity rose; how far is unknown. Slow start all the way (tried before
 * the refused-slot rule) overshot onto rate limits nobody announces (the worst draw 18 % refused);
 * half a window per round trip (x1.5) took 4 round trips to triple. One doubling (x2 a round
 * trip) past the level, then the usual growth: CUBIC's shape, fast away from the old ceiling,
 * careful once well past it. 2 won over 1.5 and 3 on family seeds 1-3 (all within noise of it).
 */
export const PROBE_REGROWTH = 2

/** The growth per used success: slow start's 1 below `fastUntil`, else `increase`. */
export function regrowthStep(limit: number, fastUntil: number, increase: number): number {
  return limit < fastUntil ? Math.max(1, increase) : increase
}
