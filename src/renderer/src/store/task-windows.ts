/**
 * The task table's paging model, as pure functions. The table may address 100k+ rows but only
 * holds a few fixed windows of them, fetched with listTasks(offset, limit) as the viewport moves.
 */
import type { BatchSummary, TaskRow, TaskStatus } from '../../../shared/contract'

export const WINDOW_SIZE = 500
/** Windows kept beyond the ones in view; older ones are dropped to keep memory flat. */
export const MAX_WINDOWS = 12

export interface TaskFilter {
  /** Empty = every status. */
  statuses: TaskStatus[]
  batchId: string | null
}

export type TaskWindows = Readonly<Record<number, readonly TaskRow[]>>

/** The window keys that cover [start, end] plus half a window of margin on each side. */
export function windowKeysFor(start: number, end: number, total: number): number[] {
  if (total <= 0) return [0]
  const margin = WINDOW_SIZE / 2
  const first = Math.floor(Math.max(0, start - margin) / WINDOW_SIZE)
  const last = Math.floor(Math.min(total - 1, end + margin) / WINDOW_SIZE)
  const keys: number[] = []
  for (let k = first; k <= Math.max(first, last); k++) keys.push(k)
  return keys
}

function matchesFilter(row: TaskRow, filter: TaskFilter): boolean {
  if (filter.batchId !== null && row.batchId !== filter.batchId) return false
  return filter.statuses.length === 0 || filter.statuses.includes(row.status)
}

/**
 * Replaces loaded rows by id with their newer versions. Returns the same object when nothing
 * loaded changed, so subscribers do not re-render for rows that are off screen.
 */
export function mergeRows(windows: TaskWindows, changed: readonly TaskRow[]): TaskWindows {
  if (changed.length === 0) return windows
  const byId = new Map(changed.map((r) => [r.id, r]))
  let out: Record<number, readonly TaskRow[]> | null = null
  for (const [key, rows] of Object.entries(windows)) {
    let copy: TaskRow[] | null = null
    rows.forEach((row, i) => {
      const next = byId.get(row.id)
      if (next && next !== row) {
        copy ??= rows.slice()
        copy[i] = next
      }
    })
    if (copy) {
      out ??= { ...windows }
      out[Number(key)] = copy
    }
  }
  return out ?? windows
}

/**
 * True when a change moves rows in or out of a filtered view: positions shift, so merging in
 * place would show the wrong rows and the visible windows must be fetched again.
 */
export function changesMembership(
  windows: TaskWindows,
  changed: readonly TaskRow[],
  filter: TaskFilter,
): boolean {
  if (filter.statuses.length === 0) return false
  const loaded = new Map<number, TaskRow>()
  for (const rows of Object.values(windows)) for (const r of rows) loaded.set(r.id, r)
  return changed.some((row) => {
    if (filter.batchId !== null && row.batchId !== filter.batchId) return false
    const before = loaded.get(row.id)
    const nowIn = matchesFilter(row, filter)
    return before ? !nowIn : nowIn
  })
}

/** How many tasks the filter selects, from the batches' status counts (kept live by events). */
export function countTasks(batches: readonly BatchSummary[], filter: TaskFilter): number {
  let n = 0
  for (const b of batches) {
    if (filter.batchId !== null && b.id !== filter.batchId) continue
    if (filter.statuses.length === 0) n += b.total
    else for (const s of filter.statuses) n += b.counts[s]
  }
  return n
}

/** Drops windows far from the ones in view once more than MAX_WINDOWS are held. */
export function evictWindows(windows: TaskWindows, keep: readonly number[]): TaskWindows {
  const keys = Object.keys(windows).map(Number)
  if (keys.length <= MAX_WINDOWS) return windows
  const center = keep.length ? (keep[0]! + keep[keep.length - 1]!) / 2 : 0
  const byDistance = keys
    .filter((k) => !keep.includes(k))
    .sort((a, b) => Math.abs(b - center) - Math.abs(a - center))
  const out: Record<number, readonly TaskRow[]> = { ...windows }
  for (const k of byDistance.slice(0, keys.length - MAX_WINDOWS)) delete out[k]
  return out
}

export const TASK_STATUSES: readonly TaskStatus[] = [
  'queued',
  'running',
  'succeeded',
  'reused',
  'failed',
  'cancelled',
]

/** Tasks per status over the batches in view (all batches, or the one filtered on). */
export function statusCounts(
  batches: readonly BatchSummary[],
  batchId: string | null,
): Record<TaskStatus, number> {
  const out: Record<TaskStatus, number> = {
    queued: 0,
    running: 0,
    succeeded: 0,
    reused: 0,
    failed: 0,
    cancelled: 0,
  }
  for (const b of batches) {
    if (batchId !== null && b.id !== batchId) continue
    for (const s of TASK_STATUSES) out[s] += b.counts[s]
  }
  return out
}

/** Only failed and cancelled tasks can be queued again; the others either ran or will. */
export function isRetryable(status: TaskStatus): boolean {
  return status === 'failed' || status === 'cancelled'
}
