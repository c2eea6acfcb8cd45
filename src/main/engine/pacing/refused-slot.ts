/**
 * "A refused call frees no slot." A refusal answers at once, so a refused call's slot comes back
 * long before the calls that were served: with the limit above the calls still out, the answers
 * of a burst of refusals reopen slots that the provider has just said it does not have, and a
 * deep fall of a cap is refused again and again before the next cut (one per episode) lands.
 * After a cut, and for each refusal of the same episode that comes back, the limit is therefore
 * never above the calls still out (the refused one not counted): only an answer that was served
 * opens a slot again.
 */
export function refusedFreesNoSlot(limit: number, inflight: number, min: number): number {
  return Math.min(limit, Math.max(min, inflight - 1))
}
