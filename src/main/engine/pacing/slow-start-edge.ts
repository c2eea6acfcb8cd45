/**
 * Slow start's first refusal is a cap's edge too: it may be cut to what was served. Nothing has
 * held in slow start (the level moves at every success, so no level carries a full window), and
 * a refusal there read as "at or below what held" was cut by half, where an overshoot after a
 * quiet stretch is cut to one call under the most served (served-cut.ts). With the growth spread
 * (growth-spread.ts) slow start overshoots a cap by a call, not a window, and halved from there
 * it lost what the burst's higher level had hidden: a fresh cap of 20 behind 1-s calls went from
 * 0.825 to 0.788 used; cut to what was served, 0.822 (test/unit/bench/family.test.ts).
 * Only above what was served: a refusal at fewer calls out than were served is a fall, halved.
 * `refusedAt`: where the refusal happened; `held`: the highest level that carried a full window;
 * `min`: the floor; `slowStart`: no throttle seen yet; `served`: one call under the most served
 * (0: none counted, served-cut.ts).
 */
export function aboveWhatHeld(
  refusedAt: number,
  held: number,
  min: number,
  slowStart: boolean,
  served: number,
): boolean {
  return refusedAt > held && (held >= min || (slowStart && served > 0 && refusedAt > served))
}
