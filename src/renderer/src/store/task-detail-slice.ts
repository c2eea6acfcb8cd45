import type {
  CommandError,
  CommandResults,
  Reply,
  ResultsFormat,
  TaskDetailView,
} from '../../../shared/contract'
import { call } from './api'
import type { SliceCreator } from './types'

/** The task detail drawer: the task a row opened, its answer and ledger rows. */
export interface TaskDetailSlice {
  /** The task whose row was opened; null: the drawer is closed. */
  openTaskId: number | null
  taskDetail: TaskDetailView | null
  taskDetailError: CommandError | null
  openTask(taskId: number): void
  closeTask(): void
  /** Reads the open task again (its status changed: a running task got its answer). */
  refreshOpenTask(): void
  /** The answers of a batch, as the engine exports them (a download, or a save dialog). */
  exportResults(
    batchId: string,
    format: ResultsFormat,
  ): Promise<Reply<CommandResults['results:export']>>
}

export const createTaskDetailSlice: SliceCreator<TaskDetailSlice> = (set, get) => {
  const load = async (taskId: number): Promise<void> => {
    const reply = await call((api) => api.getTask({ taskId }))
    // Another row was opened (or the drawer closed) while this one loaded.
    if (get().openTaskId !== taskId) return
    if (reply.ok) set({ taskDetail: reply.value, taskDetailError: null })
    else set({ taskDetailError: reply.error })
  }
  return {
    openTaskId: null,
    taskDetail: null,
    taskDetailError: null,
    openTask(taskId) {
      set({ openTaskId: taskId, taskDetail: null, taskDetailError: null })
      void load(taskId)
    },
    closeTask() {
      set({ openTaskId: null, taskDetail: null, taskDetailError: null })
    },
    refreshOpenTask() {
      const id = get().openTaskId
      if (id !== null) void load(id)
    },
    exportResults: (batchId, format) => call((api) => api.exportResults({ batchId, format })),
  }
}
