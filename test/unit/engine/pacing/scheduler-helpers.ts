// What the Scheduler's tests share: a fake clock, a turn for resolved permits, every outcome, a
// snapshot of one partition, and acquires that log the order they were granted in.
import type { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import type { Outcome } from '../../../../src/main/engine/core/types'
import { fakeClock as newFakeClock } from '../../../helpers/clock'

export const fakeClock = (start = 1_000_000) => newFakeClock(start)

/** Lets resolved acquire promises run their callbacks. */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

export const OUTCOMES: Outcome[] = [
  'ok',
  'near_limit',
  'throttled',
  'overloaded',
  'timeout',
  'error',
]

export function state(s: Scheduler, partition: string) {
  const snap = s.snapshot().find((p) => p.partition === partition)
  if (!snap) throw new Error(`no partition ${partition}`)
  return snap
}

/** Acquires and records when (in order) each permit was granted. */
export function tracked(
  s: Scheduler,
  partition: string,
  log: string[],
  label: string,
  signal?: AbortSignal,
) {
  const p = s.acquire(partition, signal)
  void p.then(
    () => log.push(label),
    () => log.push(`${label}!`),
  )
  return p
}
