import type {
  CommandError,
  CommandResults,
  CostPoint,
  LedgerScope,
  Reply,
  TeamLedgerView,
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
  /** This machine's ledger, or the team store's (team mode only). */
  spendScope: LedgerScope
  /** The team's ledger, when spendScope is 'team'. */
  teamLedger: TeamLedgerView | null

  setSpendRange(range: SpendRangeId): void
  setSpendScope(scope: LedgerScope): void
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
    spendScope: 'machine',
    teamLedger: null,

    setSpendRange: (spendRange) => {
      set({ spendRange })
      void get().refreshSpend()
    },

    setSpendScope: (spendScope) => {
      set({ spendScope, spendError: null })
      void get().refreshSpend()
    },

    refreshSpend: async () => {
      const id = ++seq
      if (get().spendScope === 'team') {
        // The whole team ledger, read from the team store (no time range: it is exported whole).
        set({ spendLoading: true, spendStale: false })
        const team = await call((api) => api.teamLedger({}))
        if (id !== seq) return
        set({
          spendLoading: false,
          spendError: team.ok ? null : team.error,
          ...(team.ok ? { teamLedger: team.value } : {}),
        })
        return
      }
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
      if (get().spendScope === 'team') {
        return call((api) => api.exportLedger({ kind, scope: 'team' }))
      }
      const since = get().spendSince
      return call((api) => api.exportLedger({ kind, ...(since === undefined ? {} : { since }) }))
    },
  }
}
