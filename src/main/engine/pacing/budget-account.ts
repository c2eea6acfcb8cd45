// A finished call's account in the shared announced budget (moved out of partition-pacing.ts,
// which it kept over the house's 400 lines): what the store applies of the call's reading and
// of the estimate's error.
import type { BudgetDimension, BudgetReading, DimensionReading } from './budget-reading'
import { refillRate } from './budget-reading'
import type { BudgetCost, BudgetSettle, BudgetTicket, SharedReading } from './shared-budget'

/**
 * The call's reading as the store applies it (refilled from when the provider counted the call),
 * and the estimate's error where no reading covers it. `actual`: what the call really cost (a
 * refusal nothing), undefined when unknown.
 */
export function budgetAccount(
  now: number,
  sentAt: number,
  charged: { ticket: BudgetTicket; cost: BudgetCost },
  actual: Record<BudgetDimension, number> | undefined,
  reading: BudgetReading | undefined,
  windowMs: number,
): BudgetSettle {
  const out: BudgetSettle = { ticket: charged.ticket }
  if (reading) {
    const shared: Partial<Record<BudgetDimension, SharedReading>> = {}
    // No entries array per answer: this runs on every answer.
    for (const dim in reading) {
      const r = reading[dim as BudgetDimension] as DimensionReading
      const ratePerMs = refillRate(r, now, windowMs)
      const refilled = Math.min(r.limit, r.remaining + ratePerMs * Math.max(0, now - sentAt))
      shared[dim as BudgetDimension] = { limit: r.limit, ratePerMs, refilled }
    }
    out.reading = shared
  }
  if (actual) {
    const correction: Partial<BudgetCost> = {}
    let any = false
    for (const dim of Object.keys(actual) as BudgetDimension[]) {
      const fix = actual[dim] - charged.cost[dim]
      if (fix === 0 || reading?.[dim]) continue
      correction[dim] = fix
      any = true
    }
    if (any) out.correction = correction
  }
  return out
}
