// The shared lane at the partition's freshest reading of the announced rate. A worker's pace is its
// share of the announced rate as *it* last read it, and a worker whose calls all waited on the lane
// hears no answer: after a rise (#100011, 147 → 465 requests a minute, three processes) two of
// three workers still paced at the old limit for seconds, and the lane, refilled at its last
// taker's rate, went at a third of the rate each time one of them took a call (the partition sent
// 3–4 calls a second where one process sent 5–11). The shared budget holds the reading of every
// worker's latest answer: the lane keeps each worker's share of the rate (what refusals, tenants and
// the worker count made of it) but scales it to that reading. Up only: the shared bucket's refill
// is the announced rate or, when the bucket's reset is far off, the lower rate its reset implies
// (budget-reading.ts refillRate), where the worker's reading is the announced rate; scaled down by
// that, a provider whose quota resets in hours (the built-in simulator) paced two processes at a
// thousandth of its rate (a second `pacer run` of a file 79 s where it took 10).
import type { BudgetDimension } from './budget-reading'
import type { LanePace, LanePaces } from './shared-lane'

/** A shared bucket as far as its refill goes (shared-budget.ts SharedBucket). */
type Refill = Partial<Record<BudgetDimension, { p: number }>>

/** The lane's paces with each rate scaled from the asker's reading to the shared one. */
export function freshLanePaces(paces: LanePaces, buckets: Refill): LanePaces {
  let out: LanePaces | null = null
  for (const dim of Object.keys(paces) as BudgetDimension[]) {
    const pace = paces[dim] as LanePace
    const fresh = buckets[dim]?.p
    if (!(pace.announced && pace.announced > 0) || !(fresh && fresh > 0)) continue
    if (!(fresh > pace.announced)) continue
    out ??= { ...paces }
    out[dim] = { ...pace, ratePerMs: (pace.ratePerMs * fresh) / pace.announced }
  }
  return out ?? paces
}
