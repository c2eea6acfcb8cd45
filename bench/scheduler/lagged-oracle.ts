// An oracle told the capacity late: it follows every change of a drawn provider perfectly, but
// only `roundTrips` of the draw's median latencies after it. Any real controller must observe a
// change before following it (a cap's rise shows only to a call sent past the old cap), so what
// this contender reaches on the family bounds what such a controller can reach: a target above
// it asks for foresight, not a better controller. diag.ts races it (`--lagged-oracle K`).
import type { Contender } from './contenders'
import { admitWhenTold } from './contenders'
import type { FamilyProvider } from './family'

/** The oracle of contenders.ts, told `roundTrips` median round trips late (family draws only). */
export function laggedOracle(roundTrips: number): Contender {
  return {
    name: `oracle told ${roundTrips} round trip${roundTrips === 1 ? '' : 's'} late`,
    drive(run) {
      const provider = run.provider as FamilyProvider
      const lagMs = roundTrips * provider.draw.latency.medianMs
      return admitWhenTold(
        run,
        (t) => provider.laggedOracleDelayMs(t, lagMs),
        lagMs,
        provider.draw.binding === 'concurrency',
      )
    },
  }
}
