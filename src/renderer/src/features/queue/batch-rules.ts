/** What an operator may do with a batch in each state, and how far along it is. */
import { allowsBatchAction } from '../../../../shared/batch-states'
import type { BatchState, BatchSummary } from '../../../../shared/contract'
import { formatDateTime } from '../../../../shared/format'

// The engine's table decides; the console only offers what it would do.
export function canPause(state: BatchState): boolean {
  return allowsBatchAction('pause', state)
}

export function canResume(state: BatchState): boolean {
  return allowsBatchAction('resume', state)
}

export function canCancel(state: BatchState): boolean {
  return allowsBatchAction('cancel', state)
}

/** Retry is offered when the batch has failed or cancelled tasks and its state allows it. */
export function retryableCount(b: BatchSummary): number {
  return allowsBatchAction('retry', b.state) ? b.counts.failed + b.counts.cancelled : 0
}

export function finishedCount(b: BatchSummary): number {
  const c = b.counts
  return c.succeeded + c.reused + c.failed + c.cancelled
}

/** Progress bar segments in display order; queued is the unfilled rest of the bar. */
export const PROGRESS_SEGMENTS = ['succeeded', 'reused', 'failed', 'cancelled', 'running'] as const

/**
 * A batch as the batch filter names it: two runs of one file share a name, so its start and its
 * id follow ('tickets.csv · Dec 2, 14:05 · b-3f2a'), as the batch list shows them.
 */
export function batchLabel(b: Pick<BatchSummary, 'id' | 'name' | 'source' | 'createdAt'>): string {
  return `${b.name || b.source || b.id} · ${formatDateTime(b.createdAt)} · ${b.id}`
}
