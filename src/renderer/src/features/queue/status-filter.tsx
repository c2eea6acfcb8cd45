import { useShallow } from 'zustand/react/shallow'
import { formatInt } from '../../lib/format'
import { useStore } from '../../store'
import { batchLabel } from './batch-rules'
import { statusCounts, TASK_STATUSES } from '../../store/task-windows'

export function StatusFilter() {
  const selected = useStore((s) => s.taskFilter.statuses)
  const counts = useStore(useShallow((s) => statusCounts(s.batches, s.taskFilter.batchId)))
  const toggle = useStore((s) => s.toggleStatusFilter)
  const setStatuses = useStore((s) => s.setStatusFilter)
  return (
    <div className="chips" role="group" aria-label="Filter by status">
      <button
        type="button"
        className={`chip${selected.length === 0 ? ' active' : ''}`}
        aria-pressed={selected.length === 0}
        onClick={() => setStatuses([])}
        data-testid="status-chip-all"
      >
        All
      </button>
      {TASK_STATUSES.map((s) => (
        <button
          key={s}
          type="button"
          className={`chip chip-${s}${selected.includes(s) ? ' active' : ''}`}
          aria-pressed={selected.includes(s)}
          onClick={() => toggle(s)}
          data-testid={`status-chip-${s}`}
        >
          {s} <span className="chip-count">{formatInt(counts[s])}</span>
        </button>
      ))}
    </div>
  )
}

export function BatchFilter() {
  const batches = useStore((s) => s.batches)
  const batchId = useStore((s) => s.taskFilter.batchId)
  const setBatchFilter = useStore((s) => s.setBatchFilter)
  return (
    <select
      className="batch-filter"
      value={batchId ?? ''}
      onChange={(e) => setBatchFilter(e.target.value || null)}
      data-testid="batch-filter"
      aria-label="Filter by batch"
    >
      <option value="">All batches</option>
      {batches.map((b) => (
        <option key={b.id} value={b.id}>
          {batchLabel(b)}
        </option>
      ))}
    </select>
  )
}
