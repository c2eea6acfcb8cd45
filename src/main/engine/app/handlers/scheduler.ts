import type { CommandHandlers } from '../../../../shared/contract'
import { mergeAimdParams } from '../../pacing/aimd'
import { HISTORY_WINDOW_MS } from '../../pacing/history'
import { EngineError } from '../../core/errors'
import type { BatchLifecycle } from '../batch-lifecycle'
import type { EngineParts } from '../parts'

type SchedulerHandlers = Pick<
  CommandHandlers,
  'scheduler:get' | 'scheduler:set' | 'scheduler:resume' | 'scheduler:history'
>

/**
 * The console's Concurrency view: each partition's state, tuning its AIMD parameters, and
 * resuming one a setup failure stopped.
 */
export function schedulerHandlers(
  { scheduler, runner, history, clock }: EngineParts,
  batches: BatchLifecycle,
): SchedulerHandlers {
  return {
    'scheduler:resume': ({ partition }) => {
      scheduler.resume(partition)
      // The batches it paused go on: "resume" is the operator saying the cause is fixed.
      for (const b of runner.takeHeld(partition))
        batches.resume(b, { driver: null, fromPaused: true })
      runner.pump()
      return scheduler.view()
    },
    // Every partition any process on the database drives, with what all of them hold.
    'scheduler:get': () => scheduler.view(),
    // What the database kept of the last hour (or less): the chart opens with it.
    'scheduler:history': ({ sinceMs }) =>
      history.read(
        Math.max(sinceMs ?? 0, clock.now() - HISTORY_WINDOW_MS),
        scheduler.view().map((p) => p.partition),
      ),
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
