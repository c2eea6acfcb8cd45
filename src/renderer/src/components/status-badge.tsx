import type { BatchState, TaskStatus } from '../../../shared/contract'

export function StatusBadge({ status }: { status: TaskStatus | BatchState }) {
  return <span className={`badge badge-${status}`}>{status}</span>
}
