import type { PacerApi } from '../../../shared/client'
import type {
  BatchFormat,
  BatchSummary,
  CommandError,
  CommandResults,
  Reply,
  TaskInput,
  TaskStatus,
  TasksChangedEvent,
} from '../../../shared/contract'
import { batchFormatOf } from '../../../shared/batch-format'
import { throttle } from '../lib/timing'
import { call } from './api'
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

export interface ImportDraft {
  /** Guards against a slow preview of an earlier file landing over a newer one. */
  id: number
  fileName: string
  size: number
  format: BatchFormat | null
  content: string | null
  phase: 'reading' | 'previewing' | 'ready' | 'importing' | 'failed'
  preview: CommandResults['batches:preview'] | null
  /** The preview's or the import's own failure (not the per-line errors). */
  error: CommandError | null
  skipInvalid: boolean
  audit: boolean
}

export interface QueueSlice {
  batches: BatchSummary[]
  batchesLoaded: boolean
  taskFilter: TaskFilter
  /** Rows the filter selects, as the last listTasks reply said: the table's scroll height. */
  taskTotal: number
  taskListLoaded: boolean
  taskListError: CommandError | null
  taskWindows: TaskWindows
  /** Bumped when the filter changes, so the table scrolls back to the top. */
  taskQueryEpoch: number
  importDraft: ImportDraft | null
  lastImport: { fileName: string; batchId: string | null; enqueued: number; skipped: number } | null

  loadBatches(): Promise<void>
  applyTasksChanged(event: TasksChangedEvent): void
  setStatusFilter(statuses: TaskStatus[]): void
  toggleStatusFilter(status: TaskStatus): void
  setBatchFilter(batchId: string | null): void
  /** The table reports its visible rows; missing windows around them are fetched. */
  ensureTaskRange(start: number, end: number): void
  refreshTasks(): void

  enqueueTask(task: TaskInput): Promise<Reply<CommandResults['tasks:enqueue']>>
  pauseBatch(batchId: string): Promise<Reply<BatchSummary>>
  resumeBatch(batchId: string): Promise<Reply<BatchSummary>>
  cancelBatch(batchId: string): Promise<Reply<BatchSummary>>
  retryTasks(input: {
    batchId?: string
    taskIds?: number[]
  }): Promise<Reply<CommandResults['tasks:retry']>>

  openImportFile(file: File): Promise<void>
  setImportOptions(options: { skipInvalid?: boolean; audit?: boolean }): void
  confirmImport(): Promise<void>
  closeImport(): void
}

/** Whether the previewed file may be queued: errors block it unless the operator skips them. */
export function canConfirmImport(draft: ImportDraft | null): boolean {
  const p = draft?.preview
  if (!draft || !p || draft.phase !== 'ready') return false
  return p.valid > 0 && (p.errors.length === 0 || draft.skipInvalid)
}

function upsertBatches(
  current: readonly BatchSummary[],
  changed: readonly BatchSummary[],
): BatchSummary[] {
  if (changed.length === 0) return current as BatchSummary[]
  const byId = new Map(current.map((b) => [b.id, b]))
  for (const b of changed) byId.set(b.id, b)
  return [...byId.values()].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
}

const REFRESH_MS = 750

