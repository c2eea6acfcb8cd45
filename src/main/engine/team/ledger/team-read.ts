// Reading the team ledger: the whole stream in pages (XRANGE, up to the entry that was last when
// the read began), each source's rows once. A source appends its rows in id order and a re-append
// (after Redis lost a cursor) starts again from its first row, so a row at or below the highest id
// already seen of its source is one seen before: the only state kept is one number per source.
// The summary rolls up while paging; the CSV streams, a page at a time.
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { TypeRollupView } from '../../../../shared/contract'
import { csvRecords, csvRecordsQuick } from '../../core/csv'
import { TEAM_EVENT_COLUMNS, TEAM_SUMMARY_COLUMNS } from '../../ledger/csv'
import { batchSavedOf } from '../../ledger/batch-discount'
import { byCost, totalOf } from '../../ledger/ledger'
import { toTotals } from '../../ledger/queries'
import { BATCH_PRICE_SUFFIX } from '../../pricing/batch-rates'
import { sumAll, sumByType, type RawSums } from '../../ledger/rollup-plans'
import { decodeEntry, type TeamRow } from './entries'
import type { RedisLedgerStream } from './stream'

/** Entries per XRANGE page: about 1 MB of reply. */
const TEAM_PAGE = 2000

/** Spend of one task type on one machine. */
export type MachineRollup = TypeRollupView & { machine: string }

export interface TeamRollup {
  byType: TypeRollupView[]
  /** Per task type and machine, the task types in byType's order, machines by name. */
  byMachine: MachineRollup[]
  totals: TypeRollupView
  machines: string[]
  /** Distinct rows read (entries appended twice counted once). */
  rows: number
}

/** The team's rows, each once, a page at a time, as the stream stood when the read began. */
async function* teamRows(
  stream: RedisLedgerStream,
  pageSize = TEAM_PAGE,
): AsyncGenerator<TeamRow[]> {
  const end = await stream.lastId()
  if (end === null) return
  const seen = new Map<string, number>()
  for (let after = '-'; ;) {
    const page = await stream.page(after, end, pageSize)
    const rows: TeamRow[] = []
    for (const [id, fields] of page) {
      const row = decodeEntry(id, fields)
      if (row.id <= (seen.get(row.source) ?? 0)) continue
      seen.set(row.source, row.id)
      rows.push(row)
    }
    if (rows.length > 0) yield rows
    const last = page.at(-1)
    if (page.length < pageSize || !last || last[0] === end) return
    after = last[0]
  }
}

type Sums = RawSums

/** One row into sums, as rowTotalsSql and executionsSql (ledger-queries.ts) count it. */
function add(s: Sums, r: TeamRow): void {
  const billed = r.inputTokens + r.outputTokens > 0
  s.reused += r.outcome === 'reused' ? 1 : 0
  s.inputTokens += r.inputTokens
  s.cachedInputTokens += r.cachedInputTokens
  s.cacheWriteTokens += r.cacheWriteTokens
  s.outputTokens += r.outputTokens
  s.costMicros += r.costMicros ?? 0
  if (billed && r.costMicros !== null) s.pricedCalls++
  if (billed && r.costMicros === null) s.unpricedCalls++
  if (r.outcome === 'reused' || r.outcome === 'replayed') s.savedMicros += r.savedMicros ?? 0
  if (r.outcome === 'reused' && r.savedMicros === null) s.unpricedReuses++
  if (r.outcome === 'throttled') s.throttled++
  if (r.outcome === 'error' || r.outcome === 'timeout') s.errors++
  if (r.outcome === 'abandoned') s.abandoned++
  s.estimatedCalls += r.estimated
  s.cacheSavedMicros += r.cacheSavedMicros ?? 0
  s.cacheWriteExtraMicros += r.cacheWriteExtraMicros ?? 0
  if (r.outcome === 'replayed') s.replayed++
  if (r.priceVersion?.endsWith(BATCH_PRICE_SUFFIX)) {
    if (billed) s.batchCalls++
    s.batchCostMicros += r.costMicros ?? 0
    s.batchSavedMicros += batchSavedOf(r) ?? 0
  }
  s.executed += r.executed
  s.duplicates += r.duplicates
  s.wastedMicros += r.wastedMicros
  if ((r.outcome === 'executed' || r.outcome === 'duplicate') && r.reason === null) {
    s.executionInputTokens += r.inputTokens
  }
}

