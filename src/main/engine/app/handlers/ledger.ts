import type { CommandHandlers } from '../../../../shared/contract'
import { EngineError } from '../../core/errors'
import type { LedgerAppender } from '../../team/ledger/appender'
import { teamRollup } from '../../team/ledger/team-read'
import type { EngineParts } from '../parts'

type LedgerHandlers = Pick<
  CommandHandlers,
  'ledger:rollup' | 'ledger:over-time' | 'ledger:export' | 'ledger:team'
>

/** The team ledger asked of a process that is not in team mode. */
export function noTeamStore(): EngineError {
  return new EngineError(
    'no_team_store',
    'no team store: start with --store redis://HOST:PORT/DB (or set Settings → Team mode and restart) to see the team ledger',
    'scope',
  )
}

/** The console's Spend view: rollups per task type, spend over time; CSV export is the transport's. */
export function ledgerHandlers(
  { ledger, team }: EngineParts,
  appender: LedgerAppender | null,
): LedgerHandlers {
  return {
    // Both read the maintained rollups (a few hundred rows at most); a filter they do not cover is
    // computed on the ledger's read worker, so a long read never holds up other commands.
    'ledger:rollup': async (filter) => {
      const { byType, totals } = await ledger.rollup(filter)
      return { byType, totals: { ...totals, taskType: 'total' } }
    },
    'ledger:over-time': ({ bucketMs, since, until }) =>
      ledger.costOverTimeOffThread({ bucketMs, since, until }),
    'ledger:export': () => {
      throw new EngineError(
        'transport_export',
        'CSV export is answered by the transport: a save dialog in the desktop app, a download over HTTP',
      )
    },
    // The whole stream, read in pages and rolled up as it goes.
    'ledger:team': async () => {
      if (!team) throw noTeamStore()
      const rollup = await teamRollup(team.ledger)
      let waiting: number | null = null
      try {
        waiting = appender?.waiting ?? null
      } catch {
        // The appender's own connection is gone (shutting down): nothing to say.
      }
      return { store: team.address.display, ...rollup, waiting }
    },
  }
}
