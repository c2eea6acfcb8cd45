import type { CommandHandlers } from '../../../../shared/contract'
import { EngineError } from '../../errors'
import type { EngineParts } from '../parts'

type LedgerHandlers = Pick<CommandHandlers, 'ledger:rollup' | 'ledger:over-time' | 'ledger:export'>

/** The console's Spend view: rollups per task type, spend over time; CSV export is the transport's. */
export function ledgerHandlers({ ledger }: EngineParts): LedgerHandlers {
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
  }
}
