import { createColumnHelper } from '@tanstack/react-table'
import type { TaskRow } from '../../../../shared/contract'
import { StatusBadge } from '../../components/status-badge'
import { formatClock, formatDuration } from '../../lib/format'
import { useStore } from '../../store'
import { isRetryable } from '../../store/task-windows'

/** A loaded row and its absolute position in the filtered list (the virtualizer's index). */
export interface IndexedTask {
  index: number
  task: TaskRow
}

const col = createColumnHelper<IndexedTask>()

function BatchName({ id }: { id: string }) {
  const name = useStore((s) => s.batches.find((b) => b.id === id)?.name)
  return <span title={id}>{name || id}</span>
}

export function taskColumns(onRetry: (task: TaskRow) => void) {
  return [
    col.accessor((r) => r.task.id, { id: 'id', header: '#', cell: (c) => c.getValue() }),
    col.accessor((r) => r.task.batchId, {
      id: 'batch',
      header: 'Batch',
      cell: (c) => <BatchName id={c.getValue()} />,
    }),
    col.accessor((r) => r.task.seq, { id: 'seq', header: 'Line', cell: (c) => c.getValue() }),
    col.accessor((r) => r.task.type, { id: 'type', header: 'Type', cell: (c) => c.getValue() }),
    col.accessor((r) => r.task.status, {
      id: 'status',
      header: 'Status',
      cell: (c) => (
        <span data-testid="task-status" data-status={c.getValue()}>
          <StatusBadge status={c.getValue()} />
        </span>
      ),
    }),
    col.accessor((r) => `${r.task.provider} · ${r.task.model}`, {
      id: 'model',
      header: 'Provider · model',
      cell: (c) => <span title={c.getValue()}>{c.getValue()}</span>,
    }),
    col.accessor((r) => r.task.steps, { id: 'steps', header: 'Steps', cell: (c) => c.getValue() }),
    col.accessor((r) => r.task.attempts, {
      id: 'attempts',
      header: 'Tries',
      cell: (c) => c.getValue(),
    }),
    col.accessor((r) => r.task.startedAt, {
      id: 'started',
      header: 'Started',
      cell: (c) => {
        const v = c.getValue()
        return v === null ? '—' : formatClock(v)
      },
    }),
    col.accessor((r) => r.task, {
      id: 'duration',
      header: 'Took',
      cell: (c) => {
        const t = c.getValue()
        return t.startedAt !== null && t.finishedAt !== null
          ? formatDuration(t.finishedAt - t.startedAt)
          : '—'
      },
    }),
    col.accessor((r) => r.task.error, {
      id: 'error',
      header: 'Error',
      cell: (c) => {
        const v = c.getValue()
        return v ? (
          <span className="cell-error" title={v}>
            {v}
          </span>
        ) : null
      },
    }),
    col.display({
      id: 'actions',
      header: '',
      cell: (c) => {
        const task = c.row.original.task
        return isRetryable(task.status) ? (
          <button
            type="button"
            className="button small"
            onClick={(e) => {
              // Retrying is not opening the task's detail.
              e.stopPropagation()
              onRetry(task)
            }}
            data-testid="task-retry"
          >
            Retry
          </button>
        ) : null
      },
    }),
  ]
}
