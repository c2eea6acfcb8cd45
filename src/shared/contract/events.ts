import type { LimitChangeView, PartitionView, PauseView, SchedulerSample } from './scheduler'
import type { TeamLedgerBacklog, TypeRollupView } from './spend'
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

/** Team mode's state of this process, pushed when it changes (settings:get has it at load). */
export interface TeamChangedEvent {
  /** This machine's ledger rows waiting for the team store; null: none waiting. */
  ledgerBacklog: TeamLedgerBacklog | null
}

export interface EventPayloads {
  'tasks:changed': TasksChangedEvent
  'scheduler:changed': SchedulerChangedEvent
  'ledger:changed': LedgerChangedEvent
  'team:changed': TeamChangedEvent
}
export type EventName = keyof EventPayloads
export const EVENTS: EventName[] = [
  'tasks:changed',
  'scheduler:changed',
  'ledger:changed',
  'team:changed',
]
