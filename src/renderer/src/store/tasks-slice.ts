import type {
  CommandError,
  CommandResults,
  Reply,
  TaskInput,
  TaskStatus,
  TasksChangedEvent,
} from '../../../shared/contract'
import { throttle } from '../lib/timing'
import { call } from './api'
import { upsertBatches } from './batches-slice'
import {
  changesMembership,
  countTasks,
  evictWindows,
  mergeRows,
  windowKeysFor,
  WINDOW_SIZE,
  type TaskFilter,
  type TaskWindows,
} from './task-windows'
import type { SliceCreator } from './types'

/**
 * The task table's paging bookkeeping. No component selects it, so scrolling re-renders nothing
 * until rows actually arrive; it is store state all the same, for devtools and tests to see.
 */
export interface TaskPaging {
  /** Bumped when the filter changes: a reply to an older query is dropped. */
  generation: number
  /** The rows the table last reported on screen. */
  visible: { start: number; end: number }
  /** Window keys being fetched now. */
  inflight: readonly number[]
  /** Window keys asked for again while in flight: fetched once more when their reply lands. */
  refetchAfter: readonly number[]
}

/** The task table: a filter over every task, of which only a few windows of rows are held. */
export interface TasksSlice {
  taskFilter: TaskFilter
  /** Rows the filter selects, as the last listTasks reply said: the table's scroll height. */
  taskTotal: number
  taskListLoaded: boolean
  taskListError: CommandError | null
  taskWindows: TaskWindows
  /** Bumped when the filter changes, so the table scrolls back to the top. */
  taskQueryEpoch: number
  taskPaging: TaskPaging

  /** tasks:changed: the batches' new counts, the rows merged in, the view refetched if moved. */
  applyTasksChanged(event: TasksChangedEvent): void
  setStatusFilter(statuses: TaskStatus[]): void
  toggleStatusFilter(status: TaskStatus): void
  setBatchFilter(batchId: string | null): void
  /** The table reports its visible rows; missing windows around them are fetched. */
  ensureTaskRange(start: number, end: number): void
  refreshTasks(): void

  enqueueTask(task: TaskInput): Promise<Reply<CommandResults['tasks:enqueue']>>
  retryTasks(input: {
    batchId?: string
    taskIds?: number[]
  }): Promise<Reply<CommandResults['tasks:retry']>>
}

const REFRESH_MS = 750

/**
 * The fetching behind the task table: which windows are in view, which are on their way, and the
 * throttles that keep scrolling and event bursts from flooding the engine with listTasks calls.
 */
