// The engine's face of the spend caps (pacing/spend-budget.ts): the run's cap set with `pacer run
// --budget`, the kept ones set with `pacer budgets set` or the console's Budgets section, read
// back with their spend, and checked for unpriced models before anything is sent.
import type { SpendCapInput, SpendCapView } from '../../../shared/contract/spend'
import { usdToMicros } from '../../../shared/money'
import { EngineError } from '../core/errors'
import type { BudgetState } from '../pacing/spend-budget'
import { unpricedLine } from '../pacing/spend-budget'
import { covers } from '../pacing/spend-caps'
import { isKnownZone } from '../pacing/spend-periods'
import type { EngineParts } from './parts'

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

export function budgets(parts: Pick<EngineParts, 'db' | 'budget' | 'prices' | 'writes'>): Budgets {
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
        .filter((c) => runCap || caps.some((cap) => covers(cap, c)))
        .map((c) => unpricedLine(c.provider, c.model))
      return [...new Set(lines)]
    },
  }
}
