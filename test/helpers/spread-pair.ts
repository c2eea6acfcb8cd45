// A spreading rule of a partition's pacing (refill-spread.ts, growth-spread.ts) driven with the
// window spread that counts its calls and round trips, as partition-pacing.ts composes them: the
// call counted before the rule sees it admitted, uncounted after the rule sees it settled.
import type { Outcome } from '../../src/main/engine/core/types'
import { WindowSpread } from '../../src/main/engine/pacing/window-spread'

interface SpreadRule {
  admitted(now: number): void
  settled(now: number, sentAt: number, outcome: Outcome): void
}

export function spreadPair<R extends SpreadRule>(make: (trips: WindowSpread) => R) {
  const trips = new WindowSpread()
  const rule = make(trips)
  return {
    rule,
    admitted(now: number): void {
      trips.admitted(now, false)
      rule.admitted(now)
    },
    settled(now: number, sentAt: number, outcome: Outcome): void {
      rule.settled(now, sentAt, outcome)
      trips.settled(now, sentAt, outcome === 'ok' || outcome === 'near_limit')
    },
  }
}
