import { z } from 'zod'
import { epochMs } from './numbers'

/** Which ledger rows a query covers. `since` is inclusive, `until` exclusive (epoch ms). */
export const LedgerFilter = z.strictObject({
  since: epochMs.optional(),
  until: epochMs.optional(),
  batchId: z.string().optional(),
})
export type LedgerFilter = z.infer<typeof LedgerFilter>

/** Spend of one task type (or of all of them: taskType 'total'), as the ledger rolls it up. */
export interface TypeRollupView {
  taskType: string
  /** executed + reused + duplicates. */
  runs: number
  /** Distinct executions (task, fingerprint, epoch) with 'executed' rows: 10 steps = 1 execution. */
  executed: number
  /** 'reused' rows: tasks answered from a stored result (dedup hits). */
  reused: number
  /**
   * Distinct executions with 'duplicate' rows: billed work dedup should have prevented. Such an
   * execution is not also counted as executed.
   */
  duplicates: number
  /** Input tokens of executed + duplicate rows per such execution (integer, floored). */
  avgInputTokens: number
  inputTokens: number
  /** The part of inputTokens read from a prompt cache. */
  cachedInputTokens: number
  /** Input tokens written to a prompt cache. */
  cacheWriteTokens: number
  /**
   * What reading cachedInputTokens from the cache saved against the plain input price (priced
   * rows recorded since Pacer prices the cache; OpenAI's automatic caching included).
   */
  cacheSavedMicros: number
  /** What writing cacheWriteTokens cost above the plain input price (Anthropic: 0.25× input). */
  cacheWriteExtraMicros: number
  outputTokens: number
  totalTokens: number
  /**
   * Sum of every priced row, whatever its outcome: what was actually billed. Null when calls were
   * made but none of them could be priced, so an unknown model never reads as free.
   */
  costMicros: number | null
  /** Rows with tokens but no price; their cost is missing from costMicros. */
  unpricedCalls: number
  /**
   * Sum of saved_micros of 'reused' rows (a whole execution's cost) and 'replayed' ones (a call the
   * journal answered: its cost); null when every reuse was of an unpriced result.
   */
  savedMicros: number | null
  /** Cost of duplicate executions: every call of them, including steps before the claim was lost. */
  wastedMicros: number
  throttled: number
  errors: number
  abandoned: number
  /**
   * Calls whose usage Pacer estimated (≈4 characters a token): the provider reported none, or its
   * answer could not be read. Their estimated cost is in costMicros.
   */
  estimatedCalls: number
  /** Calls the execution's journal answered on a rerun (resume, takeover, retry): not paid again. */
  replayed: number
  /** Calls answered through a provider batch API ('via batch'), priced at the batch rate. */
  batchCalls: number
  /** What those calls cost, at the batch rate (part of costMicros). */
  batchCostMicros: number
  /** What the batch discount saved: those calls at the list price minus batchCostMicros. */
  batchSavedMicros: number
}

/** Spend of one task type on one machine of the team. */
export type MachineRollupView = TypeRollupView & { machine: string }

/** The team's ledger as the team store holds it: every machine's rows, each once. */
export interface TeamLedgerView {
  /** The team store, without its password (redis://host:port/db). */
  store: string
  byType: TypeRollupView[]
  /** Per task type (in byType's order) and machine (by name). */
  byMachine: MachineRollupView[]
  totals: TypeRollupView
  machines: string[]
  /** Ledger rows in the team store. */
  rows: number
  /** This machine's rows not in the team store yet (Redis unreachable); null: not appending. */
  waiting: number | null
}

/**
 * This machine's ledger rows that could not go to the team store: they wait in its database and
 * go when Redis answers again. Only while the appender cannot reach Redis.
 */
export interface TeamLedgerBacklog {
  /** Rows of this database not in the team store yet. */
  rows: number
  /** When the appender first failed to reach the team store (epoch ms). */
  since: number
}

/** Which ledger a read or an export covers: this machine's database, or the team's store. */
export const LedgerScope = z.enum(['machine', 'team'])
export type LedgerScope = z.infer<typeof LedgerScope>

/** One bucket of spend over time; `ts` is the bucket start, aligned to multiples of bucketMs. */
export interface CostPoint {
  ts: number
  costMicros: number
  /** Provider calls (every row but 'reused'). */
  calls: number
  tokens: number
}

/** Expected spend of one task type (or of all of them: taskType 'total') before a batch runs. */
export interface ForecastTypeView {
  taskType: string
  tasks: number
  /** Distinct fingerprints (a fingerprint belongs to the type of its first task). */
  distinctTasks: number
  /** tasks − distinctTasks. */
  duplicates: number
  /**
   * Tasks whose answer the database already holds (a finished batch's, still within retention):
   * they reuse it at $0 and make no call, their in-file duplicates included. 0 in audit mode.
   */
  reused: number
  /** Provider calls that would be made (one per step of every task that runs). */
  calls: number
  inputTokens: number
  outputTokens: number
  /** Priced part of the cost; null when tasks run but none of them can be priced. */
  costMicros: number | null
  /** Tasks that run on a model without a price: their cost is missing from costMicros. */
  unpricedTasks: number
  /**
   * What the duplicates and the reused tasks would cost if they ran: saved when dedup is on, at
   * stake when it is off (audit mode). Unpriced ones are not included.
   */
  savedByDedupMicros: number
  /**
   * Present when the forecast was asked for batch rates (the console's import dialog): the same
   * calls billed through the vendors' batch APIs (`pacer run --batch-api`). Priced part only;
   * null when none of the tasks that run has a batch rate (the simulated provider has none).
   */
  batchCostMicros?: number | null
}

