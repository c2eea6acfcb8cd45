// Claim handling of one task: own the claim and execute, reuse a completed result, or wait for
// another worker's execution without holding a slot (the steps in claim-steps.ts).
import { throwIfAborted, type Active, type Finish, type RunContext } from './context'
import { execute } from './execute'
import { executeOwned, reuse, waitWithoutSlot } from './claim-steps'
import { processTeamTask } from './team-claim'

/** Claims the task's fingerprint and executes it, reuses its result, or waits for its owner. */
export async function processTask(ctx: RunContext, active: Active): Promise<Finish> {
  const { task } = active
  const provider = ctx.o.provider(task.provider)
  if (!provider) {
    return { status: 'failed', result: null, error: `unknown provider "${task.provider}"` }
  }
  const { claims, workerId, leaseMs, team } = ctx.o
  // Team mode: the team's claim first (an audit-mode duplicate runs anyway, as here).
  if (team !== null && !task.audit) return processTeamTask(ctx, active, provider, team)
  // After a fenced completion the winner's result is ours too, but nothing was saved by it.
  let fenced = false
  for (;;) {
    throwIfAborted(active)
    const attempt = claims.claim(task.fp, workerId, leaseMs)
    if (attempt.kind === 'owned') {
      const outcome = await executeOwned(ctx, active, provider, attempt)
      if (outcome.status !== 'fenced') return outcome
      fenced = true
      continue
    }
    if (task.audit) {
      // Audit mode: run anyway, and put the duplicate on the ledger with its price.
      const outcome = await execute(ctx, active, provider, null)
      return outcome.status === 'fenced'
        ? { status: 'failed', result: null, error: 'fenced' }
        : outcome
    }
    if (attempt.kind === 'completed') return reuse(ctx, task, attempt.result, fenced)
    // Busy: another worker runs it. Wait without holding a slot.
    const waited = await waitWithoutSlot(ctx, active, claims)
    if (waited.kind === 'completed') return reuse(ctx, task, waited.result, fenced)
    if (waited.kind === 'owned') {
      const outcome = await executeOwned(ctx, active, provider, waited)
      if (outcome.status !== 'fenced') return outcome
      fenced = true
    }
    // released or wait_timeout: try to claim again.
  }
}
