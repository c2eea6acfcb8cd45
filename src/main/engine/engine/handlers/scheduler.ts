import type { CommandHandlers } from '../../../../shared/contract'
import { EngineError } from '../../errors'
import type { EngineParts } from '../parts'

type SchedulerHandlers = Pick<CommandHandlers, 'scheduler:get' | 'scheduler:set'>

/** The console's Concurrency view: each partition's state, and tuning its AIMD parameters. */
export function schedulerHandlers({ scheduler, runner }: EngineParts): SchedulerHandlers {
  return {
    'scheduler:get': () => scheduler.snapshot(),
    'scheduler:set': ({ partition, params }) => {
      // Partitions come from tasks (provider:model); the console tunes those, or all of them.
      if (partition !== '*' && !scheduler.snapshot().some((p) => p.partition === partition)) {
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
      return scheduler.snapshot()
    },
  }
}
