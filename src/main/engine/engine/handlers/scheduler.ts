import type { CommandHandlers } from '../../../../shared/contract'
import { mergeAimdParams } from '../../aimd'
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
      const view = scheduler.view()
      if (partition !== '*' && !view.some((p) => p.partition === partition)) {
        throw new EngineError(
          'not_found',
          `no partition "${partition}" yet: partitions appear when their first call is made; use "*" for all`,
          'partition',
        )
      }
      // '*' is every partition shown, the other processes' too: checked on all before any moves.
      const mine = new Set(scheduler.snapshot().map((p) => p.partition))
      const others = partition === '*' ? view.filter((p) => !mine.has(p.partition)) : []
      try {
        for (const p of others) mergeAimdParams(p.params, params)
        scheduler.setParams(partition, params)
        for (const p of others) scheduler.setParams(p.partition, params)
      } catch (err) {
        throw EngineError.from(err, 'params')
      }
      runner.pump()
      return scheduler.view()
    },
  }
}
