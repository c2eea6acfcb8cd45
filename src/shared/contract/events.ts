import type { LimitChangeView, PartitionView, PauseView, SchedulerSample } from './scheduler'
import type { TeamStoreView } from './settings'
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
  /** Pauses that began (or grew longer) since the last event. */
  pauses: PauseView[]
  partitions: PartitionView[]
}

export interface LedgerChangedEvent {
  totals: TypeRollupView
}

export interface EventPayloads {
  'tasks:changed': TasksChangedEvent
  'scheduler:changed': SchedulerChangedEvent
  'ledger:changed': LedgerChangedEvent
  /**
   * Team mode's state in Settings moved: the store answered, the process joined its team, or
   * this machine's ledger rows waiting for the store changed (settings:get has it at load).
   */
  'team:changed': TeamStoreView
}
export type EventName = keyof EventPayloads
export const EVENTS: EventName[] = [
  'tasks:changed',
  'scheduler:changed',
  'ledger:changed',
  'team:changed',
]
