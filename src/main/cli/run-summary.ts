// What `pacer run` reports at the end: the batch's totals from the ledger and the queue, as JSON
// (--json) or as the lines a person reads.
import type { BatchSummary } from '../../shared/contract'
import { costCaveats, microsToUsd, usdToMicros } from '../../shared/money'
import { formatUsd } from '../../shared/format'
import type { Engine, PartitionStop } from '../engine'
import { failureReport, reportLines, type FailureReport } from './run-report'
import { say } from './terminal-text'

/** What `pacer run --json` prints: the batch's totals, and what went wrong. */
export interface RunSummary extends FailureReport {
  batchId: string
  dbPath: string
  tasks: number
  distinct: number
  executed: number
  reused: number
  failed: number
  cancelled: number
  /** Tasks whose answer the output cap cut short (finish reason length / max_tokens). */
  truncated: number
  duplicates: number
  inputTokens: number
  outputTokens: number
  costUsd: number | null
  /** Calls whose usage was estimated (the provider reported none): their cost is an estimate. */
  estimatedCalls: number
  /** Calls on a model without a price: their cost is not in costUsd. */
  unpricedCalls: number
  savedUsd: number | null
  wastedUsd: number
  throttled: number
  abandoned: number
  elapsedMs: number
  /** From the start to the batch queued (read, validated, fingerprinted, inserted). */
  enqueueMs: number
  /** Driving the batch to its end. */
  runMs: number
  interrupted: boolean
  resumed: boolean
  skippedLines: number
  /**
   * The run's spend cap (--budget), when the batch has one: the cap, what its settled calls cost,
   * and why a cap (its own, or a kept one: capUsd null when it has none) stopped the run.
   */
  budget?: {
    capUsd: number | null
    spentUsd: number
    stoppedBy: string | null
    /** Stopped by a cap: the forecast cost of the held tasks (null: a model has no price). */
    restForecastUsd?: number | null
  }
}

export function summarize(
  engine: Engine,
  batchId: string,
  b: BatchSummary | null,
  stops: readonly PartitionStop[],
  extra: {
    started: number
    enqueueMs: number
    runMs: number
    interrupted: boolean
    resumed: boolean
    skippedLines: number
    distinct: number
  },
): RunSummary {
  const t = engine.ledger.totals({ batchId })
  return {
    batchId,
    dbPath: engine.dbPath,
    tasks: b?.total ?? 0,
    distinct: extra.distinct,
    executed: t.executed,
    reused: t.reused,
    failed: b?.counts.failed ?? 0,
    cancelled: b?.counts.cancelled ?? 0,
    truncated: engine.results.truncatedCount(batchId),
    duplicates: t.duplicates,
    inputTokens: t.inputTokens,
    outputTokens: t.outputTokens,
    costUsd: microsToUsd(t.costMicros),
    estimatedCalls: t.estimatedCalls,
    unpricedCalls: t.unpricedCalls,
    savedUsd: microsToUsd(t.savedMicros),
    wastedUsd: microsToUsd(t.wastedMicros) ?? 0,
    throttled: t.throttled,
    abandoned: t.abandoned,
    elapsedMs: Date.now() - extra.started,
    enqueueMs: extra.enqueueMs,
    runMs: extra.runMs,
    interrupted: extra.interrupted,
    resumed: extra.resumed,
    skippedLines: extra.skippedLines,
    ...failureReport(engine, batchId, stops, b?.counts.queued ?? 0),
  }
}

export function printSummary(s: RunSummary, file: string): void {
  const micros = (usdValue: number | null) =>
    formatUsd(usdValue === null ? null : usdToMicros(usdValue))
  const lines = [
    `${s.stopped.length > 0 ? 'stopped' : s.interrupted ? 'interrupted' : 'done'}: ${file} (batch ${s.batchId}) in ${(s.elapsedMs / 1000).toFixed(1)} s`,
    `  tasks ${s.tasks} (${s.distinct} distinct): executed ${s.executed}, reused ${s.reused}, failed ${s.failed}` +
      (s.cancelled ? `, cancelled ${s.cancelled}` : '') +
      (s.truncated ? `, truncated ${s.truncated}` : '') +
      (s.duplicates ? `, duplicates ${s.duplicates}` : ''),
    `  tokens in ${s.inputTokens.toLocaleString('en-US')} / out ${s.outputTokens.toLocaleString('en-US')}, throttled calls ${s.throttled}`,
    `  cost ${micros(s.costUsd)}${costCaveats(s.estimatedCalls, s.unpricedCalls)}, saved by dedup ${micros(s.savedUsd)}, wasted by duplicates ${micros(s.wastedUsd)}`,
    ...reportLines(s),
    `  ledger: ${s.dbPath}`,
  ]
  if (s.truncated) {
    lines.push(
      `  ${s.truncated} answer(s) hit the output cap (finish reason length): see pacer results; their duplicates ran again (--accept-truncated reuses them)`,
    )
  }
  if (s.interrupted && s.stopped.length === 0)
    lines.push('  run the same command again to resume: completed tasks are reused, not re-billed')
  say.err(`${lines.join('\n')}\n`)
}
