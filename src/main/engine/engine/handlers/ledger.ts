import type { CommandHandlers } from '../../../../shared/contract'
import { EngineError } from '../../errors'
import type { EngineParts } from '../parts'

type LedgerHandlers = Pick<CommandHandlers, 'ledger:rollup' | 'ledger:over-time' | 'ledger:export'>

/** The console's Spend view: rollups per task type, spend over time; CSV export is the transport's. */
export function ledgerHandlers({ ledger }: EngineParts): LedgerHandlers {
  return {
    'ledger:rollup': (filter) => ({
      byType: ledger.rollupByType(filter),
      totals: { ...ledger.totals(filter), taskType: 'total' },
    }),
    'ledger:over-time': ({ bucketMs, since, until }) =>
      ledger.costOverTime({ bucketMs, since, until }),
    'ledger:export': () => {
      throw new EngineError(
        'transport_export',
        'CSV export is answered by the transport: a save dialog in the desktop app, a download over HTTP',
      )
    },
  }
}
