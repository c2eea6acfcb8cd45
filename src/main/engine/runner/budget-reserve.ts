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
 * What a call holds under the caps: its reservation in the database (its batch's cap and the
 * kept ones) and, in team mode, in the team store (the team's caps, team/caps.ts).
 */
export interface Hold {
  local: number | null
  team: string | null
}

/**
 * Reserves the call's worst case under its batch's cap, the database's kept caps and, in team
 * mode, the team's (null: none applies). A call that cannot fit is refused (BudgetStopError: its
 * task is held); one that may fit once the calls in flight settle waits for them. An unpriced
 * model under a cap is refused: its cost has no bound.
 */
export function reserveBudget(
  ctx: RunContext,
  active: Active,
  call: StepCall,
): Promise<Reserved | null> | null {
  const budget = ctx.o.budget
  if (!budget) return null
  const scope = budgetScope(active, call)
  const local = budget.applies(scope)
  // No cap applies (most calls): answered at once, without a promise to wait for.
  if (!local && !ctx.o.teamCaps) return null
  return reserveUnder(ctx, active, call, scope, local)
}

/** A call's worst case, the reservations it holds, the output cap it assumed. */
interface Reserved {
  hold: Hold
  outputTokens: number
  defaultedOutput: boolean
}

async function reserveUnder(
  ctx: RunContext,
  active: Active,
  call: StepCall,
  scope: CallScope,
  local: boolean,
): Promise<Reserved | null> {
  const budget = ctx.o.budget as NonNullable<RunContext['o']['budget']>
  const team = ctx.o.teamCaps
  const { task } = active
  const asked = call.maxOutputTokens ?? call.params?.max_tokens
  const worst = budget.worstCase(call.provider, call.model, call.messages, asked)
  if ('unpriced' in worst && local) throw new BudgetStopError(task.batchId, worst.unpriced)
  // A resend of a call whose answer was lost with its process settles that payment too.
  const micros = 'unpriced' in worst ? null : call.answerLost ? worst.micros * 2 : worst.micros
  for (;;) {
    // The team's caps first (a round trip), then the database's (one write).
    let teamId: string | null = null
    let wait = false
    if (team) {
      const t = await team.reserve(scope, micros, active.controller.signal)
      if (t.kind === 'unpriced' && 'unpriced' in worst) {
        throw new BudgetStopError(task.batchId, worst.unpriced)
      }
      if (t.kind === 'stop') throw new BudgetStopError(task.batchId, t.reason)
      if (t.kind === 'reserved') teamId = t.id
      wait = t.kind === 'wait'
    }
    // Unpriced, and no cap covers it.
    if ('unpriced' in worst || micros === null) return null
    if (!wait) {
      const r = local
        ? budget.reserve({ ...scope, taskId: task.id, worker: ctx.o.workerId, micros })
        : ({ kind: 'uncapped' } as const)
      if (teamId !== null && (r.kind === 'wait' || r.kind === 'stop')) team?.release(teamId)
      if (r.kind === 'stop') throw new BudgetStopError(task.batchId, r.reason)
      if (r.kind !== 'wait') {
        const hold = { local: r.kind === 'reserved' ? r.id : null, team: teamId }
        if (hold.local === null && hold.team === null) return null
        return { hold, outputTokens: worst.outputTokens, defaultedOutput: worst.defaultedOutput }
      }
    }
    await sleep(BUDGET_WAIT_MS, active.controller.signal)
    if (ctx.stopping()) throw new StopSignal('stop')
  }
}

/** What the caps know of a call: its batch, task type, provider and model. */
export function budgetScope(active: Active, call: Pick<StepCall, 'provider' | 'model'>): CallScope {
  const { task } = active
  return { batchId: task.batchId, taskType: task.type, provider: call.provider, model: call.model }
}

/** Nothing was sent: the reservations (if any) go back whole. */
export function releaseBudget(ctx: RunContext, hold: Hold | null): void {
  if (hold?.local != null) {
    const id = hold.local
    ctx.guard('budget', () => ctx.o.budget?.release(id))
  }
  if (hold?.team != null) ctx.o.teamCaps?.release(hold.team)
}

/**
 * The request is going out, in the write of its journal intent: if this worker dies before the
 * answer is ledgered, the kept caps count the call's worst case as in doubt (it may be billed).
 */
export function markSent(ctx: RunContext, hold: Hold | null): void {
  if (hold?.local != null) {
    const id = hold.local
    ctx.o.writes.run(() => ctx.o.budget?.markSent(id))
  }
}

/**
 * The same for the team's caps, in the team store, before the request goes out (a round trip):
 * a reservation the team took for dead (this process stalled past its lease) is not sent on.
 */
export async function markTeamSent(ctx: RunContext, active: Active, hold: Hold | null) {
  if (hold?.team == null || !ctx.o.teamCaps) return
  if (!(await ctx.o.teamCaps.markSent(hold.team, active.controller.signal))) {
    throw new Error(
      'team cap reservation lost: this process was taken for dead by the team store (it stalled past its lease); the call was not sent',
    )
  }
}

/**
 * The call's ledger row is being written (call it inside the row's transaction): its cost is
 * spent under the database's caps in that transaction, and under the team's once it commits.
 */
export function settleBudget(
  ctx: RunContext,
  scope: CallScope,
  hold: Hold | null,
  costMicros: number | null,
): void {
  ctx.o.budget?.settle(scope, hold?.local ?? null, costMicros)
  const team = ctx.o.teamCaps
  if (team) team.settle(scope, hold?.team ?? null, costMicros, ctx.o.writes.committed?.())
}

/** A rejection handler that gives the reservation back (`giveBack`) and rethrows. */
export function rethrowing(giveBack: () => void): (err: unknown) => never {
  return (err) => {
    giveBack()
    throw err
  }
}
