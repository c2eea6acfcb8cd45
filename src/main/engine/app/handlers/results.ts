import type { CommandHandlers } from '../../../../shared/contract'
import { EngineError } from '../../core/errors'
import type { Results } from '../../results/results'

type ResultsHandlers = Pick<CommandHandlers, 'tasks:get' | 'results:export'>

/** The console's task detail; the answers' download is the transport's, as the ledger's is. */
export function resultsHandlers(results: Results): ResultsHandlers {
  return {
    'tasks:get': ({ taskId }) => results.task(taskId),
    'results:export': () => {
      throw new EngineError(
        'transport_export',
        'the results export is answered by the transport: a save dialog in the desktop app, a download over HTTP',
      )
    },
  }
}
