// `pacer run --batch-api`: what the run changes to send its calls as provider batches (half
// price, results within 24 hours), the lines that follow each remote batch, and what the
// discount saved at the end.
import { formatUsd } from '../../shared/format'
import { microsToUsd } from '../../shared/money'
import {
  BATCH_API_PROVIDERS,
  batchApiEngineOptions,
  batchDiscount,
  type BatchDiscount,
  type Engine,
  type EngineOptions,
  type ProviderBatchView,
} from '../engine'
import { UsageError } from './common'
import { say } from './terminal-text'

function envMs(name: string, fallback: number): number {
  const v = process.env[name]
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${name} must be a whole number of ms >= 1, got "${v}"`)
  return n
}

/** The engine options of a --batch-api run; a provider without batches is one usage line. */
export function batchEngineOptions(
  provider: string,
): Pick<EngineOptions, 'batchApi' | 'scheduler' | 'callTimeoutMs'> {
  if (!BATCH_API_PROVIDERS.includes(provider)) {
    throw new UsageError(
      `--batch-api needs --provider openai, anthropic or openai-compatible (got ${provider}): the simulator has no batch API`,
    )
  }
  // A batch takes minutes to hours: a poll a minute is plenty (PACER_BATCH_POLL_MS for tests).
  return batchApiEngineOptions({
    pollMs: envMs('PACER_BATCH_POLL_MS', 60_000),
    settleMs: envMs('PACER_BATCH_SETTLE_MS', 2_000),
  })
}

/** How long, in the largest two units. */
export function waited(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  if (h > 0) return `${h}h ${m}m`
  if (m > 0) return `${m}m ${s % 60}s`
  return `${s}s`
}

/** One remote batch on one line: its ids, state, counts and how long it has waited. */
export function batchLine(v: ProviderBatchView): string {
  const counts = v.counts
    ? Object.entries(v.counts)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')
    : 'no counts yet'
  const id = v.remoteId ?? `#${v.id} (not accepted)`
  const error = v.error ? `: ${v.error}` : ''
  return `${id} (${v.vendor} ${v.model}, ${v.requests} requests): ${v.status}${error}; ${counts}; ${v.ended ? 'took' : 'waiting'} ${waited(v.waitingMs)}`
}

/** Says each remote batch's state as it changes; returns the unsubscribe. */
export function followBatches(engine: Engine, json: boolean): () => void {
  const api = engine.batchApi
  if (!api || json) return () => {}
  const last = new Map<number, string>()
  const onStatus = (v: ProviderBatchView) => {
    const key = `${v.status} ${JSON.stringify(v.counts)}`
    if (last.get(v.id) === key) return
    last.set(v.id, key)
    say.err(`pacer: provider batch ${batchLine(v)}\n`)
  }
  const onWarning = (m: string) => say.err(`pacer: warning: ${m}\n`)
  api.on('status', onStatus)
  api.on('warning', onWarning)
  return () => {
    api.off('status', onStatus)
    api.off('warning', onWarning)
  }
}

/** The batch discount of the run's batch, for the summary. */
export function discountOf(engine: Engine, batchId: string): BatchDiscount {
  return batchDiscount(engine.db, batchId)
}

/** The discount in words: the calls via batch, their cost, the live price, what it saved. */
export function discountText(d: BatchDiscount): string {
  const saved = d.savedMicros === null ? 'unknown (a model is unpriced)' : formatUsd(d.savedMicros)
  const list = d.listMicros === null ? 'unpriced' : formatUsd(d.listMicros)
  return `${d.calls} calls at the batch rate ${formatUsd(d.costMicros)} (live ${list}): the discount saved ${saved}`
}

/** The summary's line on the discount, next to what dedup saved. */
export function printDiscount(d: BatchDiscount): void {
  if (d.calls === 0) return
  say.err(`  via batch:     ${discountText(d)}\n`)
}

/** The discount as the --json summary carries it. */
export function discountJson(d: BatchDiscount) {
  return {
    calls: d.calls,
    costUsd: microsToUsd(d.costMicros),
    listUsd: d.listMicros === null ? null : microsToUsd(d.listMicros),
    savedUsd: d.savedMicros === null ? null : microsToUsd(d.savedMicros),
  }
}
