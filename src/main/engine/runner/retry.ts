// Retry policy and failure classification of the runner: what is worth sending again, how long to
// wait before it, and which database errors are only a busy lock or a full disk.
import { backoff } from '../core/backoff'
import { isWriteFailure } from '../db/write-failures'
import type { Finish } from './context'

/**
 * The wait before sending again after a throttle with no retry-after, or a timeout: 250 ms
 * doubling to 30 s, with equal jitter (half of it random; AWS architecture blog), in whole ms.
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return Math.floor(backoff({ initialMs: 250, maxMs: 30_000, jitter: 0.5, random }).delay(attempt))
}

/** While another process holds the write lock: 500 ms after the first busy try, doubling to 8 s. */
const busyWait = backoff({ initialMs: 250, maxMs: 8000 })

/** The wait after the `attempt`th try (from 1) found the database busy. */
export function busyWaitMs(attempt: number): number {
  return busyWait.delay(attempt)
}

/** The provider refused the request itself: sending it again would fail the same way. */
export function isInputFailure(status: number): boolean {
  return status === 400 || status === 413 || status === 422
}

/**
 * How a task ends on an error that is neither a stop nor a setup failure: a database that cannot
 * take writes (a full disk) or is locked by another process sends it back to the queue (or its
 * lease does, if that cannot be written either); anything else is a failure.
 */
export function otherFailure(err: unknown): Finish {
  const message = (err as Error).message
  if (isWriteFailure(err)) {
    return { status: 'requeue', error: `database cannot take writes: ${message}` }
  }
  if (isBusy(err)) return { status: 'requeue', error: `database busy: ${message}` }
  return { status: 'failed', result: null, error: `internal error: ${message}` }
}

export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}
