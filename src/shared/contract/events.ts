import type { LimitChangeView, PartitionView, SchedulerSample } from './scheduler'
import type { TypeRollupView } from './spend'
import type { BatchSummary, TaskRow } from './tasks'

export interface TasksChangedEvent {
  batches: BatchSummary[]
  /** Changed rows since the last event (capped; the table refetches when truncated). */
  tasks: TaskRow[]
  truncated: boolean
}

export interface SchedulerChangedEvent {
  samples: SchedulerSample[]
  changes: LimitChangeView[]
  partitions: PartitionView[]
}

export interface LedgerChangedEvent {
  totals: TypeRollupView
}

export interface EventPayloads {
  'tasks:changed': TasksChangedEvent
  'scheduler:changed': SchedulerChangedEvent
  'ledger:changed': LedgerChangedEvent
}
export type EventName = keyof EventPayloads
export const EVENTS: EventName[] = ['tasks:changed', 'scheduler:changed', 'ledger:changed']
