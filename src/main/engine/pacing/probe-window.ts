/**
 * Where a refusal that answers a call sent before the last cut says the refusals began.
 *
 * The rest of a burst still says it: each refusal that comes back finds one call fewer in flight
 * (a refused call frees no slot, so nothing refills it), and a cap that fell deep is read down to
 * the calls it still serves. After a refused probe, though, the probe's window was refused above
 * the level that held, and its refusals come back counting down from that level: the n-th finds
 * at most n - 1 calls fewer than held out (the earlier ones stopped a refill each), and says no
 * more than the probe did. A refusal with fewer out says the capacity fell under what held.
 *
 * `held`: the level that carried a full window; `refusedProbes`: > 0 when the last cut was a
 * refused probe; `inflight`: calls out when the answer came, itself counted; `earlier`: refusals
 * of this episode already seen since the cut; `min`: the lowest limit.
 */
export function refusedLevel(
  held: number,
  refusedProbes: number,
  inflight: number,
  earlier: number,
  min: number,
): number {
  if (refusedProbes > 0 && inflight + earlier >= held) return Math.max(held + 1, inflight)
  return Math.max(min + 1, inflight)
}
