// The engine's face of the spend caps (pacing/spend-budget.ts): the run's cap set with `pacer run
// --budget`, the kept ones set with `pacer budgets set` or the console's Budgets section, read
// back with their spend, and checked for unpriced models before anything is sent.
import type { CapForecastView, SpendCapInput, SpendCapView } from '../../../shared/contract/spend'
import { usdToMicros } from '../../../shared/money'
import { EngineError } from '../core/errors'
import type { JsonValue } from '../core/types'
import type { CapToForecast } from '../intake/cap-forecast'
import { ForecastAccumulator, type Forecast } from '../intake/forecast'
import type { BudgetState } from '../pacing/spend-budget'
import { unpricedLine } from '../pacing/spend-budget'
import { capName, covers } from '../pacing/spend-caps'
import { isKnownZone } from '../pacing/spend-periods'
import type { EngineParts } from './parts'
import { forecastOptions } from './task-defaults'

export type { BudgetState } from '../pacing/spend-budget'

export interface Budgets {
  /** Sets the batch's cap (null: none), its spend refolded from the ledger. */
  setRunCap(batchId: string, capMicros: number | null): void
  /** The batch's cap, settled spend and what calls in flight hold. */
  state(batchId: string): BudgetState
  /** The kept caps with their current period's spend, reserved and left. */
  caps(): SpendCapView[]
  /** Adds a kept cap, or changes the amount of the one of the same scope; returns its id. */
  setCap(input: ReturnType<typeof parseCapInput>): number
  /** Removes a kept cap; false when there was none. */
  removeCap(id: number): boolean
  /**
   * One line per provider/model of the batch's unfinished tasks that has no price and falls
   * under a cap (the batch's or a kept one): such a call is refused, so the run refuses to start.
   */
  unpriced(batchId: string): string[]
  /**
   * The forecast of the batch's tasks not finished yet (queued or running, not answered in the
   * database), weighed against its cap and every kept cap: what the held rest would cost, and
   * the caps whose minimum (input alone) already passes what they have left.
   */
  forecastRest(batchId: string): { forecast: Forecast | null; caps: CapForecastView[] }
}

/** The run's cap as a forecast weighs it: its name, and what the batch spent and holds. */
export function runCapToForecast(b: BudgetState): CapToForecast | null {
  if (b.capMicros === null) return null
  return {
    capId: null,
    name: "the run's cap (--budget)",
    taskType: null,
    provider: null,
    model: null,
    periodKey: '',
    capMicros: b.capMicros,
    spentMicros: b.spentMicros,
    reservedMicros: b.reservedMicros,
  }
}

/**
 * The caps a file's forecast weighs (`pacer forecast`, the console's import): every kept cap, and
 * the run's cap when one is given, as for a new batch (nothing spent under it yet).
 */
export function capsForFile(
  parts: Pick<EngineParts, 'budget'>,
  runCapMicros?: number,
): CapToForecast[] {
  const run =
    runCapMicros === undefined
      ? null
      : runCapToForecast({
          capMicros: runCapMicros,
          spentMicros: 0,
          reservedMicros: 0,
          reservations: 0,
        })
  return [...(run ? [run] : []), ...keptCapsToForecast(parts.budget.capViews())]
}

/** The kept caps as a forecast weighs them, in their current period. */
export function keptCapsToForecast(views: readonly SpendCapView[]): CapToForecast[] {
  return views.map((v) => ({
    capId: v.id,
    name: capName(v),
    taskType: v.taskType,
    provider: v.provider,
    model: v.model,
    periodKey: v.periodKey,
    capMicros: v.capMicros,
    spentMicros: v.spentMicros + v.inDoubtMicros,
    reservedMicros: v.reservedMicros,
  }))
}

/** A cap as the contract gives it, checked: the zone must be one the runtime knows. */
export function parseCapInput(
  input: SpendCapInput & { period: NonNullable<SpendCapInput['period']> },
) {
  const zone = input.zone ?? 'UTC'
  if (!isKnownZone(zone)) {
    throw new EngineError(
      'invalid_input',
      `zone: "${zone}" is not a time zone this runtime knows (an IANA name such as Europe/Paris)`,
      'zone',
    )
  }
  return {
    scope: {
      taskType: input.taskType ?? null,
      provider: input.provider ?? null,
      model: input.model ?? null,
      period: input.period,
      zone,
    },
    capMicros: usdToMicros(input.usd),
  }
}

export function budgets(
  parts: Pick<EngineParts, 'db' | 'budget' | 'prices' | 'writes' | 'claims' | 'settings' | 'queue'>,
): Budgets {
  const { budget, db, prices } = parts
  return {
    setRunCap(batchId, capMicros) {
      budget.setCap(batchId, capMicros)
      parts.writes.commit()
    },
    state: (batchId) => budget.state(batchId),
    caps: () => budget.capViews(),
    setCap({ scope, capMicros }) {
      const id = budget.setScopedCap(scope, capMicros)
      parts.writes.commit()
      return id
    },
    removeCap(id) {
      const removed = budget.removeScopedCap(id)
      parts.writes.commit()
      return removed
    },
    unpriced(batchId) {
      const runCap = budget.capOf(batchId) !== null
      const caps = budget.capViews()
      if (!runCap && caps.length === 0) return []
      // A read of the tasks view, whatever tables stand behind it.
      const calls = db
        .prepare(
          "SELECT DISTINCT type AS taskType, provider, model FROM tasks WHERE batch_id = ? AND status IN ('queued', 'running') ORDER BY 2, 3",
        )
        .all(batchId) as { taskType: string; provider: string; model: string }[]
      const lines = calls
        .filter((c) => prices.priceFor(c.provider, c.model) === null)
        .flatMap((c) => {
          if (runCap) return [unpricedLine(c.provider, c.model)]
          const kept = caps.find((cap) => covers(cap, c))
          return kept ? [unpricedLine(c.provider, c.model, `${capName(kept)}, id ${kept.id}`)] : []
        })
      return [...new Set(lines)]
    },
    forecastRest(batchId) {
      const run = runCapToForecast(budget.state(batchId))
      const caps = [...(run ? [run] : []), ...keptCapsToForecast(budget.capViews())]
      const audit = parts.queue.batch(batchId)?.audit
      const acc = new ForecastAccumulator(prices, {
        ...forecastOptions(parts, audit, undefined),
        caps,
      })
      const rows = db
        .prepare(
          "SELECT type, payload, fp, steps, provider, model, seq FROM tasks WHERE batch_id = ? AND status IN ('queued', 'running') ORDER BY seq",
        )
        .iterate(batchId) as IterableIterator<{
        type: string
        payload: string
        fp: string
        steps: number
        provider: string
        model: string
        seq: number
      }>
      for (const r of rows) {
        acc.add({ ...r, payload: JSON.parse(r.payload) as JsonValue, line: r.seq })
      }
      const forecast = acc.tasks > 0 ? acc.result() : null
      return { forecast, caps: forecast?.caps ?? [] }
    },
  }
}
