// A call's reservation under its batch's spend cap (pacing/spend-budget.ts), taken before the
// call is admitted and given back whole when nothing is sent. The caps: its batch's (`pacer run --budget`) and the
// kept ones that cover its task type, provider and model (`pacer budgets set`).
import { sleep } from '../core/timers'
import { BudgetStopError } from '../pacing/spend-budget'
import type { CallScope } from '../pacing/spend-caps'
import { StopSignal, type Active, type RunContext } from './context'
import type { StepCall } from './call'

/** How often a call that does not fit yet looks again while others' reservations settle. */
const BUDGET_WAIT_MS = 25

/**
 * Reserves the call's worst case under its batch's cap (null: no cap). A call that cannot fit is
 * refused (BudgetStopError: its task is held); one that may fit once the calls in flight settle
 * waits for them. An unpriced model under a cap is refused: its cost has no bound.
 */
export async function reserveBudget(
  ctx: RunContext,
  active: Active,
  call: StepCall,
): Promise<{ id: number; outputTokens: number; defaultedOutput: boolean } | null> {
  const budget = ctx.o.budget
  const { task } = active
  const scope = budgetScope(active, call)
  if (!budget || !budget.applies(scope)) return null
  const asked = call.maxOutputTokens ?? call.params?.max_tokens
  const worst = budget.worstCase(call.provider, call.model, call.messages, asked)
  if ('unpriced' in worst) throw new BudgetStopError(task.batchId, worst.unpriced)
  for (;;) {
    const r = budget.reserve({
      ...scope,
      taskId: task.id,
      worker: ctx.o.workerId,
      // A resend of a call whose answer was lost with its process settles that payment too.
      micros: call.answerLost ? worst.micros * 2 : worst.micros,
    })
    if (r.kind === 'uncapped') return null
    if (r.kind === 'reserved') return { id: r.id, ...worst }
    if (r.kind === 'stop') throw new BudgetStopError(task.batchId, r.reason)
    await sleep(BUDGET_WAIT_MS, active.controller.signal)
    if (ctx.stopping()) throw new StopSignal('stop')
  }
}

/** What the caps know of a call: its batch, task type, provider and model. */
export function budgetScope(active: Active, call: Pick<StepCall, 'provider' | 'model'>): CallScope {
  const { task } = active
  return { batchId: task.batchId, taskType: task.type, provider: call.provider, model: call.model }
}

/** Nothing was sent: the reservation (if any) goes back whole. */
export function releaseBudget(ctx: RunContext, reservation: number | null): void {
  if (reservation !== null) ctx.guard('budget', () => ctx.o.budget?.release(reservation))
}

/**
 * The request is going out, in the write of its journal intent: if this worker dies before the
 * answer is ledgered, the kept caps count the call's worst case as in doubt (it may be billed).
 */
export function markSent(ctx: RunContext, reservation: number | null): void {
  if (reservation !== null) ctx.o.writes.run(() => ctx.o.budget?.markSent(reservation))
}

/** A rejection handler that gives the reservation back (`giveBack`) and rethrows. */
export function rethrowing(giveBack: () => void): (err: unknown) => never {
  return (err) => {
    giveBack()
    throw err
  }
}
