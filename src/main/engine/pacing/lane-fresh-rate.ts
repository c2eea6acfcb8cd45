// The shared lane at the partition's freshest reading of the announced rate. A worker's pace is its
// share of the announced rate as *it* last read it, and a worker whose calls all waited on the lane
// hears no answer: after a rise (#100011, 147 → 465 requests a minute, three processes) two of
// three workers still paced at the old limit for seconds, and the lane, refilled at its last
// taker's rate, went at a third of the rate each time one of them took a call (the partition sent
// 3–4 calls a second where one process sent 5–11). The shared budget holds the reading of every
// worker's latest answer: the lane keeps each worker's share of the rate (what refusals, tenants and
// the worker count made of it) but scales it to that reading. Like with like: the worker's rate is
// the limit it read over the announced window, and the store's limit over that window is the same
// measure (the store's refill `p` is not: when the bucket's reset is far off it is the lower rate
// the reset implies, budget-reading.ts refillRate, and scaled by it a provider whose quota resets
// in hours, the built-in simulator, paced two processes at a thousandth of its rate: a second
// `pacer run` of a file 79 s where it took 10). Up and down: a fall one worker read slows the
// others' calls on the lane before they hear it themselves.
import type { BudgetDimension } from './budget-reading'
import type { LanePace, LanePaces } from './shared-lane'

/** A shared bucket as far as its limit goes (shared-budget.ts SharedBucket). */
type Limits = Partial<Record<BudgetDimension, { l: number }>>

/** The lane's paces with each rate scaled from the asker's reading to the shared one. */
export function freshLanePaces(paces: LanePaces, buckets: Limits): LanePaces {
  let out: LanePaces | null = null
  for (const dim of Object.keys(paces) as BudgetDimension[]) {
    const pace = paces[dim] as LanePace
    const limit = buckets[dim]?.l
    const { announced, announcedMs } = pace
    if (!(announced && announced > 0) || !(announcedMs && announcedMs > 0)) continue
    if (!(limit && limit > 0)) continue
    const fresh = limit / announcedMs
    if (fresh === announced) continue
    out ??= { ...paces }
    out[dim] = { ...pace, ratePerMs: (pace.ratePerMs * fresh) / announced }
  }
  return out ?? paces
}
