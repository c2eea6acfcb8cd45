import { resolve } from 'node:path'
import type { BatchSummary, TypeRollupView } from '../../shared/contract'
import { costCaveats, microsToUsd } from '../../shared/money'
import { formatUsd } from '../../shared/format'
import { batchDiscount, ExportIncomplete, RECOVERY_HINT, type BatchDiscount } from '../engine'
import { discountJson, discountText } from './batch-api'
import { DatabaseError, dbPathFrom, openReader, runHint, table, thousands } from './common'
import { refuseDatabase, streamOut } from './stream-out'
import { say } from './terminal-text'

/** `pacer summary`: the rollup per task type, as a table or JSON. */
export async function summaryCommand(opts: { db?: string; json?: boolean }): Promise<number> {
  const engine = openReader(opts.db)
  try {
    const { byType, totals } = await engine.handlers['ledger:rollup']({})
    const discount = batchDiscount(engine.db, null)
    if (opts.json) {
      const viaBatch = discount.calls > 0 ? { viaBatch: discountJson(discount) } : {}
      say.out(
        `${JSON.stringify({ byType: byType.map(rollupJson), totals: rollupJson(totals), ...viaBatch, dbPath: engine.dbPath })}\n`,
      )
      return 0
    }
    if (byType.length === 0) {
      say.out(`the ledger at ${engine.dbPath} is empty: ${runHint(opts.db, engine.dbPath)}\n`)
      return 0
    }
    say.out(
      `${table(SUMMARY_HEADERS, [
        ...byType.map(summaryRow),
        summaryRow({ ...totals, taskType: 'TOTAL' }),
      ])}\n${cacheLine(totals)}${batchLine(totals.savedMicros, discount)}`,
    )
    return 0
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** A rollup as `pacer summary --json` prints it. */
export function rollupJson(r: TypeRollupView) {
  return {
    taskType: r.taskType,
    runs: r.runs,
    executed: r.executed,
    reused: r.reused,
    duplicates: r.duplicates,
    replayed: r.replayed,
    avgInputTokens: r.avgInputTokens,
    inputTokens: r.inputTokens,
    cachedInputTokens: r.cachedInputTokens,
    cacheWriteTokens: r.cacheWriteTokens,
    outputTokens: r.outputTokens,
    totalTokens: r.totalTokens,
    costUsd: microsToUsd(r.costMicros),
    costMicros: r.costMicros,
    savedUsd: microsToUsd(r.savedMicros),
    savedMicros: r.savedMicros,
    wastedUsd: microsToUsd(r.wastedMicros),
    wastedMicros: r.wastedMicros,
    cacheSavedUsd: microsToUsd(r.cacheSavedMicros),
    cacheSavedMicros: r.cacheSavedMicros,
    cacheWriteExtraUsd: microsToUsd(r.cacheWriteExtraMicros),
    cacheWriteExtraMicros: r.cacheWriteExtraMicros,
    unpricedCalls: r.unpricedCalls,
    estimatedCalls: r.estimatedCalls,
    throttled: r.throttled,
    errors: r.errors,
    abandoned: r.abandoned,
    // Last, so parsers of the earlier fields are not moved (migration 20).
    batchCalls: r.batchCalls,
    batchCostUsd: microsToUsd(r.batchCostMicros),
    batchCostMicros: r.batchCostMicros,
    batchSavedUsd: microsToUsd(r.batchSavedMicros),
    batchSavedMicros: r.batchSavedMicros,
  }
}

/** The columns of `pacer summary`'s table. */
export const SUMMARY_HEADERS = [
  'task type',
  'runs',
  'executed',
  'reused',
  'duplicates',
  'replayed',
  'avg input',
  'total tokens',
  'cost',
  'saved',
  'wasted',
  'cache saved',
  // What the batch APIs' discount saved (list − batch price), beside dedup's 'saved'; last.
  'batch saved',
]

/** One line of `pacer summary`'s table. */
export function summaryRow(r: TypeRollupView): (string | number)[] {
  return [
    r.taskType,
    r.runs,
    r.executed,
    r.reused,
    r.duplicates,
    r.replayed,
    thousands(r.avgInputTokens),
    thousands(r.totalTokens),
    formatUsd(r.costMicros) + costCaveats(r.estimatedCalls, r.unpricedCalls),
    formatUsd(r.savedMicros),
    formatUsd(r.wastedMicros),
    // Net: what cache reads saved minus what cache writes cost above the input price.
    formatUsd(r.cacheSavedMicros - r.cacheWriteExtraMicros),
    formatUsd(r.batchSavedMicros),
  ]
}

/** What the batch APIs' discount saved, beside what dedup saved; nothing when no call went so. */
function batchLine(dedupMicros: number | null, d: BatchDiscount): string {
  if (d.calls === 0) return ''
  const dedup = dedupMicros === null ? 'unknown' : formatUsd(dedupMicros)
  return `via batch: ${discountText(d)} (dedup saved ${dedup})\n`
}

/** The prompt cache's part of the totals, one line; nothing when no call used a cache. */
export function cacheLine(t: Omit<TypeRollupView, 'taskType'>): string {
  if (t.cachedInputTokens === 0 && t.cacheWriteTokens === 0) return ''
  return (
    `prompt cache: ${thousands(t.cachedInputTokens)} input tokens read from it ` +
    `(saved ${formatUsd(t.cacheSavedMicros)}), ${thousands(t.cacheWriteTokens)} written to it ` +
    `(${formatUsd(t.cacheWriteExtraMicros)} above the input price): ` +
    `net ${formatUsd(t.cacheSavedMicros - t.cacheWriteExtraMicros)}\n`
  )
}

/** `pacer export --out FILE.csv`: streams the ledger (events or summary) to a file; `-` is stdout. */
export async function exportCommand(opts: {
  db?: string
  out: string
  kind: 'events' | 'summary'
}): Promise<number> {
  // Before the database is opened: opening it read only leaves its -wal and -shm behind.
  refuseDatabase(opts.out, dbPathFrom(opts.db))
  const engine = openReader(opts.db)
  try {
    const done = await streamOut(opts.out, (out) => engine.exportCsv(opts.kind, out), engine.dbPath)
    if (done) say.err(`wrote ${done.rows} ${opts.kind} row(s) to ${done.where}\n`)
    return 0
  } catch (err) {
    // Never done with rows missing: the count written, SQLite's reason, and the way out (exit 3).
    if (!(err instanceof ExportIncomplete)) throw err
    const where = opts.out === '-' ? 'stdout' : resolve(opts.out)
    throw new DatabaseError(
      `export incomplete: wrote ${err.rows} ${opts.kind} row(s) to ${where}, but not every row ` +
        `could be read (${err.code}: ${err.message}); ${RECOVERY_HINT}, then export that`,
    )
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** `pacer batches`: what is queued, running, interrupted or done, with task counts. */
export async function batchesCommand(opts: { db?: string; json?: boolean }): Promise<number> {
  const engine = openReader(opts.db)
  try {
    const batches = await engine.handlers['batches:list']({})
    if (opts.json) {
      say.out(`${JSON.stringify({ batches })}\n`)
      return 0
    }
    if (batches.length === 0) {
      say.out(`no batches in ${engine.dbPath}: ${runHint(opts.db, engine.dbPath)}\n`)
      return 0
    }
    const rows = batches.map((b) => [
      b.id,
      b.name,
      b.state,
      b.total,
      b.counts.succeeded,
      b.counts.reused,
      b.counts.failed,
      b.counts.cancelled,
      b.counts.queued + b.counts.running,
      ownerCell(b),
      new Date(b.createdAt).toISOString().replace('T', ' ').slice(0, 19),
    ])
    say.out(
      `${table(
        [
          'batch',
          'name',
          'state',
          'tasks',
          'succeeded',
          'reused',
          'failed',
          'cancelled',
          'left',
          'owner',
          'created (UTC)',
        ],
        rows,
      )}\n`,
    )
    // Why a batch stopped with tasks left: what to fix before running it again.
    for (const b of batches) {
      if (b.stopReason) say.out(`${b.id}: ${b.stopReason}\n`)
      else if (b.state === 'interrupted' && b.owner?.gone) {
        say.out(`${b.id}: its run is gone (${b.owner.gone}): run the same command to resume it\n`)
      }
    }
    return 0
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/**
 * Who drives a batch: `pid@host`, `(gone)` when that process is and the batch is not over;
 * `console` for the console's.
 */
function ownerCell(b: BatchSummary): string {
  if (!b.owner) return 'console'
  const who = `${b.owner.pid ?? '?'}@${b.owner.host ?? '?'}`
  const over = b.state === 'done' || b.state === 'cancelled'
  return b.owner.alive || over ? who : `${who} (gone)`
}
