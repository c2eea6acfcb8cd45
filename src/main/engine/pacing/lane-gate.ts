// A worker's side of the partition's one pace (shared-lane.ts): while several workers send one
// call at a time, the call this worker's own pace would hold back asks the store instead, at the
// partition's pace (this worker's share of the rate times the workers: what they pace together
// now), and the store's atomic step admits it when the shared lane has it, whichever worker sent
// the calls before. Admitted, the call leaves this worker's own lane no debt: should the workers
// fall to one, its own pace goes on from a lane that holds nothing, not from a debt of every call
// the lane paced.
import type { BudgetCost } from './shared-budget'
import type { LanePaces } from './shared-lane'
import type { BudgetDimension } from './budget-reading'
import { BUDGET_DIMENSIONS } from './budget-reading'
import type { SendPace } from './send-pace'

export class LaneGate {
  /** The partition's pace per dimension, while the head call goes by the shared lane. */
  #lane: LanePaces | null = null

  /**
   * The budget's wait for the head call as this worker applies it: 0 where the call goes by the
   * shared lane instead (several workers, one call at a time: the store decides), else
   * `budgetWaitMs`.
   */
  waitMs(budgetWaitMs: number, pace: SendPace, announcedMs: number): number {
    this.#lane = null
    if (pace.workers <= 1 || pace.burstMs !== 0) return budgetWaitMs
    const lane: LanePaces = {}
    let any = false
    for (const [dim, perMinute] of Object.entries(pace.view().perMinute)) {
      const d = dim as BudgetDimension
      const capacity = pace.singleCost(d)
      if (!(perMinute > 0) || !(capacity > 0)) continue
      const announced = pace.announcedPerMs(d)
      lane[d] = { ratePerMs: (perMinute / 60_000) * pace.workers, capacity, announced, announcedMs }
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
  admitted<T>(reservation: T, pace: SendPace, now: number): T {
    if (this.#lane === null) return reservation
    for (const dim of BUDGET_DIMENSIONS) pace.raise(dim, 0, now)
    this.#lane = null
    return reservation
  }
}
