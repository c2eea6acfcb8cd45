// Issue 21, "before the run": which spend caps a batch would hit, and at roughly which task. The
// forecast's tasks are walked in the batch's order, each task that would make calls adding its
// forecast cost to every cap that covers it; the first task whose cost passes what the cap has
// left is where the cap would hold the rest. Its input alone (answers taken as empty) is the
// batch's minimum cost: `pacer run` refuses a batch whose minimum already passes a cap.
import type { CapForecastView } from '../../../shared/contract'

/** A cap as the forecast weighs it: what it covers, and what its current period has used. */
export interface CapToForecast {
  /** The kept cap's id; null: the run's own cap (`--budget`). */
  capId: number | null
  /** Its name in a sentence: "the daily cap (UTC) on all spend", "the run's cap (--budget)". */
  name: string
  /** null: any task type, provider, model. */
  taskType: string | null
  provider: string | null
  model: string | null
  /** '' for all time or a run's cap. */
  periodKey: string
  capMicros: number
  /** Spent in the period, with what dead processes sent and never ledgered (in doubt). */
  spentMicros: number
  /** What calls in flight hold under it now. */
  reservedMicros: number
}

/** One task of the batch as the forecast priced it. */
export interface CappedTask {
  type: string
  provider: string
  model: string
  /** The line of the file (or the task's seq in the queue). */
  line?: number
  /** False when it makes no call: reused, or a duplicate under deduplication. */
  runs: boolean
  /** Its forecast cost; null: its model has no price. */
  costMicros: number | null
  /** Its input alone at the input price, answers taken as empty; null: no price. */
  minimumMicros: number | null
}

function covers(cap: CapToForecast, t: CappedTask): boolean {
  return (
    (cap.taskType === null || cap.taskType === t.type) &&
    (cap.provider === null || cap.provider === t.provider) &&
    (cap.model === null || cap.model === t.model)
  )
}

/** Walks a batch's tasks in order against its caps; `result()` says what each cap would do. */
export class CapForecast {
  readonly #caps: { cap: CapToForecast; view: CapForecastView; unpriced: Set<string> }[]
  #position = 0

  constructor(caps: readonly CapToForecast[]) {
    this.#caps = caps.map((cap) => ({
      cap,
      unpriced: new Set<string>(),
      view: {
        capId: cap.capId,
        name: cap.name,
        periodKey: cap.periodKey,
        capMicros: cap.capMicros,
        spentMicros: cap.spentMicros,
        reservedMicros: cap.reservedMicros,
        leftMicros: Math.max(0, cap.capMicros - cap.spentMicros - cap.reservedMicros),
        tasks: 0,
        forecastMicros: 0,
        minimumMicros: 0,
        hitAt: null,
        minimumPasses: false,
        unpricedTasks: 0,
        unpricedModels: [],
      },
    }))
  }

  /** True when some cap is weighed (else adding tasks is wasted work). */
  get empty(): boolean {
    return this.#caps.length === 0
  }

  /** Adds the batch's next task, in its order (reused ones too: they count in the position). */
  add(t: CappedTask): void {
    this.#position++
    if (!t.runs) return
    for (const c of this.#caps) {
      if (!covers(c.cap, t)) continue
      const v = c.view
      v.tasks++
      if (t.costMicros === null || t.minimumMicros === null) {
        v.unpricedTasks++
        c.unpriced.add(`${t.provider}/${t.model}`)
        continue
      }
      v.forecastMicros += t.costMicros
      v.minimumMicros += t.minimumMicros
      if (v.hitAt === null && v.forecastMicros > v.leftMicros) {
        v.hitAt = { task: this.#position, line: t.line ?? this.#position }
      }
    }
  }

  /** Each cap that covers at least one task of the batch, in the order given. */
  result(): CapForecastView[] {
    return this.#caps
      .filter((c) => c.view.tasks > 0)
      .map(({ cap, view, unpriced }) => ({
        ...view,
        // Only the spend can never come back: calls in flight settle at or below what they hold.
        minimumPasses: view.minimumMicros > Math.max(0, cap.capMicros - cap.spentMicros),
        unpricedModels: [...unpriced].sort(),
      }))
  }
}
