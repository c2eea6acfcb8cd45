import type { TaskStatus } from '../../../shared/contract'
import type { DivergenceEvent } from './durable/effects-journal'

export interface TaskEvent {
  taskId: number
  batchId: string
  status: TaskStatus
}

/** What the runner tells its listeners (the engine's events and warnings are made from these). */
export interface RunnerEvents {
  task: [event: TaskEvent]
  /** Something went wrong in the background (a database write that failed); work goes on. */
  warning: [message: string]
  /** A batch may have changed state (finished, interrupted). */
  batch: [batchId: string]
  /** A rerun's request differed from its execution's journal: the replay ended at that index. */
  divergence: [event: DivergenceEvent]
  /** A call of the batch did not fit under its cap: its task, and the run's next ones, are held. */
  budget: [batchId: string, reason: string]
}
