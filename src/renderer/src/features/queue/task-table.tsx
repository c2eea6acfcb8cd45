import { flexRender, getCoreRowModel, useReactTable } from '@tanstack/react-table'
import { useVirtualizer } from '@tanstack/react-virtual'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import type { CommandError, TaskRow } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { formatInt } from '../../lib/format'
import { useStore } from '../../store'
import { WINDOW_SIZE } from '../../store/task-windows'
import { BatchFilter, StatusFilter } from './status-filter'
import { taskColumns, type IndexedTask } from './task-columns'

const ROW_HEIGHT = 32

export function TaskTable() {
  const windows = useStore((s) => s.taskWindows)
  const total = useStore((s) => s.taskTotal)
  const loaded = useStore((s) => s.taskListLoaded)
  const listError = useStore((s) => s.taskListError)
  const epoch = useStore((s) => s.taskQueryEpoch)
  const ensureTaskRange = useStore((s) => s.ensureTaskRange)
  const retryTasks = useStore((s) => s.retryTasks)
  const openTask = useStore((s) => s.openTask)
  const openTaskId = useStore((s) => s.openTaskId)
  const [retryError, setRetryError] = useState<CommandError | null>(null)

  const onRetry = useCallback(
    async (task: TaskRow) => {
      setRetryError(null)
      const reply = await retryTasks({ taskIds: [task.id] })
      if (!reply.ok)
        setRetryError({ ...reply.error, field: reply.error.field ?? `task ${task.id}` })
    },
    [retryTasks],
  )
  const columns = useMemo(() => taskColumns((t) => void onRetry(t)), [onRetry])

  // Only the loaded windows are table data; the virtualizer addresses rows by absolute index.
  const data = useMemo<IndexedTask[]>(() => {
    const out: IndexedTask[] = []
    for (const [key, rows] of Object.entries(windows)) {
      const base = Number(key) * WINDOW_SIZE
      rows.forEach((task, i) => out.push({ index: base + i, task }))
    }
    return out
  }, [windows])

  // eslint-disable-next-line react-hooks/incompatible-library -- no React Compiler here; the table instance is meant to be read on every render.
  const table = useReactTable({
    data,
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (r) => String(r.index),
  })
  const rowsById = table.getCoreRowModel().rowsById

  const scrollRef = useRef<HTMLDivElement>(null)
  const virtualizer = useVirtualizer({
    count: total,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
  })
  const items = virtualizer.getVirtualItems()
  const first = items[0]?.index ?? 0
  const last = items[items.length - 1]?.index ?? 0

  useEffect(() => {
    ensureTaskRange(first, last)
  }, [first, last, total, ensureTaskRange])

  useEffect(() => {
    virtualizer.scrollToOffset(0)
  }, [epoch, virtualizer])

  const headers = table.getHeaderGroups()[0]?.headers ?? []

  return (
    <section className="panel tasks">
      <div className="panel-head tasks-toolbar">
        <h2>
          Tasks{' '}
          <span className="muted" data-testid="task-total">
            {formatInt(total)}
          </span>
        </h2>
        <StatusFilter />
        <BatchFilter />
      </div>
      <InlineError error={listError} testId="task-list-error" />
      <InlineError error={retryError} testId="task-retry-error" />
      <div className="task-table" role="table" aria-rowcount={total} data-testid="task-table">
        <div className="tt-row tt-head" role="row">
          {headers.map((h) => (
            <div key={h.id} role="columnheader" className={`tt-cell col-${h.column.id}`}>
              {flexRender(h.column.columnDef.header, h.getContext())}
            </div>
          ))}
        </div>
        <div className="tt-body" ref={scrollRef}>
          {loaded && total === 0 && !listError ? (
            <p className="tt-empty">No tasks match this filter.</p>
          ) : null}
          <div className="tt-spacer" style={{ height: virtualizer.getTotalSize() }}>
            {items.map((vi) => {
              const row = rowsById[String(vi.index)]
              return row ? (
                <div
                  key={vi.key}
                  role="row"
                  aria-rowindex={vi.index + 1}
                  className={`tt-row status-${row.original.task.status}${openTaskId === row.original.task.id ? ' selected' : ''}`}
                  data-testid="task-row"
                  data-task-id={row.original.task.id}
                  style={{ transform: `translateY(${vi.start}px)` }}
                  tabIndex={0}
                  aria-selected={openTaskId === row.original.task.id}
                  onClick={() => openTask(row.original.task.id)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' || e.key === ' ') {
                      e.preventDefault()
                      openTask(row.original.task.id)
                    }
                  }}
                >
                  {row.getVisibleCells().map((cell) => (
                    <div key={cell.id} role="cell" className={`tt-cell col-${cell.column.id}`}>
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </div>
                  ))}
                </div>
              ) : (
                <div
                  key={vi.key}
                  role="row"
                  aria-rowindex={vi.index + 1}
                  className="tt-row tt-placeholder"
                  style={{ transform: `translateY(${vi.start}px)` }}
                >
                  <div className="tt-cell">{vi.index + 1}</div>
                  <div className="tt-cell skeleton" />
                </div>
              )
            })}
          </div>
        </div>
      </div>
    </section>
  )
}