function taskPager(
  set: Parameters<SliceCreator<TasksSlice>>[0],
  get: Parameters<SliceCreator<TasksSlice>>[1],
) {
  const patchPaging = (patch: Partial<TaskPaging>): void =>
    set({ taskPaging: { ...get().taskPaging, ...patch } })

  const visibleKeys = (): number[] => {
    const { visible } = get().taskPaging
    return windowKeysFor(visible.start, visible.end, Math.max(get().taskTotal, visible.end + 1))
  }

  const fetchWindow = async (key: number): Promise<void> => {
    const paging = get().taskPaging
    if (paging.inflight.includes(key)) {
      if (!paging.refetchAfter.includes(key)) {
        patchPaging({ refetchAfter: [...paging.refetchAfter, key] })
      }
      return
    }
    patchPaging({ inflight: [...paging.inflight, key] })
    const gen = paging.generation
    const f = get().taskFilter
    const reply = await call((api) =>
      api.listTasks({
        offset: key * WINDOW_SIZE,
        limit: WINDOW_SIZE,
        ...(f.statuses.length ? { statuses: f.statuses } : {}),
        ...(f.batchId !== null ? { batchId: f.batchId } : {}),
      }),
    )
    patchPaging({ inflight: get().taskPaging.inflight.filter((k) => k !== key) })
    if (gen !== get().taskPaging.generation) return
    if (!reply.ok) {
      set({ taskListError: reply.error, taskListLoaded: true })
      return
    }
    const windows = evictWindows({ ...get().taskWindows, [key]: reply.value.rows }, visibleKeys())
    set({
      taskWindows: windows,
      taskTotal: reply.value.total,
      taskListLoaded: true,
      taskListError: null,
    })
    const { refetchAfter } = get().taskPaging
    if (refetchAfter.includes(key)) {
      patchPaging({ refetchAfter: refetchAfter.filter((k) => k !== key) })
      void fetchWindow(key)
    }
  }

  // Throttles hold timers, not data: they stay here, out of the store.
  const refreshVisible = throttle(() => {
    const keys = visibleKeys()
    const windows = get().taskWindows
    // Windows out of view are now stale: drop them rather than show old rows when scrolled to.
    const kept: Record<number, TaskWindows[number]> = {}
    for (const k of keys) if (windows[k]) kept[k] = windows[k]
    set({ taskWindows: kept })
    for (const k of keys) void fetchWindow(k)
  }, REFRESH_MS)

  // Dragging the scrollbar across 100k rows passes many windows: ask at most ~10 times a second.
  const fetchMissing = throttle(() => {
    const windows = get().taskWindows
    for (const k of visibleKeys()) if (!windows[k]) void fetchWindow(k)
  }, 100)

  const resetTasks = (filter: TaskFilter): void => {
    refreshVisible.cancel()
    const { generation, visible } = get().taskPaging
    set({
      taskFilter: filter,
      taskWindows: {},
      taskListLoaded: false,
      taskListError: null,
      taskQueryEpoch: get().taskQueryEpoch + 1,
      taskPaging: {
        generation: generation + 1,
        visible: { start: 0, end: visible.end - visible.start },
        inflight: [],
        refetchAfter: [],
      },
    })
    void fetchWindow(0)
  }

  return { patchPaging, refreshVisible, fetchMissing, resetTasks }
}

export const createTasksSlice: SliceCreator<TasksSlice> = (set, get) => {
  const { patchPaging, refreshVisible, fetchMissing, resetTasks } = taskPager(set, get)

  return {
    taskFilter: { statuses: [], batchId: null },
    taskTotal: 0,
    taskListLoaded: false,
    taskListError: null,
    taskWindows: {},
    taskQueryEpoch: 0,
    taskPaging: { generation: 0, visible: { start: 0, end: 40 }, inflight: [], refetchAfter: [] },

    applyTasksChanged: (event) => {
      const { batches, taskFilter: f, taskWindows } = get()
      const next = upsertBatches(batches, event.batches)
      const rows =
        f.batchId === null ? event.tasks : event.tasks.filter((r) => r.batchId === f.batchId)
      const shifted =
        event.truncated ||
        changesMembership(taskWindows, rows, f) ||
        countTasks(next, f) !== countTasks(batches, f)
      set({ batches: next, batchesLoaded: true, taskWindows: mergeRows(taskWindows, rows) })
      if (shifted) refreshVisible()
      // The open task moved on (got its answer, failed): its drawer reads it again.
      const open = get().openTaskId
      if (open !== null && event.tasks.some((r) => r.id === open)) get().refreshOpenTask()
    },

    setStatusFilter: (statuses) => resetTasks({ ...get().taskFilter, statuses }),
    toggleStatusFilter: (status) => {
      const current = get().taskFilter.statuses
      const statuses = current.includes(status)
        ? current.filter((s) => s !== status)
        : [...current, status]
      resetTasks({ ...get().taskFilter, statuses })
    },
    setBatchFilter: (batchId) => resetTasks({ ...get().taskFilter, batchId }),

    ensureTaskRange: (start, end) => {
      patchPaging({ visible: { start, end } })
      fetchMissing()
    },
    refreshTasks: () => refreshVisible(),

    enqueueTask: async (task) => {
      const reply = await call((api) => api.enqueueTasks({ tasks: [task] }))
      if (reply.ok) refreshVisible()
      return reply
    },
    retryTasks: async (input) => {
      const reply = await call((api) => api.retryTasks(input))
      if (reply.ok) refreshVisible()
      return reply
    },
  }
}
