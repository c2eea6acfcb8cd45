// Claim handling of one task: own the claim and execute, reuse a completed result, or wait for
// another worker's execution without holding a slot.
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
  if (!fenced) {
    ledger.record({
      ...ledgerRow(ctx.o, task, 0, stored.epoch),
      usage: ZERO_USAGE,
      outcome: 'reused',
      latencyMs: null,
      status: null,
      // What the execution behind the result cost, as its claim stored it (null: unknown).
      savedMicros: stored.costMicros ?? null,
    })
  }
  if (stored.status === 'failed') {
    const error = safeError(stored.result)
    return { status: 'failed', result: null, error: `same task failed before: ${error}` }
  }
  return {
    status: fenced ? 'succeeded' : 'reused',
    result: stored.result,
    error: null,
    resultRef: stored.ref,
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
