// pacer run's budget lines: the run's cap said at the start, a batch refused because its input
// alone passes a cap, and what a cap left when it stopped the run.
import type { BatchSummary } from '../../shared/contract'
import { microsToUsd, usdToMicros } from '../../shared/money'
import type { RunSummary } from './run-summary'
import { formatInt, formatUsd } from '../../shared/format'
import type { BudgetState, Engine } from '../engine'
import { UsageError } from './errors'
import { EXIT } from './exit-codes'
import { say } from './terminal-text'

/**
 * Stores --budget with the batch (a resumed one keeps its cap without it) and returns the lines
 * refusing models that have no price under the cap: their calls could not be bounded.
 */
function applyBudget(
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

/**
 * Before anything is sent: stores --budget, then refuses the run (the batch left interrupted, to
 * resume) when a model has no price under a cap (a usage error, exit 2) or when the input alone
 * of what is left passes a cap and --up-to-cap is not given (exit 5, returned). null: go on.
 */
export async function refuseOverBudget(
  engine: Engine,
  batchId: string,
  opts: { budget?: number; json?: boolean; upToCap?: boolean },
): Promise<number | null> {
  const unpriced = applyBudget(engine, batchId, opts)
  if (unpriced.length > 0) {
    engine.batches.interrupt(batchId)
    await engine.shutdown()
    throw new UsageError(unpriced.join('\npacer: '))
  }
  const refusal = opts.upToCap ? null : minimumRefusal(engine, batchId)
  if (refusal === null) return null
  engine.batches.interrupt(batchId, refusal.reason)
  await engine.shutdown()
  for (const line of refusal.lines) say.err(`pacer: ${line}\n`)
  return EXIT.budget
}

/**
 * The caps whose minimum (the input alone of the tasks still to run, answers taken as empty)
 * already passes what they have not spent: one line each, and the reason kept with the batch.
 * null: none, or no cap applies. Nothing has been sent when this is asked.
 */
function minimumRefusal(
  engine: Engine,
  batchId: string,
): { lines: string[]; reason: string } | null {
  if (engine.budgets.state(batchId).capMicros === null && engine.budgets.caps().length === 0) {
    return null
  }
  const passing = engine.budgets.forecastRest(batchId).caps.filter((c) => c.minimumPasses)
  if (passing.length === 0) return null
  const lines = passing.map((c) => {
    const period = c.periodKey === '' ? '' : ` for ${c.periodKey}`
    const raise = c.capId === null ? 'a higher --budget' : `pacer budgets set (cap ${c.capId})`
    return (
      `refused to start: the input alone of its ${formatInt(c.tasks)} task(s) under ` +
      `${c.name}${period} costs at least ${formatUsd(c.minimumMicros)}, and the cap is ` +
      `${formatUsd(c.capMicros)} with ${formatUsd(c.spentMicros)} spent; nothing was sent. ` +
      `Raise it (${raise}), or add --up-to-cap to run until the cap holds the rest`
    )
  })
  return { lines, reason: `held by budget: ${lines[0]!.replace(/^refused to start: /, '')}` }
}

/** The forecast cost of the tasks a cap held (pacer forecast's count), or null if none is left. */
export function restForecast(
  engine: Engine,
  batchId: string,
): { costMicros: number | null } | null {
  const f = engine.budgets.forecastRest(batchId).forecast
  return f === null ? null : { costMicros: f.total.costMicros }
}

/** What a cap left: spent, held, the forecast of the rest, the way on (reason kept with the batch). */
export function reportBudgetStop(
  b: BudgetState,
  batch: BatchSummary | null,
  reason: string,
  rest: { costMicros: number | null } | null,
): void {
  const held = batch ? batch.counts.queued + batch.counts.running : 0
  const heldLine =
    `${held} task(s) not started are held (queued)` +
    (rest === null
      ? ''
      : rest.costMicros === null
        ? ', forecast to finish unknown (a model has no price)'
        : `, forecast ${formatUsd(rest.costMicros)} to finish`)
  if (!reason.startsWith("held by budget: the run's cap")) {
    // A kept cap (pacer budgets): the reason names it, its period and its spend.
    say.err(
      `pacer: stopped by budget: ${reason.replace(/^held by budget: /, '')}; ${heldLine}: ` +
        `raise the cap, then run the same command to resume them\n`,
    )
    return
  }
  const cap = b.capMicros === null ? 'none' : formatUsd(b.capMicros)
  say.err(
    `pacer: stopped by the run's budget: ${formatUsd(b.spentMicros)} spent of ${cap}; ` +
      `${heldLine}: run the same command with a higher --budget to resume them\n`,
  )
}

/** The summary's `budget` (--json): the run's cap, its spend, what stopped it, the rest's cost. */
export function budgetReport(
  b: BudgetState,
  stoppedBy: string | null,
  rest: { costMicros: number | null } | null,
): RunSummary['budget'] {
  if (b.capMicros === null && stoppedBy === null) return undefined
  return {
    capUsd: microsToUsd(b.capMicros),
    spentUsd: microsToUsd(b.spentMicros),
    stoppedBy,
    ...(rest === null ? {} : { restForecastUsd: microsToUsd(rest.costMicros) }),
  }
}
