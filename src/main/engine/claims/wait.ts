// A waiter on another worker's claim, for every claim store (claims.ts, claims-redis.ts): woken
// by the store's doorbell on a completion or release, polling with backoff meanwhile (another
// process's progress, a lease running out), never sleeping past the lease's end.
import type { EventEmitter } from 'node:events'
import { backoff } from '../core/backoff'
import type { Clock, WaitOutcome } from '../core/types'

/** One look at a claim: an outcome, or still running until its lease's end. */
export type WaitStep = WaitOutcome | { kind: 'pending'; leaseUntil: number }

// Wake a little after the lease ends so that `lease_until < now` holds at the takeover.
const LEASE_SLACK_MS = 5
// setTimeout turns anything above 2^31-1 ms into 1 ms; a longer wait is "no deadline" anyway.
const MAX_TIMER_MS = 2_147_483_647

export interface WaitLoop {
  fp: string
  timeoutMs: number
  signal?: AbortSignal
  clock: Clock
  /** Rung with the fingerprint on a completion or a release. */
  doorbell: EventEmitter
  pollMinMs: number
  pollMaxMs: number
  /** One look at the claim: an outcome, or pending until the lease's end. */
  step: () => WaitStep | Promise<WaitStep>
}

/** Resolves with the claim's outcome or wait_timeout; rejects with the signal's reason. */
export function waitForClaim(w: WaitLoop): Promise<WaitOutcome> {
  const { fp, timeoutMs, signal, doorbell } = w
  if (!(timeoutMs >= 0)) throw new TypeError(`timeoutMs must be >= 0, got ${String(timeoutMs)}`)
  return new Promise<WaitOutcome>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    let settled = false
    let looking = false
    let again = false
    const polls = backoff({ initialMs: w.pollMinMs, maxMs: w.pollMaxMs })
    let poll: NodeJS.Timeout | undefined
    let deadline: NodeJS.Timeout | undefined

    const settle = (finish: () => void): void => {
      if (settled) return
      settled = true
      clearTimeout(poll)
      clearTimeout(deadline)
      doorbell.off(fp, ring)
      signal?.removeEventListener('abort', onAbort)
      finish()
    }
    const check = async (): Promise<void> => {
      if (settled) return
      // One look at a time: a ring during a look is answered by another look after it.
      if (looking) {
        again = true
        return
      }
      looking = true
      clearTimeout(poll)
      let step
      try {
        step = await w.step()
      } catch (err) {
        settle(() => reject(err))
        return
      } finally {
        looking = false
      }
      // Ended meanwhile (aborted, timed out): no poll may outlive it.
      if (settled) return
      if (step.kind !== 'pending') {
        settle(() => resolve(step))
        return
      }
      if (again) {
        again = false
        void check()
        return
      }
      const untilExpiry = Math.max(0, step.leaseUntil - w.clock.now()) + LEASE_SLACK_MS
      poll = setTimeout(() => void check(), Math.min(polls.next(), untilExpiry))
    }
    // Deferred so that the completer's complete() returns before any waiter looks.
    const ring = (): void => queueMicrotask(() => void check())
    const onAbort = (): void => settle(() => reject(signal?.reason))

    // Subscribe before the first look, or a completion in between would go unheard.
    doorbell.on(fp, ring)
    signal?.addEventListener('abort', onAbort, { once: true })
    if (timeoutMs !== Infinity) {
      deadline = setTimeout(
        () => settle(() => resolve({ kind: 'wait_timeout' })),
        Math.min(timeoutMs, MAX_TIMER_MS),
      )
    }
    void check()
  })
}