/** A model a forecast priced its tasks against, with the price used (USD per 1M tokens). */
export interface ForecastModelView {
  provider: string
  model: string
  /** Tasks of the file on this model (reused and duplicates included). */
  tasks: number
  /** null: no price for it (its tasks' cost is not included). */
  price: { input: number; output: number } | null
}

export interface ForecastView {
  byType: ForecastTypeView[]
  total: ForecastTypeView
  /** total.unpricedTasks. */
  unpricedTasks: number
  /**
   * The output tokens each step is assumed to answer (`--assume-output-tokens`, the preview's
   * field); null: the default rule, the simulated provider's own answer size on sim and the
   * step's prompt size on any other provider.
   */
  assumedOutputTokens: number | null
  /** The models priced against, most tasks first. */
  models: ForecastModelView[]
  /** The price table's version the costs come from. */
  priceVersion: string
  /**
   * The spend caps that cover a task of the batch (kept ones, and the run's `--budget` given to
   * `pacer forecast`), each with what the batch would do to it; empty when none applies.
   */
  caps: CapForecastView[]
}

/** What a batch would do to one spend cap, by its forecast: fit, or be held from some task on. */
export interface CapForecastView {
  /** The kept cap's id; null: the run's cap (`--budget`). */
  capId: number | null
  /** Its name in a sentence: "the daily cap (UTC) on all spend". */
  name: string
  /** The period it is weighed in: '' (all time, a run), '2026-12-02', '2026-12'. */
  periodKey: string
  capMicros: number
  /** Spent in the period before this batch, what dead processes sent (in doubt) included. */
  spentMicros: number
  /** What calls in flight hold under it now. */
  reservedMicros: number
  /** cap − spent − reserved, never below 0. */
  leftMicros: number
  /** The batch's tasks under it that would make calls (not reused, not duplicates). */
  tasks: number
  /** Their forecast cost (priced ones). */
  forecastMicros: number
  /** Their input alone at the input price, answers taken as empty: the least they can cost. */
  minimumMicros: number
  /**
   * The task (its position in the batch, 1-based, and its line) whose cost takes the running
   * total past what is left: from about there on the cap holds the rest. null: it fits.
   */
  hitAt: { task: number; line: number } | null
  /** The minimum passes cap − spent: `pacer run` refuses to start (unless `--up-to-cap`). */
  minimumPasses: boolean
  /** Tasks under it on a model without a price: refused under any cap, never counted as $0. */
  unpricedTasks: number
  /** Those models, as provider/model. */
  unpricedModels: string[]
}

/** Over how long a spend cap adds up: all time, or a calendar day or month of its zone. */
export const CapPeriod = z.enum(['total', 'day', 'month'])
export type CapPeriod = z.infer<typeof CapPeriod>

/**
 * A spend cap kept in the database (`pacer budgets set`, the console's Budgets section): any of
 * task type, provider and model narrow it; none of them: all spend. Setting one that has the same
 * scope, period and zone changes its amount.
 */
export const SpendCapInput = z.strictObject({
  usd: z.number().finite().nonnegative().max(1e9),
  taskType: z.string().min(1).max(200).optional(),
  provider: z.string().min(1).max(200).optional(),
  model: z.string().min(1).max(500).optional(),
  period: CapPeriod.default('total'),
  /** The calendar's IANA zone; default UTC. */
  zone: z.string().min(1).max(100).optional(),
})
export type SpendCapInput = z.input<typeof SpendCapInput>

/** A spend cap with what its current period has spent, what calls in flight hold, what is left. */
export interface SpendCapView {
  id: number
  taskType: string | null
  provider: string | null
  model: string | null
  period: CapPeriod
  zone: string
  /** The period now: '' (total), '2026-12-02' (day), '2026-12' (month), in the cap's zone. */
  periodKey: string
  /** What it covers, in words: 'all spend', 'task type classify', 'openai/gpt-4o, task type x'. */
  scope: string
  capMicros: number
  /** What the period's ledger rows cost (the ledger's own sum). */
  spentMicros: number
  /**
   * Calls a dead process had sent and never ledgered, counted at their worst case: they may have
   * been billed.
   */
  inDoubtMicros: number
  reservedMicros: number
  /** cap − spent − in doubt − reserved, never below 0. */
  leftMicros: number
  /** spent / cap in whole percent (100 when the cap is 0). */
  percent: number
  /** The highest warning threshold (50, 80, 100 %) said in this period; null: none yet. */
  warnedPercent: number | null
}
