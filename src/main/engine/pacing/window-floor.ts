// The window a refusal narrows the learned one to (send-pace.ts): where the refusal came in the
// announced bucket, but never below one mean call. Calls of that size went through the window, so
// it holds at least one; a refusal where the minute bucket lacked almost nothing (a large call, a
// reading one answer late, a limit that had just fallen) read it as 0 ms, and a window of 0 ms
// never lends room again, even when the rate rises five times over (#100004).

/**
 * The window kept after a refusal: `learnedMs` narrowed to `readMs` (undefined: no reading), not
 * below `oneCallMs` (a mean call, in ms of the announced rate), and never widened.
 */
export function narrowedWindow(
  learnedMs: number,
  readMs: number | undefined,
  oneCallMs: number,
): number {
  if (readMs === undefined || !(readMs < learnedMs)) return learnedMs
  return Math.min(learnedMs, Math.max(0, readMs, oneCallMs))
}
