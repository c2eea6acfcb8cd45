import type {
  AimdParamsPatch,
  LimitChangeView,
  PartitionView,
  PauseView,
  Reply,
} from '../../../shared/contract'
import { call } from './api'
import { mergeHistory, seedSamples } from './samples'
import type { SliceCreator } from './types'

/** The partition name that addresses every partition at once in setScheduler. */
export const ALL_PARTITIONS = '*'
export type ChartWindow = 'fit' | '2m' | '15m' | '1h'
const MAX_CHANGES = 200

export interface ConcurrencySlice {
  partitions: PartitionView[]
  schedulerLoaded: boolean
  /** Newest first. */
  limitChanges: LimitChangeView[]
  /** Partition pauses, newest first: the change list shows them, the charts shade them. */
  pauses: PauseView[]
  applyToAll: boolean
  /** The charts' time window; 'fit': from the first sample of the last hour (at least 2 min). */
  chartWindow: ChartWindow
  /** Bumped when the database's history was merged into the charts (they re-sort). */
  historyLoaded: number
  /**
   * Accepted parameter changes per partition, counted: a slider whose own change was refused
   * drops its error once another change to its partition goes through.
   */
  paramChanges: Record<string, number>

  loadScheduler(): Promise<void>
  setPartitions(partitions: readonly PartitionView[]): void
  addLimitChanges(changes: readonly LimitChangeView[]): void
  addPauses(pauses: readonly PauseView[]): void
  setApplyToAll(on: boolean): void
  setChartWindow(window: ChartWindow): void
  setSchedulerParams(partition: string, params: AimdParamsPatch): Promise<Reply<PartitionView[]>>
  /** Lets a partition a setup failure stopped send again (the operator fixed the cause). */
  resumePartition(partition: string): Promise<void>
}

function mergePartitions(
  current: readonly PartitionView[],
  next: readonly PartitionView[],
): PartitionView[] {
  const byName = new Map(current.map((p) => [p.partition, p]))
  for (const p of next) byName.set(p.partition, p)
  return [...byName.values()].sort((a, b) => a.partition.localeCompare(b.partition))
}

export const createConcurrencySlice: SliceCreator<ConcurrencySlice> = (set, get) => ({
  partitions: [],
  schedulerLoaded: false,
  limitChanges: [],
  pauses: [],
  applyToAll: false,
  chartWindow: 'fit',
  historyLoaded: 0,
  paramChanges: {},

  loadScheduler: async () => {
    const reply = await call((api) => api.getScheduler({}))
    if (!reply.ok) {
      get().reportError('Could not load the scheduler', reply.error)
      return
    }
    const seeded = reply.value
      .map((p) => p.lastChange)
      .filter((c): c is LimitChangeView => c !== null)
    set({ partitions: mergePartitions(get().partitions, reply.value), schedulerLoaded: true })
    if (get().limitChanges.length === 0) get().addLimitChanges(seeded)
    // A pause under way when the page opened: its start is unknown, so it is shaded from now.
    const now = Date.now()
    get().addPauses(
      reply.value
        .filter((p) => p.pausedUntil !== null && p.pausedUntil > now)
        .filter((p) => !get().pauses.some((x) => x.partition === p.partition && x.until >= now))
        .map((p) => pauseOf(p.partition, now, p.pausedUntil as number, p.pauseReason)),
    )
    // What the database kept: a chart opened after a run, or in a fresh console, has its hour.
    const history = await call((api) => api.getSchedulerHistory({}))
    if (history.ok) {
      mergeHistory(history.value.samples)
      get().addPauses(history.value.pauses)
      set({ historyLoaded: get().historyLoaded + 1 })
    }
    // An idle engine sends no samples: without a first point a freshly opened chart is blank.
    seedSamples(reply.value, Date.now())
  },

  setPartitions: (partitions) =>
    set({ partitions: mergePartitions(get().partitions, partitions), schedulerLoaded: true }),

  addLimitChanges: (changes) => {
    if (changes.length === 0) return
    const seen = new Set(get().limitChanges.map((c) => `${c.partition}|${c.ts}|${c.to}`))
    const fresh = changes.filter((c) => !seen.has(`${c.partition}|${c.ts}|${c.to}`))
    if (fresh.length === 0) return
    const merged = [...fresh, ...get().limitChanges].sort((a, b) => b.ts - a.ts)
    set({ limitChanges: merged.slice(0, MAX_CHANGES) })
  },

  addPauses: (pauses) => {
    if (pauses.length === 0) return
    const key = (p: PauseView) => `${p.partition}|${p.ts}|${p.until}`
    const seen = new Set(get().pauses.map(key))
    const fresh = pauses.filter((p) => !seen.has(key(p)))
    if (fresh.length === 0) return
    const merged = [...fresh, ...get().pauses].sort((a, b) => b.ts - a.ts)
    set({ pauses: merged.slice(0, MAX_CHANGES) })
  },

  setApplyToAll: (applyToAll) => set({ applyToAll }),
  setChartWindow: (chartWindow) => set({ chartWindow }),

  setSchedulerParams: async (partition, params) => {
    const reply = await call((api) => api.setScheduler({ partition, params }))
    if (!reply.ok) return reply
    get().setPartitions(reply.value)
    const changed = partition === ALL_PARTITIONS ? reply.value.map((p) => p.partition) : [partition]
    const paramChanges = { ...get().paramChanges }
    for (const name of changed) paramChanges[name] = (paramChanges[name] ?? 0) + 1
    set({ paramChanges })
    return reply
  },

  resumePartition: async (partition) => {
    const reply = await call((api) => api.resumePartition({ partition }))
    if (!reply.ok) {
      get().reportError(`Could not resume ${partition}`, reply.error)
      return
    }
    set({ partitions: replacePartitions(get().partitions, reply.value) })
  },
})

/** A stopped partition's view loses its stop once resumed: the merge must not keep the old one. */
function replacePartitions(
  current: readonly PartitionView[],
  next: readonly PartitionView[],
): PartitionView[] {
  const names = new Set(next.map((p) => p.partition))
  return mergePartitions(
    current.filter((p) => !names.has(p.partition)),
    next,
  )
}

/** The pause under way at load: the partition's last reason is its own when it ends as it does. */
function pauseOf(partition: string, ts: number, until: number, lastReason?: string): PauseView {
  const iso = new Date(until).toISOString()
  const reason = lastReason?.startsWith(`paused until ${iso}`) ? lastReason : `paused until ${iso}`
  return { partition, ts, until, reason }
}
