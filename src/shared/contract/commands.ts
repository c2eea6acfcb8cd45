import { z } from 'zod'
import type { PartitionView, SchedulerHistoryView } from './scheduler'
import { AimdParamsPatch } from './scheduler'
import type { SettingsView, TeamStoreView } from './settings'
import { ProviderId, SettingsPatch } from './settings'
import type { CostPoint, ForecastView, SpendCapView, TeamLedgerView, TypeRollupView } from './spend'
import { LedgerFilter, LedgerScope, SpendCapInput } from './spend'
import type { TaskDetailView } from './results'
import { ResultsFormat } from './results'
import type { BatchSummary, LineError, ProviderBatchSummary, TaskRow } from './tasks'
import { BatchFormat, RequestParams, TaskInput, TaskStatus } from './tasks'

/**
 * An agent module for a batch's tasks: the absolute path of an ES module or TypeScript file on the
 * machine the engine runs on (the desktop app's, or `pacer serve`'s).
 */
const AgentsPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\'), {
    message: "give the module's absolute path",
  })

/**
 * The run's spend cap in dollars, as `pacer run --budget USD`: no call is sent whose worst case
 * would take the batch's spend past it; what is left is held by budget.
 */
const RunBudgetUsd = z
  .number()
  .finite()
  .min(0.000001, 'give a positive dollar amount (at least $0.000001)')
  .max(1e9)

/** An agent module as the engine loaded it. */
export interface AgentsView {
  path: string
  /** `version:<exported version>` or `sha256:<hex of the file>`: part of the fingerprints. */
  identity: string
  /** The task types it handles. */
  types: string[]
  /** Task types of the file it does not handle (they run the built-in loop), with counts. */
  unhandled: { type: string; tasks: number }[]
}

/** Each command: its input schema and (as a type) its result. */
export const commandSchemas = {
  'tasks:enqueue': z.strictObject({
    tasks: z.array(TaskInput).min(1).max(100_000),
    name: z.string().max(200).optional(),
    audit: z.boolean().optional(),
    /** Request params for every task; a task's own win, key by key. */
    params: RequestParams.optional(),
  }),
  'batches:preview': z.strictObject({
    fileName: z.string().max(500),
    content: z.string().max(200 * 1024 * 1024),
    format: BatchFormat.optional(),
    /** Forecast without deduplication; default: the audit setting. */
    audit: z.boolean().optional(),
    /** Output tokens each step is assumed to answer; default: ForecastView.assumedOutputTokens. */
    assumeOutputTokens: z.number().int().nonnegative().max(1_000_000).optional(),
    params: RequestParams.optional(),
    agents: AgentsPath.optional(),
    /** The run's cap to weigh in the forecast's cap lines. */
    budgetUsd: RunBudgetUsd.optional(),
  }),
  'batches:import': z.strictObject({
    fileName: z.string().max(500),
    content: z.string().max(200 * 1024 * 1024),
    format: BatchFormat.optional(),
    skipInvalid: z.boolean().optional(),
    audit: z.boolean().optional(),
    /** Request params for every line; a line's own win, key by key. */
    params: RequestParams.optional(),
    agents: AgentsPath.optional(),
    /**
     * Send the calls through the vendors' batch APIs at the batch price, results within 24 hours
     * (as `pacer run --batch-api`); default: live calls.
     */
    batchApi: z.boolean().optional(),
    /** The batch's own cap (`pacer run --budget`), stored with it before any task can start. */
    budgetUsd: RunBudgetUsd.optional(),
  }),
  'batches:list': z.strictObject({}),
  'batches:pause': z.strictObject({ batchId: z.string().min(1) }),
  'batches:resume': z.strictObject({ batchId: z.string().min(1) }),
  'batches:cancel': z.strictObject({ batchId: z.string().min(1) }),
  /**
   * Asks the vendor to cancel one provider batch (Pacer's number for it, as `pacer
   * provider-batches cancel`): requests already done are kept, collected and priced.
   */
  'provider-batches:cancel': z.strictObject({ id: z.number().int().positive() }),
  'tasks:list': z.strictObject({
    batchId: z.string().optional(),
    statuses: z.array(TaskStatus).optional(),
    offset: z.number().int().nonnegative().default(0),
    limit: z.number().int().min(1).max(10_000).default(200),
  }),
  'tasks:retry': z.strictObject({
    batchId: z.string().optional(),
    taskIds: z.array(z.number().int().positive()).optional(),
  }),
  'tasks:get': z.strictObject({ taskId: z.number().int().positive() }),
  /** The answers of a batch (default: the latest one), one record per task in input order. */
  'results:export': z.strictObject({
    batchId: z.string().min(1).optional(),
    format: ResultsFormat.default('jsonl'),
    /** CSV only: add the provider's raw message as a JSON column (jsonl always has it). */
    raw: z.boolean().optional(),
  }),
  'scheduler:get': z.strictObject({}),
  /** Each partition's samples and pauses from `sinceMs` on (at most the last hour). */
  'scheduler:history': z.strictObject({
    sinceMs: z.number().int('must be an integer').min(0).optional(),
  }),
  'scheduler:set': z.strictObject({
    partition: z.string().min(1),
    params: AimdParamsPatch,
  }),
  /** Lets a partition a setup failure stopped ('*': all of them) send again, its batches too. */
  'scheduler:resume': z.strictObject({ partition: z.string().min(1) }),
  'ledger:rollup': LedgerFilter,
  'ledger:over-time': LedgerFilter.extend({ bucketMs: z.number().int().min(1000) }),
  'ledger:export': z.strictObject({
    kind: z.enum(['events', 'summary']),
    /** 'team': the team store's ledger, whole (no filter), with a machine column. */
    scope: LedgerScope.optional(),
    ...LedgerFilter.shape,
  }),
  /** The team's ledger (team mode): every machine's spend per task type. */
  'ledger:team': z.strictObject({}),
  /** The spend caps kept in the database, each with its period's spend, reserved and left. */
  'budgets:list': z.strictObject({}),
  /**
   * Adds a cap, or changes the one with the same scope, period and zone; batches a cap held
   * resume (their tasks are queued, nothing is paid twice).
   */
  'budgets:set': SpendCapInput,
  'budgets:remove': z.strictObject({ id: z.number().int().positive() }),
  'settings:get': z.strictObject({}),
  'settings:set': SettingsPatch,
  'secrets:set': z.strictObject({
    provider: ProviderId,
    apiKey: z.string().min(1).max(1000).nullable(),
  }),
  /**
   * Settings → Observability: the OTLP headers (`key=value,...` as OTEL_EXPORTER_OTLP_HEADERS),
   * stored like a key for the endpoint in effect; null deletes them. Never sent back.
   */
  'otlp:headers': z.strictObject({ headers: z.string().min(1).max(8000).nullable() }),
  /** Settings → Observability's Test: one span to the endpoint in effect, and what it answered. */
  'otlp:test': z.strictObject({}),
  /**
   * Settings → Team mode's "Try again now": a process whose team store did not answer at its
   * start tries it at once (it tries by itself meanwhile) and joins if it answers and no batch runs.
   */
  'team:join': z.strictObject({}),
} as const

