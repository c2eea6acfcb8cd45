import type { Active } from './context'
import type { ResolvedRunnerOptions } from './options'
import { renewTeamClaims } from './team-claim'

/**
 * The runner's lease renewal rounds: every task it holds keeps its task lease and its claim (and,
 * in team mode, its team claim); a claim found taken over marks the task lost.
 */
export class LeaseRenewals {
  /** A round of team renewals is on its way (one at a time: a slow server does not pile them). */
  #renewingTeam = false

  readonly #o: ResolvedRunnerOptions
  readonly #warn: (message: string) => void

  constructor(o: ResolvedRunnerOptions, warn: (message: string) => void) {
    this.#o = o
    this.#warn = warn
  }

  round(active: ReadonlyMap<number, Active>): void {
    const o = this.#o
    const team =
      o.team === null || this.#renewingTeam
        ? null
        : renewTeamClaims(o.team, active.values(), o.leaseMs)
    if (team) {
      this.#renewingTeam = true
      team
        .catch((err: Error) => this.#warn(`team lease renewal failed: ${err.message}`))
        .finally(() => (this.#renewingTeam = false))
    }
    // One transaction for the whole round, under the engine's write scope.
    o.writes.run(() => {
      for (const a of active.values()) {
        o.queue.renewTask(a.task.id, o.workerId, o.leaseMs)
        if (a.epoch !== null && !a.lost) {
          if (!o.claims.renew(a.task.fp, a.epoch, o.leaseMs)) a.lost = true
        }
      }
    })
  }
}
