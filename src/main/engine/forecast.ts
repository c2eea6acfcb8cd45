import type { Prices } from './prices'
import { estimateTokens, taskMessages } from './prompt'
import type { JsonValue } from './types'

/**
 * Input tokens a multi-step agent sends in total: every step resends the whole history, so step k
 * sends k × avg and the sum is avg × steps × (steps + 1) / 2 (seed: 1, 5, 10, 20 steps at 1,000 →
 * 1,000 / 15,000 / 55,000 / 210,000).
 */
export function cumulativeInputTokens(steps: number, avgPerStep = 1000): number {
  if (!Number.isSafeInteger(steps) || steps < 0) {
    throw new TypeError(`steps must be a non-negative integer, got ${String(steps)}`)
  }
  if (!Number.isSafeInteger(avgPerStep) || avgPerStep < 0) {
    throw new TypeError(`avgPerStep must be a non-negative integer, got ${String(avgPerStep)}`)
  }
  // steps × (steps + 1) is always even, so the division is exact before the multiplication.
  return avgPerStep * ((steps * (steps + 1)) / 2)
}

/** A task as the forecast needs it (what the queue stores before running it). */
export interface ForecastTask {
  type: string
  payload: JsonValue
  steps: number
  provider: string
  model: string
  /** Fingerprint: tasks sharing one run once when deduplication is on. */
  fp: string
}

export interface ForecastOptions {
  /** Output tokens per step. @default the task's per-step prompt estimate (what the sim answers) */
  outputTokensPerStep?: number
  /** Identical fingerprints run once (the first in batch order); the others reuse it. @default true */
  dedup?: boolean
}

/** Expected spend of a set of tasks. */
export interface ForecastRollup {
  tasks: number
  /** Distinct fingerprints (a fingerprint belongs to the type of its first task). */
  distinctTasks: number
  /** tasks − distinctTasks. */
  duplicates: number
  /** Provider calls that would be made (one per step of every task that runs). */
  calls: number
  inputTokens: number
  outputTokens: number
  /** Priced part of the cost; null when tasks run but none of them can be priced. */
  costMicros: number | null
  /** Tasks that run on a model without a price: their cost is missing from costMicros. */
  unpricedTasks: number
  /**
   * What the duplicates would cost if they ran: saved when dedup is on, at stake when it is off
   * (audit mode). Unpriced duplicates are not included.
   */
  savedByDedupMicros: number
}

export interface Forecast {
  byType: (ForecastRollup & { type: string })[]
  total: ForecastRollup
  dedup: boolean
  priceVersion: string
}

interface Acc extends ForecastRollup {
  pricedTasks: number
}

/** Forecast of a batch before it runs: tokens, calls and cost per task type and in total. */
export function forecastBatch(
  tasks: readonly ForecastTask[],
  prices: Prices,
  opts: ForecastOptions = {},
): Forecast {
  const dedup = opts.dedup ?? true
  const fixedOutput = opts.outputTokensPerStep
  if (fixedOutput !== undefined && (!Number.isSafeInteger(fixedOutput) || fixedOutput < 0)) {
    throw new TypeError(
      `outputTokensPerStep must be a non-negative integer, got ${String(fixedOutput)}`,
    )
  }
  const total = emptyAcc()
  const byType = new Map<string, Acc>()
  const seen = new Set<string>()
  // Duplicates share the payload, so their prompt estimate is computed once per fingerprint.
  const perStep = new Map<string, number>()

  tasks.forEach((t, i) => {
    if (!Number.isSafeInteger(t.steps) || t.steps < 0) {
      throw new TypeError(
        `tasks[${i}].steps must be a non-negative integer, got ${String(t.steps)}`,
      )
    }
    let avg = perStep.get(t.fp)
    if (avg === undefined) {
      avg = estimateTokens(taskMessages(t.type, t.payload))
      perStep.set(t.fp, avg)
    }
    const inputTokens = cumulativeInputTokens(t.steps, avg)
    const outputTokens = t.steps * (fixedOutput ?? avg)
    const cost = prices.costMicros(
      { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens },
      prices.priceFor(t.provider, t.model),
    )
    const duplicate = seen.has(t.fp)
    seen.add(t.fp)
    let acc = byType.get(t.type)
    if (!acc) byType.set(t.type, (acc = emptyAcc()))
    for (const a of [acc, total]) {
      a.tasks++
      if (duplicate) {
        a.duplicates++
        if (cost !== null) a.savedByDedupMicros += cost
        if (dedup) continue
      } else {
        a.distinctTasks++
      }
      a.calls += t.steps
      a.inputTokens += inputTokens
      a.outputTokens += outputTokens
      if (cost === null) {
        a.unpricedTasks++
      } else {
        a.pricedTasks++
        a.costMicros = (a.costMicros ?? 0) + cost
      }
    }
  })

  const rollups = [...byType].map(([type, acc]) => ({ type, ...finish(acc) }))
  rollups.sort(
    (a, b) =>
      (b.costMicros ?? -1) - (a.costMicros ?? -1) ||
      (a.type < b.type ? -1 : a.type > b.type ? 1 : 0),
  )
  return { byType: rollups, total: finish(total), dedup, priceVersion: prices.version }
}

function emptyAcc(): Acc {
  return {
    tasks: 0,
    distinctTasks: 0,
    duplicates: 0,
    calls: 0,
    inputTokens: 0,
    outputTokens: 0,
    costMicros: null,
    unpricedTasks: 0,
    savedByDedupMicros: 0,
    pricedTasks: 0,
  }
}

function finish({ pricedTasks, ...r }: Acc): ForecastRollup {
  // Nothing to price (no task runs) is a known zero; only unpriced work makes the cost unknown.
  return { ...r, costMicros: pricedTasks === 0 && r.unpricedTasks > 0 ? null : (r.costMicros ?? 0) }
}
