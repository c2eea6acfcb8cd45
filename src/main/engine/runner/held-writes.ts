// The writes that record money already spent: a paid answer's ledger row, the result it completes
// and its task's end. With the disk full they are kept in memory and written again when there is
// room; what the run could not write by the time it stops is counted as lost (WriteHealth.held).
import type { Held } from '../db/write-failures'
import { isWriteFailure } from '../db/write-failures'
import type { Active, RunContext } from './context'
import { isBusy } from './retry'

export interface PaidWrite {
  /** What the answer behind the write cost, counted as lost if it never reaches the disk. */
  costMicros: number | null
  /** False for a write whose loss loses no answer (a task's end: its result is on disk). */
  counts?: boolean
}

/**
 * Runs `write` in the runner's write scope until its transaction is committed. Another process's
 * lock is waited out as before (up to about a minute); a full disk is waited out for as long as
 * it lasts, with the backoff of the engine's WriteHealth. When the task is stopped meanwhile, one
 * last try is made at once; if that fails too, the stop is rethrown and the answer stays counted.
 */
export async function persistPaid<T>(
  ctx: RunContext,
  active: Active,
  write: () => T,
  paid: PaidWrite,
): Promise<T> {
  const { writes } = ctx.o
  const health = writes.health
  let held: Held | undefined
  for (let busy = 1; ;) {
    try {
      const out = writes.run(write)
      await (writes.committed ? writes.committed() : writes.durable())
      held?.release()
      return out
    } catch (err) {
      if (isBusy(err) && busy < 8) {
        await new Promise((r) => setTimeout(r, Math.min(8000, 250 * 2 ** busy++)))
        continue
      }
      if (!health || !isWriteFailure(err)) throw err
      health.fail(err)
      if (paid.counts !== false) held ??= health.hold(paid.costMicros)
    }
    try {
      await health.retryWhenRoom(active.controller.signal)
    } catch (stopped) {
      return lastTry(ctx, write, held, stopped)
    }
  }
}

/** Stopping: one synchronous try; the stop goes on either way, with the answer written or not. */
function lastTry<T>(ctx: RunContext, write: () => T, held: Held | undefined, stopped: unknown): T {
  const { writes } = ctx.o
  try {
    const out = writes.run(write)
    writes.commit()
    held?.release()
    return out
  } catch {
    throw stopped
  }
}
