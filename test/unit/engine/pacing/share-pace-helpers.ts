// A send pace one call at a time at a fast announced rate, on explicit clocks (SendPace is pure):
// the share cycle's tests (share-cycle.test.ts, share-fall.test.ts).
import type { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'

export const ONE_CALL = costOf({}, 1)
export const RATE = 3000 // requests a minute: fast, so the share regrows by time (x1.025 a second)

/** The pace's rate in requests a minute at `now`. */
export const rateAt = (pace: SendPace, now: number) => {
  pace.delayMs(now, ONE_CALL)
  return pace.view().perMinute.requests as number
}

/** Calls every 20 ms from `from` to `to`: the per-call bound never holds the regrowth back. */
export function send(pace: SendPace, from: number, to: number): void {
  for (let t = from; t < to; t += 20) pace.take(t, ONE_CALL)
}
