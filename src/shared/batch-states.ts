import type { BatchState } from './contract'

/** What an operator can do to a batch, from the console or a transport. */
export type BatchAction = 'pause' | 'resume' | 'cancel' | 'retry'

export interface BatchTransition {
  /** The states the action is allowed from; from any other it changes nothing. */
  from: readonly BatchState[]
  to: BatchState
}

/**
 * The one table of batch state transitions: the engine applies it (TaskQueue.applyBatchAction and
 * retry) and the console offers a button only where it allows the action.
 */
export const BATCH_TRANSITIONS: Readonly<Record<BatchAction, BatchTransition>> = Object.freeze({
  // An interrupted batch (its worker gone) can be paused too: it then waits for an operator
  // instead of being taken back by the next `pacer run` of the same file.
  pause: { from: ['running', 'interrupted'], to: 'paused' },
  resume: { from: ['paused', 'interrupted'], to: 'running' },
  cancel: { from: ['running', 'paused', 'interrupted'], to: 'cancelled' },
  // Retrying failed or cancelled tasks means running them: their batch runs again, even one that
  // was done or cancelled. (The console offers it where there is something to retry.)
  retry: { from: ['running', 'paused', 'interrupted', 'cancelled', 'done'], to: 'running' },
})

/** Whether `action` is allowed from a batch in `state`. */
export function allowsBatchAction(action: BatchAction, state: BatchState): boolean {
  return BATCH_TRANSITIONS[action].from.includes(state)
}
