import type { ForecastModelView, ForecastTypeView, ForecastView } from '../../../shared/contract'
import type { Prices } from '../pricing/prices'
import { continueMessage, estimateTokens, messageChars, taskMessages } from '../providers/prompt'
import type { ChatMessage, JsonValue } from '../core/types'
import { CapForecast, type CapToForecast } from './cap-forecast'

/** A task as the forecast needs it (what the queue stores before running it). */
export interface ForecastTask {
  type: string
  payload: JsonValue
  steps: number
  provider: string
  model: string
  /** Fingerprint: tasks sharing one run once when deduplication is on. */
  fp: string
  /** Its line in the file (named where a cap would hold the rest). @default its position */
  line?: number
}

export interface ForecastOptions {
  /**
   * Output tokens per step, for every task (an explicit assumption wins over the defaults).
   * @default on the simulated provider, what it answers (about the longest user message, 16 to
   * 4,096 tokens); on any other provider, the task's step-1 prompt estimate
   */
  outputTokensPerStep?: number
  /** Identical fingerprints run once (the first in batch order); the others reuse it. @default true */
  dedup?: boolean
  /**
   * Whether the database already holds an answer for a fingerprint (a claim completed within
   * retention): such a task reuses it at $0, as the runner would. Asked once per distinct
   * fingerprint, and only with dedup on. @default none is stored
   */
  stored?: (fp: string) => boolean
  /** The spend caps to weigh the batch against, in batch order (Forecast.caps). @default none */
  caps?: readonly CapToForecast[]
  /**
   * Also price every call at its vendor's batch rate (batch-rates.ts), as `pacer run --batch-api`
   * will be billed: each rollup gets `batchCostMicros`. @default false
   */
  batchRates?: boolean
}

/** Expected spend of a set of tasks: the contract's view, without the task type. */
type ForecastRollup = Omit<ForecastTypeView, 'taskType'>

/** The contract's view of a forecast, and how it was made. */
export interface Forecast extends ForecastView {
  dedup: boolean
}

interface Acc extends ForecastRollup {
  pricedTasks: number
  /** Tasks that run priced at a batch rate (batchRates): the part batchCostMicros counts. */
  batchPricedTasks: number
}

/**
 * How the built-in simulated provider sizes an answer (src/main/engine/providers/sim.ts): the
 * longest user message's token estimate times a factor drawn uniformly from [0.8, 1.2], rounded and
 * clamped to [16, 4096] (the runner sends no max_tokens). Kept in step with the provider by
 * test/unit/forecast.test.ts, which replays tasks against it.
 */
const SIM_PROVIDER = 'sim'
const SIM_MIN_OUTPUT_TOKENS = 16
const SIM_MAX_OUTPUT_TOKENS = 4096
const SIM_FACTOR_MIN = 0.8
const SIM_FACTOR_MAX = 1.2
/** prompt.ts estimates 4 characters a token, and the sim writes exactly 4 characters per token. */
const CHARS_PER_TOKEN = 4

/** Expected tokens of one task: what its run would put on the ledger. */
export interface TaskTokens {
  /** Provider calls: one per step. */
  calls: number
  inputTokens: number
  outputTokens: number
}

/**
 * Replays the runner's steps for one task (runner.ts `#execute`), without calling anything:
 *
 * - step 1 sends taskMessages(type, payload): P = estimateTokens of them;
 * - step k > 1 resends the whole history plus the previous answer (O tokens) and
 *   continueMessage(k, steps) (C ≈ 6 tokens), so it sends P + (k − 1) × (O + C);
 * - every step answers O tokens: on the simulated provider, what it answers (the expected value of
 *   clamp(longest user message × [0.8, 1.2], 16, 4096)), on other providers `outputTokensPerStep`
 *   or, without it, P.
 *
 * Counting is done in characters and converted like estimateTokens (ceil(chars / 4) per call), so
 * for the simulated provider the input matches a real run to within rounding. With O ≈ P ≫ C the
 * sum is about the closed form P × steps × (steps + 1) / 2. Inputs are assumed
 * valid (forecastBatch checks them).
 */
export function forecastTask(
  task: Pick<ForecastTask, 'type' | 'payload' | 'steps' | 'provider'>,
  opts: Pick<ForecastOptions, 'outputTokensPerStep'> = {},
): TaskTokens {
  const { steps } = task
  const fixedOutput = opts.outputTokensPerStep
  const sim = task.provider === SIM_PROVIDER
  const first = taskMessages(task.type, task.payload)
  const promptTokens = estimateTokens(first)
  let chars = contentChars(first)
  // The sim sizes its answer on the longest user message; -1: none yet (it then uses them all).
  let longestUser = -1
  for (const m of first) {
    if (m.role === 'user') longestUser = Math.max(longestUser, messageChars(m))
  }
  let inputTokens = 0
  let outputTokens = 0
  let answerChars = 0
  for (let step = 1; step <= steps; step++) {
    if (step > 1) {
      const next = messageChars(continueMessage(step, steps))
      chars += answerChars + next
      longestUser = Math.max(longestUser, next)
    }
    const input = Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN))
    inputTokens += input
    const output =
      fixedOutput ??
      (sim
        ? expectedSimOutput(
            longestUser < 0 ? input : Math.max(1, Math.ceil(longestUser / CHARS_PER_TOKEN)),
          )
        : promptTokens)
    outputTokens += output
    answerChars = Math.round(output * CHARS_PER_TOKEN)
  }
  return { calls: steps, inputTokens, outputTokens: Math.round(outputTokens) }
}

