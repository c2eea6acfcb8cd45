// One execution of a task: its driver (the built-in multi-step loop, or an agent handler) runs
// through journaled effects, then the claim is completed (fenced) with the result.
import { parseExactJson } from '../../../shared/exact-json'
import { PartitionStoppedError } from '../pacing/scheduler'
import { BudgetStopError } from '../pacing/spend-budget'
import type { JsonValue, Provider, RequestParams, Usage } from '../core/types'
import type { QueuedTask } from '../queue/queue'
import { builtinDriver } from './builtin-driver'
import { StopSignal, type Active, type Finish, type RunContext } from './context'
import { EffectStop, type DriverResult, type DriverTask } from './durable/effects'
import { JournaledEffects } from './durable/effects-journal'
import { persistPaid } from './durable/held-writes'
import { isBusy, isInputFailure } from './retry'
import { ownerAlive } from './owner-alive'
import { completeTeam } from './team-complete'

/** An execution whose claim a newer epoch took: its result is not ours to save. */
export type Execution = Finish | { status: 'fenced' }

/** Runs the task's driver; completes the claim (fenced) unless this is an audit-mode duplicate. */
export async function execute(
  ctx: RunContext,
  active: Active,
  _provider: Provider,
  epoch: number | null,
  /** The owner this execution took the claim over from, if it did. */
  takenFrom?: { owner?: string; epoch?: number },
): Promise<Execution> {
  const { task } = active
  const driverTask = toDriverTask(task)
  const custom = ctx.o.driverFor?.(driverTask)
  const driver = custom ?? builtinDriver
  // A previous owner still alive (stopped, not dead) ledgers its own late answers as duplicates:
  // its calls in flight are not lost answers.
  const alive = takenFrom?.owner !== undefined && ownerAlive(takenFrom.owner)
  const effects = new JournaledEffects(ctx, active, epoch, ctx.journal, ctx.divergence, {
    liveEpoch: alive ? (takenFrom?.epoch ?? null) : null,
  })
  let out: DriverResult
  try {
    out = await driver(driverTask, effects)
  } catch (thrown) {
    // A stop (Ctrl-C, SIGTERM), pause, cancel or stopped partition that refused an effect ends the
    // task as the runner's, even when a handler caught it or threw something of its own instead:
    // the claim is released and the task requeued, its journal kept for the next run.
    const err = effects.runnerEnd ? effects.runnerEnd.error : thrown
    if (err instanceof EffectStop) {
      if (err.why === 'lost') {
        // Team mode: the team claim was lost, the local one is still ours to give back.
        if (ctx.o.team !== null && epoch !== null) ctx.o.claims.release(task.fp, epoch)
        return { status: 'fenced' }
      }
      return failedCall(ctx, active, effects, err, epoch)
    }
    // The runner's own ends (stop, pause, cancel, a stopped partition, a busy database) and, for
    // the built-in loop, anything else go up as they always did.
    if (!custom || isRunnerEnd(err, active)) throw err
    // An agent's own exception fails the task with its message; the claim is released, so a rerun
    // (with fixed code, or a fixed tool) replays what its calls already paid for.
    return agentFailed(ctx, active, err, epoch)
  }
  // A handler that swallowed the refusal answers without the calls it meant to make: not kept.
  if (effects.runnerEnd) throw effects.runnerEnd.error
  // The answer is the last step's: cut short by the output cap, it is kept but not handed out to
  // duplicates unless the operator accepts truncated answers (claims.ts).
  const truncated = out.finishReason === 'length'
  const result = resultJson(out, custom ? effects.calls : task.steps, effects, truncated)
  if (epoch === null) return { status: 'succeeded', result, error: null }
  const { claims, writes } = ctx.o
  const status = truncated ? 'truncated' : 'succeeded'
  const cost = effects.costMicros
  let resultRef: number | undefined
  let ended = false
  // A try whose end failed in a transaction still open keeps its completion: not written twice.
  let completedIn = -1
  const completed =
    !active.lost &&
    // Team mode: the team's claim first (fenced across machines); held while out of reach.
    (ctx.o.team === null || (await completeTeam(ctx, active, epoch, result, status, cost))) &&
    // Held and retried while the disk is full (held-writes.ts): the calls were paid for.
    (await persistPaid(
      ctx,
      active,
      () => {
        const kept = completedIn === writes.generation && writes.owns?.() === true
        const done = kept || claims.complete(task.fp, epoch, result, status, cost)
        if (!done) return false
        completedIn = writes.generation ?? -1
        // In the completion's transaction: the journal goes when the result is stored, not before.
        effects.close()
        // The task's end too: one commit to wait for instead of two, written (or held and
        // retried on a full disk) together. The task points at the result its claim stored: one
        // copy, however many tasks share it.
        resultRef = claims.resultRef?.(task.fp)
        const stored = resultRef !== undefined ? { ref: resultRef } : result
        ended = ctx.o.queue.finishTask(task.id, ctx.o.workerId, 'succeeded', stored, null)
        return true
      },
      { costMicros: cost },
    ))
  active.epoch = null
  if (!completed) {
    // A team claim lost meanwhile leaves the local one owned: give it back for the winner's result.
    if (ctx.o.team !== null) claims.release(task.fp, epoch)
    return { status: 'fenced' }
  }
  return { status: 'succeeded', result, error: null, resultRef, ended }
}

