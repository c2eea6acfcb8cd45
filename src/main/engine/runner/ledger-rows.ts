// The ledger rows the runner writes besides a call's own: what every row of a task shares, the
// attempt of an owner that vanished, and the usage of a call that answered without any.
import { estimateTokens } from '../providers/prompt'
import type { QueuedTask } from '../queue/queue'
import type { ChatMessage, Usage } from '../core/types'
import type { ResolvedRunnerOptions } from './options'

export const ZERO_USAGE: Usage = {
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
}

/** The fields every ledger row of a task shares. */
export function ledgerRow(
  o: ResolvedRunnerOptions,
  task: QueuedTask,
  step: number,
  epoch: number | null,
) {
  return {
    ts: o.clock.now(),
    taskId: task.id,
    batchId: task.batchId,
    fp: task.fp,
    fpId: task.fpId,
    worker: o.workerId,
    taskType: task.type,
    provider: task.provider,
    model: task.model,
    step,
    epoch,
  }
}

/** The owner we took over from was mid-call when it vanished: the ledger keeps that attempt. */
export function recordAbandoned(
  o: ResolvedRunnerOptions,
  task: QueuedTask,
  previousOwner: string | undefined,
  previousEpoch: number | undefined,
): void {
  o.ledger.record({
    ...ledgerRow(o, task, 0, previousEpoch ?? null),
    worker: previousOwner ?? 'unknown',
    usage: ZERO_USAGE,
    outcome: 'abandoned',
    latencyMs: null,
    status: null,
  })
}

export function estimateUsage(messages: readonly ChatMessage[], text: string): Usage {
  return {
    inputTokens: estimateTokens(messages),
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: text === '' ? 0 : estimateTokens([{ role: 'assistant', content: text }]),
  }
}

export function addUsage(total: Usage, u: Usage): void {
  total.inputTokens += u.inputTokens
  total.cachedInputTokens += u.cachedInputTokens
  total.cacheWriteTokens += u.cacheWriteTokens
  total.outputTokens += u.outputTokens
}