/** The team's spend per task type, and per task type and machine, from one pass over the stream. */
export async function teamRollup(stream: RedisLedgerStream): Promise<TeamRollup> {
  const byKey = new Map<string, { machine: string; sums: Sums }>()
  let rows = 0
  for await (const page of teamRows(stream)) {
    rows += page.length
    for (const r of page) {
      const key = `${r.taskType}\u0000${r.machine}`
      let at = byKey.get(key)
      if (!at) {
        at = { machine: r.machine, sums: { ...sumAll([]), taskType: r.taskType } }
        byKey.set(key, at)
      }
      add(at.sums, r)
    }
  }
  const parts = [...byKey.values()]
  const perType = sumByType([parts.map((p) => p.sums)])
  const byType = byCost(perType)
  const order = new Map(byType.map((t, i) => [t.taskType, i]))
  const byMachine = parts
    .map(({ machine, sums }) => ({ taskType: sums.taskType, ...toTotals(sums, sums), machine }))
    .sort(
      (a, b) =>
        order.get(a.taskType)! - order.get(b.taskType)! ||
        (a.machine < b.machine ? -1 : a.machine > b.machine ? 1 : 0),
    )
  const machines = [...new Set(byMachine.map((m) => m.machine))].sort()
  const totals = { taskType: 'total', ...totalOf(perType) }
  return { byType, byMachine, totals, machines, rows }
}

/**
 * Streams the team ledger as CSV to `out` (ended when done): 'events' one line per row with its
 * machine and source, 'summary' one line per task type and machine.
 */
export async function teamCsv(
  stream: RedisLedgerStream,
  kind: 'events' | 'summary',
  out: NodeJS.WritableStream,
): Promise<{ rows: number }> {
  let rows = 0
  async function* chunks(): AsyncGenerator<string> {
    if (kind === 'summary') {
      const { byMachine } = await teamRollup(stream)
      rows = byMachine.length
      yield `${TEAM_SUMMARY_COLUMNS.map((c) => c.header).join(',')}\r\n`
      if (byMachine.length > 0) yield csvRecords(byMachine, TEAM_SUMMARY_COLUMNS)
      return
    }
    yield `${TEAM_EVENT_COLUMNS.map((c) => c.header).join(',')}\r\n`
    for await (const page of teamRows(stream)) {
      rows += page.length
      yield csvRecordsQuick(page, TEAM_EVENT_COLUMNS)
    }
  }
  if (kind !== 'events' && kind !== 'summary') {
    throw new TypeError(
      `CSV export kind must be 'events' or 'summary', got ${JSON.stringify(kind)}`,
    )
  }
  await pipeline(Readable.from(chunks()), out)
  return { rows }
}

/**
 * What the team's rows in a window and scope cost (each row once): where a team cap set
 * mid-period starts its spend. Rows not yet appended (a quarter-second behind their commit, or
 * waiting on a machine while the store was away) are not in it.
 */
export async function teamSpend(
  stream: RedisLedgerStream,
  scope: {
    start: number
    end: number
    taskType: string | null
    provider: string | null
    model: string | null
  },
): Promise<number> {
  let sum = 0
  for await (const page of teamRows(stream)) {
    for (const r of page) {
      if (r.ts < scope.start || r.ts >= scope.end || r.costMicros === null) continue
      if (scope.taskType !== null && r.taskType !== scope.taskType) continue
      if (scope.provider !== null && r.provider !== scope.provider) continue
      if (scope.model !== null && r.model !== scope.model) continue
      sum += r.costMicros
    }
  }
  return sum
}