/** Mean of clamp(tokens × f, 16, 4096) for f uniform on [0.8, 1.2]: the sim's expected answer. */
export function expectedSimOutput(tokens: number): number {
  const lo = tokens * SIM_FACTOR_MIN
  const hi = tokens * SIM_FACTOR_MAX
  const min = SIM_MIN_OUTPUT_TOKENS
  const max = SIM_MAX_OUTPUT_TOKENS
  if (hi <= min) return min
  if (lo >= max) return max
  // Integrate the clamped value over [lo, hi]: flat at min, linear in between, flat at max.
  const clampedUp = Math.max(0, Math.min(hi, min) - lo)
  const clampedDown = Math.max(0, hi - Math.max(lo, max))
  const from = Math.max(lo, min)
  const to = Math.min(hi, max)
  const linear = to > from ? (to * to - from * from) / 2 : 0
  return (min * clampedUp + linear + max * clampedDown) / (hi - lo)
}

function contentChars(messages: readonly ChatMessage[]): number {
  let chars = 0
  for (const m of messages) chars += messageChars(m)
  return chars
}

/** Forecast of a batch before it runs: tokens, calls and cost per task type and in total. */
export function forecastBatch(
  tasks: readonly ForecastTask[],
  prices: Prices,
  opts: ForecastOptions = {},
): Forecast {
  const acc = new ForecastAccumulator(prices, opts)
  tasks.forEach((t, i) => acc.add(t, `tasks[${i}]`))
  return acc.result()
}

/**
 * forecastBatch one task at a time, for a file streamed line by line: what it keeps is one entry
 * per distinct task, never the tasks themselves.
 */
export class ForecastAccumulator {
  readonly #prices: Prices
  readonly #dedup: boolean
  readonly #fixedOutput: number | undefined
  readonly #total = emptyAcc()
  readonly #byType = new Map<string, Acc>()
  // Duplicates share the payload (and, for one fingerprint, the steps and provider), so a task's
  // tokens are computed once per fingerprint. Keyed by 64 bits of it: a collision is ~2^-40 even
  // for millions of distinct tasks, and would only misplace one task in an estimate.
  readonly #seen = new Set<string>()
  /** Of #seen, the fingerprints whose answer is stored: their tasks reuse it. */
  readonly #reusable = new Set<string>()
  readonly #stored: ((fp: string) => boolean) | undefined
  readonly #models = new Map<string, ForecastModelView>()
  readonly #perTask = new Map<
    string,
    { tokens: TaskTokens; cost: number | null; minimum: number | null; batchCost: number | null }
  >()
  readonly #caps: CapForecast
  readonly #batchRates: boolean

  constructor(prices: Prices, opts: ForecastOptions = {}) {
    const fixedOutput = opts.outputTokensPerStep
    if (fixedOutput !== undefined && (!Number.isSafeInteger(fixedOutput) || fixedOutput < 0)) {
      throw new TypeError(
        `outputTokensPerStep must be a non-negative integer, got ${String(fixedOutput)}`,
      )
    }
    this.#prices = prices
    this.#dedup = opts.dedup ?? true
    this.#fixedOutput = fixedOutput
    this.#stored = this.#dedup ? opts.stored : undefined
    this.#caps = new CapForecast(opts.caps ?? [])
    this.#batchRates = opts.batchRates ?? false
  }

