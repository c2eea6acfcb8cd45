// pacer run's budget lines: the run's cap said at the start, and what a cap left when it stopped
// the run.
import type { BatchSummary } from '../../shared/contract'
import { usdToMicros } from '../../shared/money'
import { formatUsd } from '../../shared/format'
import type { BudgetState, Engine } from '../engine'
import { say } from './terminal-text'

/**
 * Stores --budget with the batch (a resumed one keeps its cap without it) and returns the lines
 * refusing models that have no price under the cap: their calls could not be bounded.
 */
export function applyBudget(
  engine: Engine,
  batchId: string,
  opts: { budget?: number; json?: boolean },
): string[] {
  if (opts.budget !== undefined) engine.budgets.setRunCap(batchId, usdToMicros(opts.budget))
  const cap = engine.budgets.state(batchId).capMicros
  if (cap !== null && !opts.json) {
    say.err(`pacer: budget ${formatUsd(cap)} for this run\n`)
  }
  return engine.budgets.unpriced(batchId)
}

/** What a cap left: spent, held, and the way on (the reason is kept with the batch). */
export function reportBudgetStop(b: BudgetState, batch: BatchSummary | null, reason: string): void {
  const held = batch ? batch.counts.queued + batch.counts.running : 0
  if (!reason.startsWith("held by budget: the run's cap")) {
    // A kept cap (pacer budgets): the reason names it, its period and its spend.
    say.err(
      `pacer: stopped by budget: ${reason.replace(/^held by budget: /, '')}; ${held} task(s) ` +
        `not started are held (queued): raise the cap, then run the same command to resume them\n`,
    )
    return
  }
  const cap = b.capMicros === null ? 'none' : formatUsd(b.capMicros)
  say.err(
    `pacer: stopped by the run's budget: ${formatUsd(b.spentMicros)} spent of ${cap}; ` +
      `${held} task(s) not started are held (queued): run the same command with a higher ` +
      `--budget to resume them\n`,
  )
}
