// A worker's side of the partition's one pace (shared-lane.ts): while several workers send one
// call at a time, the call this worker's own pace would hold back asks the store instead, at the
// partition's pace (this worker's share of the rate times the workers: what they pace together
// now), and the store's atomic step admits it when the shared lane has it, whichever worker sent
// the calls before. Admitted, the call leaves this worker's own lane no debt: should the workers
// fall to one, its own pace goes on from a lane that holds nothing, not from a debt of every call
// the lane paced. The store charges a call's cost (output at its max_tokens) where the pace takes
// what answers turned out to use of it: the lane's pace is put in the store's units, or it would
// pace that much under the rate (by the ratio of the last call admitted).
import type { BudgetCost } from './shared-budget'
import type { LanePaces } from './shared-lane'
import type { BudgetDimension } from './budget-reading'
import { BUDGET_DIMENSIONS } from './budget-reading'
import type { SendPace } from './send-pace'
import type { Reservation } from './rate-budget'

export class LaneGate {
  /** The partition's pace per dimension, while the head call goes by the shared lane. */
  #lane: LanePaces | null = null
  /** Per dimension, what the store charged the last call admitted over what its pace took. */
  readonly #charged = new Map<BudgetDimension, number>()

  /**
   * The budget's wait for the head call as this worker applies it: 0 where the call goes by the
   * shared lane instead (several workers, one call at a time: the store decides), else
   * `budgetWaitMs`.
   */
  waitMs(budgetWaitMs: number, pace: SendPace): number {
    this.#lane = null
    if (pace.workers <= 1 || pace.burstMs !== 0) return budgetWaitMs
    const lane: LanePaces = {}
    let any = false
    for (const [dim, perMinute] of Object.entries(pace.view().perMinute)) {
      const d = dim as BudgetDimension
      const capacity = pace.singleCost(d)
      if (!(perMinute > 0) || !(capacity > 0)) continue
      const units = this.#charged.get(d) ?? 1
      lane[d] = {
        ratePerMs: (perMinute / 60_000) * pace.workers * units,
        capacity: capacity * units,
      }
      any = true
    }
    if (!any) return budgetWaitMs
    this.#lane = lane
    return 0
  }

  /** The head call's cost in the store, with the lane's pace while it goes by the shared lane. */
  cost(cost: BudgetCost): BudgetCost {
    return this.#lane === null ? cost : { ...cost, lane: this.#lane }
  }

  /** A call was admitted (its cost already taken from its own pace): by the lane, no debt. */
  admitted(reservation: Reservation, pace: SendPace, now: number): Reservation {
    for (const dim of BUDGET_DIMENSIONS) {
      const paced = reservation.paced[dim]
      if (paced > 0) this.#charged.set(dim, Math.max(1, reservation.cost[dim] / paced))
    }
    if (this.#lane === null) return reservation
    for (const dim of BUDGET_DIMENSIONS) pace.raise(dim, 0, now)
    this.#lane = null
    return reservation
  }
}
