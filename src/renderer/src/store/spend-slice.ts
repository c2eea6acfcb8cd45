import type {
  CommandError,
  CommandResults,
  CostPoint,
  Reply,
  TypeRollupView,
} from '../../../shared/contract'
import { call } from './api'
import type { SliceCreator } from './types'

export type SpendRangeId = '15m' | '1h' | '24h' | '7d' | 'all'

export interface SpendRange {
  id: SpendRangeId
  label: string
  /** How far back from now; null = the whole ledger. */
  spanMs: number | null
  /** Chart bucket: ~60–170 bars per range, readable without hiding bursts. */
  bucketMs: number
}

const MIN = 60_000
const HOUR = 60 * MIN

export const SPEND_RANGES: readonly SpendRange[] = [
  { id: '15m', label: 'Last 15 min', spanMs: 15 * MIN, bucketMs: 15_000 },
  { id: '1h', label: '1 h', spanMs: HOUR, bucketMs: MIN },
  { id: '24h', label: '24 h', spanMs: 24 * HOUR, bucketMs: 15 * MIN },
  { id: '7d', label: '7 d', spanMs: 7 * 24 * HOUR, bucketMs: 2 * HOUR },
  { id: 'all', label: 'All', spanMs: null, bucketMs: HOUR },
]

export function sinceFor(rangeId: SpendRangeId, now: number): number | undefined {
  const range = SPEND_RANGES.find((r) => r.id === rangeId)
  return range?.spanMs == null ? undefined : now - range.spanMs
}

export interface SpendSlice {
  spendRange: SpendRangeId
  rollup: CommandResults['ledger:rollup'] | null
  costOverTime: CostPoint[]
  /** The `since` the shown numbers were computed with (the export uses the same one). */
  spendSince: number | undefined
  spendError: CommandError | null
  spendLoading: boolean
  /** The ledger changed while Spend was not on screen: refresh when it is shown. */
  spendStale: boolean
  /** All-time totals, kept live from ledger events, for the header. */
  ledgerTotals: TypeRollupView | null

  setSpendRange(range: SpendRangeId): void
  refreshSpend(): Promise<void>
  setLedgerTotals(totals: TypeRollupView): void
  markSpendStale(): void
  exportLedger(kind: 'events' | 'summary'): Promise<Reply<CommandResults['ledger:export']>>
}

export const createSpendSlice: SliceCreator<SpendSlice> = (set, get) => {
  let seq = 0
  return {
    spendRange: '1h',
    rollup: null,
    costOverTime: [],
    spendSince: undefined,
    spendError: null,
    spendLoading: false,
    spendStale: true,
    ledgerTotals: null,

    setSpendRange: (spendRange) => {
      set({ spendRange })
      void get().refreshSpend()
    },

    refreshSpend: async () => {
      const id = ++seq
      const rangeId = get().spendRange
      const range = SPEND_RANGES.find((r) => r.id === rangeId) ?? SPEND_RANGES[1]!
      const since = sinceFor(rangeId, Date.now())
      const filter = since === undefined ? {} : { since }
      set({ spendLoading: true, spendStale: false })
      const [rollup, overTime] = await Promise.all([
        call((api) => api.ledgerRollup(filter)),
        call((api) => api.ledgerOverTime({ ...filter, bucketMs: range.bucketMs })),
      ])
      if (id !== seq) return
      const error = !rollup.ok ? rollup.error : !overTime.ok ? overTime.error : null
      set({
        spendLoading: false,
        spendError: error,
        spendSince: since,
        ...(rollup.ok ? { rollup: rollup.value } : {}),
        ...(overTime.ok ? { costOverTime: overTime.value } : {}),
        // With no time filter the rollup is the all-time total the header shows.
        ...(rollup.ok && since === undefined ? { ledgerTotals: rollup.value.totals } : {}),
      })
    },

    setLedgerTotals: (ledgerTotals) => set({ ledgerTotals }),
    markSpendStale: () => {
      if (!get().spendStale) set({ spendStale: true })
    },

    exportLedger: (kind) => {
      const since = get().spendSince
      return call((api) => api.exportLedger({ kind, ...(since === undefined ? {} : { since }) }))
    },
  }
}