export const createQueueSlice: SliceCreator<QueueSlice> = (set, get) => {
  // Paging bookkeeping that no component renders: kept outside the store so that scrolling does
  // not re-render anything until rows actually arrive.
  let generation = 0
  let visible = { start: 0, end: 40 }
  const inflight = new Set<number>()
  const refetchAfter = new Set<number>()
  let importSeq = 0

  const visibleKeys = (): number[] =>
    windowKeysFor(visible.start, visible.end, Math.max(get().taskTotal, visible.end + 1))

  const fetchWindow = async (key: number): Promise<void> => {
    if (inflight.has(key)) {
      refetchAfter.add(key)
      return
    }
    inflight.add(key)
    const gen = generation
    const f = get().taskFilter
    const reply = await call((api) =>
      api.listTasks({
        offset: key * WINDOW_SIZE,
        limit: WINDOW_SIZE,
        ...(f.statuses.length ? { statuses: f.statuses } : {}),
        ...(f.batchId !== null ? { batchId: f.batchId } : {}),
      }),
    )
    inflight.delete(key)
    if (gen !== generation) return
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
    if (refetchAfter.delete(key)) void fetchWindow(key)
  }

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
    generation++
    inflight.clear()
    refetchAfter.clear()
    refreshVisible.cancel()
    visible = { start: 0, end: visible.end - visible.start }
    set({
      taskFilter: filter,
      taskWindows: {},
      taskListLoaded: false,
      taskListError: null,
      taskQueryEpoch: get().taskQueryEpoch + 1,
    })
    void fetchWindow(0)
  }

  const batchCommand = async (
    run: (api: PacerApi) => Promise<Reply<BatchSummary>>,
  ): Promise<Reply<BatchSummary>> => {
    const reply = await call(run)
    if (reply.ok) set({ batches: upsertBatches(get().batches, [reply.value]) })
    return reply
  }

  const patchDraft = (id: number, patch: Partial<ImportDraft>): boolean => {
    const d = get().importDraft
    if (!d || d.id !== id) return false
    set({ importDraft: { ...d, ...patch } })
    return true
  }

  const runPreview = async (id: number): Promise<void> => {
    const d = get().importDraft
    if (!d || d.id !== id || d.content === null || d.format === null) return
    const { fileName, content, format, audit } = d
    const reply = await call((api) => api.previewBatch({ fileName, content, format, audit }))
    if (reply.ok) patchDraft(id, { phase: 'ready', preview: reply.value })
    else patchDraft(id, { phase: 'failed', error: reply.error })
  }

  return {
    batches: [],
    batchesLoaded: false,
    taskFilter: { statuses: [], batchId: null },
    taskTotal: 0,
    taskListLoaded: false,
    taskListError: null,
    taskWindows: {},
    taskQueryEpoch: 0,
    importDraft: null,
    lastImport: null,

    loadBatches: async () => {
      const reply = await call((api) => api.listBatches({}))
      if (!reply.ok) {
        get().reportError('Could not load batches', reply.error)
        return
      }
      set({ batches: upsertBatches([], reply.value), batchesLoaded: true })
    },

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
      visible = { start, end }
      fetchMissing()
    },
    refreshTasks: () => refreshVisible(),

    enqueueTask: async (task) => {
      const reply = await call((api) => api.enqueueTasks({ tasks: [task] }))
      if (reply.ok) refreshVisible()
      return reply
    },
    pauseBatch: (batchId) => batchCommand((api) => api.pauseBatch({ batchId })),
    resumeBatch: (batchId) => batchCommand((api) => api.resumeBatch({ batchId })),
    cancelBatch: (batchId) => batchCommand((api) => api.cancelBatch({ batchId })),
    retryTasks: async (input) => {
      const reply = await call((api) => api.retryTasks(input))
      if (reply.ok) refreshVisible()
      return reply
    },

    openImportFile: async (file) => {
      const id = ++importSeq
      const format = batchFormatOf(file.name)
      set({
        importDraft: {
          id,
          fileName: file.name,
          size: file.size,
          format,
          content: null,
          phase: 'reading',
          preview: null,
          error: null,
          skipInvalid: false,
          audit: get().settings?.audit ?? false,
        },
      })
      if (!format) {
        patchDraft(id, {
          phase: 'failed',
          error: {
            code: 'unsupported_file',
            message: `${file.name} is not a batch file: use .jsonl (one JSON task per line) or .csv`,
          },
        })
        return
      }
      let content: string
      try {
        content = await file.text()
      } catch (err) {
        patchDraft(id, {
          phase: 'failed',
          error: { code: 'read_failed', message: err instanceof Error ? err.message : String(err) },
        })
        return
      }
      if (!patchDraft(id, { content, phase: 'previewing' })) return
      await runPreview(id)
    },

    setImportOptions: (options) => {
      const d = get().importDraft
      if (!d) return
      // Audit changes the forecast (no dedup savings), so the preview is asked again.
      if (options.audit !== undefined && options.audit !== d.audit && d.content !== null) {
        const id = ++importSeq
        set({ importDraft: { ...d, ...options, id, phase: 'previewing', error: null } })
        void runPreview(id)
        return
      }
      set({ importDraft: { ...d, ...options } })
    },

    confirmImport: async () => {
      const d = get().importDraft
      if (!d || !canConfirmImport(d) || d.content === null || d.format === null) return
      patchDraft(d.id, { phase: 'importing', error: null })
      const reply = await call((api) =>
        api.importBatch({
          fileName: d.fileName,
          content: d.content!,
          format: d.format!,
          skipInvalid: d.skipInvalid,
          audit: d.audit,
        }),
      )
      if (!reply.ok) {
        patchDraft(d.id, { phase: 'ready', error: reply.error })
        return
      }
      if (get().importDraft?.id === d.id) set({ importDraft: null })
      set({
        lastImport: {
          fileName: d.fileName,
          batchId: reply.value.batchId,
          enqueued: reply.value.enqueued,
          skipped: reply.value.skipped,
        },
      })
      void get().loadBatches()
      refreshVisible()
    },

    closeImport: () => {
      importSeq++
      set({ importDraft: null })
    },
  }
}
