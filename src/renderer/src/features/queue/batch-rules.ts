/** What an operator may do with a batch in each state, and how far along it is. */
import type { BatchState, BatchSummary } from '../../../../shared/contract'

export function canPause(state: BatchState): boolean {
  return state === 'running'
}

export function canResume(state: BatchState): boolean {
  return state === 'paused' || state === 'interrupted'
}

export function canCancel(state: BatchState): boolean {
  return state === 'running' || state === 'paused' || state === 'interrupted'
}

export function retryableCount(b: BatchSummary): number {
  return b.counts.failed + b.counts.cancelled
}

export function finishedCount(b: BatchSummary): number {
  const c = b.counts
  return c.succeeded + c.reused + c.failed + c.cancelled
}

/** Progress bar segments in display order; queued is the unfilled rest of the bar. */
export const PROGRESS_SEGMENTS = ['succeeded', 'reused', 'failed', 'cancelled', 'running'] as const
