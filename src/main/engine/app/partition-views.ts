import type { PartitionView } from '../../../shared/contract'
import type { Scheduler } from '../pacing/scheduler'

/**
 * The console's partitions: the scheduler's shared view (every process on the store), with this
 * process's pace and last pause reason. The shared view rebuilds each stored partition from its
 * record, which holds neither: only the scheduler that read the headers and the refusals knows them.
 */
export function partitionViews(scheduler: Scheduler): PartitionView[] {
  const own = new Map(scheduler.snapshot().map((p) => [p.partition, p]))
  return scheduler.view().map((p) => {
    const mine = own.get(p.partition)
    if (!mine) return p
    return {
      ...p,
      ...(p.pace === undefined && mine.pace ? { pace: mine.pace } : {}),
      ...(p.pauseReason === undefined && mine.pauseReason ? { pauseReason: mine.pauseReason } : {}),
    }
  })
}
