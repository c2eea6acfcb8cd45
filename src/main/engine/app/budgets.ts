// The engine's face of the per-run caps (pacing/spend-budget.ts): set with `pacer run --budget`,
// read back by the run's report, checked for unpriced models before anything is sent.
import type { BudgetState } from '../pacing/spend-budget'
import { unpricedLine } from '../pacing/spend-budget'
import type { EngineParts } from './parts'

export type { BudgetState } from '../pacing/spend-budget'

export interface Budgets {
  /** Sets the batch's cap (null: none), its spend refolded from the ledger. */
  setRunCap(batchId: string, capMicros: number | null): void
  /** The batch's cap, settled spend and what calls in flight hold. */
  state(batchId: string): BudgetState
  /**
   * One line per provider/model of the batch's unfinished tasks that has no price: under a cap
   * such a call is refused, so the run refuses to start. Empty when the batch has no cap.
   */
  unpriced(batchId: string): string[]
}

export function budgets(parts: Pick<EngineParts, 'db' | 'budget' | 'prices' | 'writes'>): Budgets {
  const { budget, db, prices } = parts
  return {
    setRunCap(batchId, capMicros) {
      budget.setCap(batchId, capMicros)
      parts.writes.commit()
    },
    state: (batchId) => budget.state(batchId),
    unpriced(batchId) {
      if (budget.capOf(batchId) === null) return []
      // A read of the tasks view, whatever tables stand behind it.
      const models = db
        .prepare(
          "SELECT DISTINCT provider, model FROM tasks WHERE batch_id = ? AND status IN ('queued', 'running') ORDER BY 1, 2",
        )
        .all(batchId) as { provider: string; model: string }[]
      return models
        .filter((m) => prices.priceFor(m.provider, m.model) === null)
        .map((m) => unpricedLine(m.provider, m.model))
    },
  }
}
