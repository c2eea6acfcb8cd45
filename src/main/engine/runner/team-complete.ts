// The team claim's completion, apart from the team gate (team-claim.ts): the execution calls it
// before the local completion, and the gate calls the execution.
import type { StoredStatus } from '../core/types'
import type { Active, RunContext } from './context'

/**
 * The team claim's completion, before the local one: false when another machine's epoch owns it
 * (fenced: the local claim is released, the winner's result is found by claiming again). While
 * the team store is out of reach it is held and retried, for the answer is paid; stopped in the
 * meantime, the answer is kept locally and the team claim left to run out.
 */
export async function completeTeam(
  ctx: RunContext,
  active: Active,
  localEpoch: number,
  result: string,
  status: StoredStatus,
  costMicros: number | null,
): Promise<boolean> {
  const team = ctx.o.team
  const epoch = active.team
  if (!team || epoch === null || epoch === undefined) return true
  const { fp } = active.task
  let done: boolean
  try {
    done = await team.complete(fp, epoch, result, status, costMicros, {
      signal: active.controller.signal,
    })
  } catch (err) {
    if (!active.controller.signal.aborted) throw err
    active.team = null
    ctx.guard('team claim completion', () => {
      throw new Error(
        `task ${active.task.id}: stopped before the team store answered; its answer is kept on this machine`,
      )
    })
    return true
  }
  active.team = null
  if (!done) ctx.o.claims.release(fp, localEpoch)
  return done
}
