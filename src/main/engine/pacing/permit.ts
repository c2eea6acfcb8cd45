import type { Outcome } from '../core/types'
import type { CallAnswer } from './partition-pacing'
import type { Permit } from './scheduler-types'

/**
 * A permit whose release runs `release` once: later calls do nothing. A method, not an arrow in a
 * property: keepNames (tsx, and the CLI's bundle) names such an arrow with a defineProperty each
 * time one is made, and one is made for every admission.
 */
export function onePermit(
  partition: string,
  sentAt: number,
  release: (outcome: Outcome, answer?: CallAnswer) => void,
): Permit {
  let released = false
  return {
    partition,
    sentAt,
    release(outcome, answer) {
      if (released) return
      released = true
      release(outcome, answer)
    },
  }
}