export interface CommandResults {
  'tasks:enqueue': { batchId: string; enqueued: number }
  'batches:preview': {
    format: BatchFormat
    valid: number
    errors: LineError[]
    forecast: ForecastView | null
    /** The agent module asked for, as loaded; absent: none asked for. */
    agents?: AgentsView
    /**
     * Why the valid tasks cannot go through a batch API from here; null: they can (absent from
     * an engine that cannot start such runs: no tasks or an older console).
     */
    batchApiRefusal?: string | null
  }
  'batches:import': {
    batchId: string | null
    enqueued: number
    skipped: number
    errors: LineError[]
  }
  'batches:list': BatchSummary[]
  'batches:pause': BatchSummary
  'batches:resume': BatchSummary
  'batches:cancel': BatchSummary
  'provider-batches:cancel': ProviderBatchSummary
  'tasks:list': { rows: TaskRow[]; total: number }
  'tasks:retry': { retried: number }
  'tasks:get': TaskDetailView
  /** Over IPC: the file written (save dialog). Over HTTP: answered by a download instead. */
  'results:export': { path: string | null; rows: number }
  'scheduler:get': PartitionView[]
  'scheduler:history': SchedulerHistoryView
  'scheduler:set': PartitionView[]
  'scheduler:resume': PartitionView[]
  'ledger:rollup': { byType: TypeRollupView[]; totals: TypeRollupView }
  'ledger:over-time': CostPoint[]
  /** Over IPC: the file written (save dialog). Over HTTP: answered by a download instead. */
  'ledger:export': { path: string | null; rows: number }
  'ledger:team': TeamLedgerView
  'budgets:list': SpendCapView[]
  /** The caps after the change, and the batches it resumed. */
  'budgets:set': { caps: SpendCapView[]; id: number; resumed: string[] }
  'budgets:remove': { caps: SpendCapView[]; removed: boolean; resumed: string[] }
  'settings:get': SettingsView
  'settings:set': SettingsView
  'secrets:set': SettingsView
  'otlp:headers': SettingsView
  'otlp:test': { ok: boolean; message: string }
  'team:join': TeamStoreView
}

export type CommandName = keyof typeof commandSchemas
export type CommandInput<C extends CommandName> = z.input<(typeof commandSchemas)[C]>
export type CommandParsed<C extends CommandName> = z.output<(typeof commandSchemas)[C]>
export type CommandResult<C extends CommandName> = CommandResults[C]

export const COMMANDS = Object.keys(commandSchemas) as CommandName[]

/** Errors travel as data, never as thrown exceptions across a transport. */
export interface CommandError {
  code: string
  message: string
  /** Where the problem is: a field path (`tasks[3].payload`) or a line (`line 7`). */
  field?: string
}
export type Reply<T> = { ok: true; value: T } | { ok: false; error: CommandError }

/** The handler map the engine implements; both transports bind exactly this. */
export type CommandHandlers = {
  [C in CommandName]: (input: CommandParsed<C>) => Promise<CommandResult<C>> | CommandResult<C>
}

/** Turns a zod error into the contract's error shape, naming the first bad field. */
export function validationError(error: z.ZodError): CommandError {
  const issue = error.issues[0]
  const field = issue ? formatPath(issue.path) : undefined
  const message = error.issues
    .slice(0, 5)
    .map((i) => `${formatPath(i.path) || 'input'}: ${i.message}`)
    .join('; ')
  return { code: 'invalid_input', message, field: field || undefined }
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else out += out ? `.${String(part)}` : String(part)
  }
  return out
}

/** Validates a command's input; the single entry check used by both transports. */
export function parseCommand<C extends CommandName>(
  name: C,
  input: unknown,
): Reply<CommandParsed<C>> {
  const schema = commandSchemas[name] as unknown as z.ZodType<CommandParsed<C>>
  const parsed = schema.safeParse(input ?? {})
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: validationError(parsed.error) }
}

export function isCommandName(name: string): name is CommandName {
  return Object.prototype.hasOwnProperty.call(commandSchemas, name)
}
