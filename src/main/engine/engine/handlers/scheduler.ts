import type { CommandHandlers } from '../../../../shared/contract'
import { EngineError } from '../../errors'
import type { EngineParts } from '../parts'

type SchedulerHandlers = Pick<CommandHandlers, 'scheduler:get' | 'scheduler:set'>

/** The console's Concurrency view: each partition's state, and tuning its AIMD parameters. */
export function schedulerHandlers({ scheduler, runner }: EngineParts): SchedulerHandlers {
  return {
    // Every partition any process on the database drives, with what all of them hold.
    'scheduler:get': () => scheduler.view(),
    'scheduler:set': ({ partition, params }) => {
      // Partitions come from tasks (provider:model); the console tunes those, or all of them. A
      // partition another process drives is tuned on the shared record: it picks the params up
      // at its next admission.
      if (partition !== '*' && !scheduler.view().some((p) => p.partition === partition)) {
        throw new EngineError(
          'not_found',
          `no partition "${partition}" yet: partitions appear when their first call is made; use "*" for all`,
          'partition',
        )
      }
      try {
        scheduler.setParams(partition, params)
      } catch (err) {
        throw EngineError.from(err, 'params')
      }
      runner.pump()
      return scheduler.view()
    },
  }
}