/** The queue's row as a driver sees it: payload and params parsed. */
function toDriverTask(task: QueuedTask): DriverTask {
  return {
    id: task.id,
    batchId: task.batchId,
    seq: task.seq,
    type: task.type,
    payload: parseExactJson(task.payload) as JsonValue,
    key: task.key,
    steps: task.steps,
    provider: task.provider,
    model: task.model,
    params: task.params === null ? null : (parseExactJson(task.params) as RequestParams),
  }
}

function isRunnerEnd(err: unknown, active: Active): boolean {
  return (
    err instanceof StopSignal ||
    err instanceof PartitionStoppedError ||
    err instanceof BudgetStopError ||
    isBusy(err) ||
    active.stopped !== undefined ||
    active.controller.signal.aborted
  )
}

/**
 * A task's stored result (results.body): `{text, message?, finishReason?, truncated?, steps, usage,
 * costMicros, value?}`. Results stored before finish reasons were kept have only text, steps and
 * usage; every reader (results.ts) takes both.
 */
function resultJson(
  out: DriverResult,
  steps: number,
  totals: { usage: Usage; costMicros: number | null },
  truncated: boolean,
): string {
  return JSON.stringify({
    text: out.text,
    message: out.message,
    finishReason: out.finishReason,
    truncated: truncated || undefined,
    steps,
    usage: totals.usage,
    costMicros: totals.costMicros,
    value: out.value,
  })
}

/** A call that failed for good: the failure is kept as the claim's result or the claim released. */
async function failedCall(
  ctx: RunContext,
  active: Active,
  effects: JournaledEffects,
  stop: EffectStop,
  epoch: number | null,
): Promise<Execution> {
  const { task } = active
  const error = stop.status ? `HTTP ${stop.status}: ${stop.message}` : stop.message
  if (epoch !== null) {
    const costMicros = effects.costMicros
    const stored = JSON.stringify({ error, status: stop.status, step: effects.index, costMicros })
    if (stop.keep || (stop.deterministic && stop.status !== null && isInputFailure(stop.status))) {
      // The request itself was refused (400/413/422), or its answer was too big to read: the same
      // input fails the same way, so the failure is kept like a result. Setup failures (key,
      // model, credit: setup-failures.ts) never get here: they stop the partition and leave the
      // task queued.
      if (
        !(await completeTeam(ctx, active, epoch, stored, 'failed', costMicros)) ||
        !ctx.o.claims.complete(task.fp, epoch, stored, 'failed', costMicros)
      ) {
        return { status: 'fenced' }
      }
      effects.close()
    } else {
      // Released: a rerun replays the calls before this one from the journal.
      ctx.o.claims.release(task.fp, epoch)
    }
    active.epoch = null
  }
  return { status: 'failed', result: null, error }
}

function agentFailed(
  ctx: RunContext,
  active: Active,
  err: unknown,
  epoch: number | null,
): Execution {
  if (epoch !== null) {
    ctx.o.claims.release(active.task.fp, epoch)
    active.epoch = null
  }
  const message = err instanceof Error ? err.message : String(err)
  return { status: 'failed', result: null, error: message }
}