  /** Adds one task, in batch order; `name` names it in a TypeError. */
  add(t: ForecastTask, name = 'task'): void {
    if (!Number.isSafeInteger(t.steps) || t.steps < 0) {
      throw new TypeError(`${name}.steps must be a non-negative integer, got ${String(t.steps)}`)
    }
    const fp = t.fp.slice(0, 16)
    const memoKey = `${fp}\u0000${t.steps}\u0000${t.provider}\u0000${t.model}`
    let memo = this.#perTask.get(memoKey)
    if (memo === undefined) {
      const tokens = forecastTask(t, { outputTokensPerStep: this.#fixedOutput })
      const { inputTokens, outputTokens } = tokens
      const usage = { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens }
      const price = this.#prices.priceFor(t.provider, t.model)
      const cost = this.#prices.costMicros(usage, price)
      const batchCost = this.#batchRates
        ? this.#prices.costMicros(usage, this.#prices.batchPriceFor(t.provider, t.model))
        : null
      // The least it can cost: every step's input with empty answers, at the plain input price.
      const minimum = this.#caps.empty
        ? null
        : this.#prices.costMicros(
            {
              inputTokens: forecastTask(t, { outputTokensPerStep: 0 }).inputTokens,
              cachedInputTokens: 0,
              cacheWriteTokens: 0,
              outputTokens: 0,
            },
            price,
          )
      memo = { tokens, cost, minimum, batchCost }
      this.#perTask.set(memoKey, memo)
    }
    const { tokens, cost, minimum, batchCost } = memo
    this.#countModel(t)
    const duplicate = this.#seen.has(fp)
    if (!duplicate) {
      this.#seen.add(fp)
      if (this.#stored?.(t.fp)) this.#reusable.add(fp)
    }
    const reused = this.#reusable.has(fp)
    this.#caps.add({
      type: t.type,
      provider: t.provider,
      model: t.model,
      line: t.line,
      runs: !reused && !(duplicate && this.#dedup),
      costMicros: cost,
      minimumMicros: minimum,
    })
    let acc = this.#byType.get(t.type)
    if (!acc) this.#byType.set(t.type, (acc = emptyAcc()))
    for (const a of [acc, this.#total]) {
      a.tasks++
      if (!duplicate) a.distinctTasks++
      if (reused) {
        // The answer is in the database: no call, $0, and what running it would cost is saved.
        a.reused++
        if (duplicate) a.duplicates++
        if (cost !== null) a.savedByDedupMicros += cost
        continue
      }
      if (duplicate) {
        a.duplicates++
        if (cost !== null) a.savedByDedupMicros += cost
        if (this.#dedup) continue
      }
      a.calls += tokens.calls
      a.inputTokens += tokens.inputTokens
      a.outputTokens += tokens.outputTokens
      if (cost === null) {
        a.unpricedTasks++
      } else {
        a.pricedTasks++
        a.costMicros = (a.costMicros ?? 0) + cost
      }
      if (batchCost !== null) {
        a.batchPricedTasks++
        a.batchCostMicros = (a.batchCostMicros ?? 0) + batchCost
      }
    }
  }

  #countModel(t: ForecastTask): void {
    const key = `${t.provider}\u0000${t.model}`
    const seen = this.#models.get(key)
    if (seen) {
      seen.tasks++
      return
    }
    const price = this.#prices.priceFor(t.provider, t.model)
    this.#models.set(key, {
      provider: t.provider,
      model: t.model,
      tasks: 1,
      price: price && { input: price.input, output: price.output },
    })
  }

  /** Tasks added so far. */
  get tasks(): number {
    return this.#total.tasks
  }

  result(): Forecast {
    const finish = (acc: Acc) => finishAcc(acc, this.#batchRates)
    const rollups = [...this.#byType].map(([taskType, acc]) => ({ taskType, ...finish(acc) }))
    rollups.sort(
      (a, b) =>
        (b.costMicros ?? -1) - (a.costMicros ?? -1) ||
        (a.taskType < b.taskType ? -1 : a.taskType > b.taskType ? 1 : 0),
    )
    const all = { taskType: 'total', ...finish(this.#total) }
    return {
      byType: rollups,
      total: all,
      unpricedTasks: all.unpricedTasks,
      assumedOutputTokens: this.#fixedOutput ?? null,
      models: [...this.#models.values()].sort((a, b) => b.tasks - a.tasks),
      priceVersion: this.#prices.version,
      caps: this.#caps.result(),
      dedup: this.#dedup,
    }
  }
}

function emptyAcc(): Acc {
  return {
    tasks: 0,
    distinctTasks: 0,
    duplicates: 0,
    reused: 0,
    calls: 0,
    inputTokens: 0,
    outputTokens: 0,
    costMicros: null,
    unpricedTasks: 0,
    savedByDedupMicros: 0,
    pricedTasks: 0,
    batchCostMicros: null,
    batchPricedTasks: 0,
  }
}

function finishAcc(
  { pricedTasks, batchPricedTasks, batchCostMicros, ...r }: Acc,
  batchRates: boolean,
): ForecastRollup {
  // Nothing to price (no task runs) is a known zero; only unpriced work makes the cost unknown.
  const costMicros = pricedTasks === 0 && r.unpricedTasks > 0 ? null : (r.costMicros ?? 0)
  if (!batchRates) return { ...r, costMicros }
  // At batch rates, a task on a model (or provider) sold without them is the unknown part.
  const runs = r.calls > 0
  const batch = batchPricedTasks === 0 && runs ? null : (batchCostMicros ?? 0)
  return { ...r, costMicros, batchCostMicros: batch }
}
