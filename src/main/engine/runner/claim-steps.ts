// The steps of a claim that the local and the team gate share: wait for another worker's claim
// without a slot, execute under an owned claim, reuse a stored result.
import type { QueuedTask } from '../queue/queue'
import type {
  AsyncClaimStore,
  ClaimAttempt,
  Provider,
  StoredResult,
  WaitOutcome,
} from '../core/types'
import { throwIfAborted, type Active, type Finish, type RunContext } from './context'
import { execute, type Execution } from './execute'
import { ledgerRow, recordAbandoned, ZERO_USAGE } from './ledger-rows'

/** Waits for another worker's claim without holding a slot; throws if the task was stopped. */
export async function waitWithoutSlot(
  ctx: RunContext,
  active: Active,
  store: Pick<AsyncClaimStore, 'wait'>,
): Promise<WaitOutcome> {
  const { task } = active
  ctx.setWaiting(task.id, true)
  let waited
  try {
    waited = await store.wait(task.fp, ctx.o.workerId, {
      timeoutMs: ctx.o.waitTimeoutMs,
      leaseMs: ctx.o.leaseMs,
      signal: active.controller.signal,
    })
  } finally {
    ctx.setWaiting(task.id, false)
  }
  throwIfAborted(active)
  return waited
}

/** Executes under a claim this worker owns; after a takeover, the lost attempt goes on the ledger. */
export function executeOwned(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  owned: Extract<ClaimAttempt, { kind: 'owned' }>,
): Promise<Execution> {
  if (owned.tookOver) recordAbandoned(ctx.o, active.task, owned.previousOwner, owned.previousEpoch)
  active.epoch = owned.epoch
  active.lost = false
  const from = owned.tookOver
    ? { owner: owned.previousOwner, epoch: owned.previousEpoch }
    : undefined
  return execute(ctx, active, provider, owned.epoch, from)
}

/** Another execution's stored result becomes this task's; a reuse on the ledger unless fenced. */
export function reuse(
  ctx: RunContext,
  task: QueuedTask,
  stored: StoredResult,
  fenced: boolean,
): Finish {
  const { ledger } = ctx.o
  // A task picked again after its end was lost (a full disk, a crash) finds its own result:
  // that is not a reuse, and saved nothing. Only a task picked before can be one.
  if (task.attempts > 1 && ledger.executedBy(task.fpId, task.id, stored.epoch)) {
    return stored.status === 'failed'
      ? { status: 'failed', result: null, error: safeError(stored.result) }
      : { status: 'succeeded', result: stored.result, error: null, resultRef: stored.ref }
  }
  // The reuse's ledger row is written with the task's end, in one write (Finish.record).
  const record = fenced
    ? undefined
    : () =>
        ledger.record({
          ...ledgerRow(ctx.o, task, 0, stored.epoch),
          usage: ZERO_USAGE,
          outcome: 'reused',
          latencyMs: null,
          status: null,
          // What the execution behind the result cost, as its claim stored it (null: unknown).
          savedMicros: stored.costMicros ?? null,
        })
  if (stored.status === 'failed') {
    const error = safeError(stored.result)
    return { status: 'failed', result: null, error: `same task failed before: ${error}`, record }
  }
  return {
    status: fenced ? 'succeeded' : 'reused',
    result: stored.result,
    error: null,
    resultRef: stored.ref,
    record,
  }
}

function safeError(result: string): string {
  try {
    const parsed = JSON.parse(result) as { error?: unknown }
    return typeof parsed.error === 'string' ? parsed.error : result
  } catch {
    return result
  }
}
