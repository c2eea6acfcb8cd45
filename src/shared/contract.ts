/**
 * The one contract between the engine and the console: every command and event as a zod schema
 * with its inferred type, and the channel names as constants. Both transports (Electron IPC and
 * loopback HTTP + SSE) validate inputs against these schemas on the engine side.
 */
import { z } from 'zod'

// ---------------------------------------------------------------- building blocks

const finiteNumber = z.number().refine(Number.isFinite, 'must be a finite number')
const epochMs = z.number().int().nonnegative()

/** One task as queued by the operator or read from a batch file. */
export const TaskInput = z.strictObject({
  type: z
    .string({
      error: (issue) => (issue.input === undefined ? 'required' : 'must be a string'),
    })
    .trim()
    .min(1, 'must be a non-empty string')
    .max(200),
  // Any JSON; the engine's canonical JSON check names the exact bad path (payload.items[3].price).
  payload: z.unknown().refine((v) => v !== undefined, 'required'),
  steps: z.number().int().min(1).max(1000).optional(),
  key: z.string().min(1).max(500).optional(),
  model: z.string().min(1).max(200).optional(),
  provider: z.string().min(1).max(100).optional(),
})
export type TaskInput = z.infer<typeof TaskInput>

export const TaskStatus = z.enum([
  'queued',
  'running',
  'succeeded',
  'reused',
  'failed',
  'cancelled',
])
export type TaskStatus = z.infer<typeof TaskStatus>

export const BatchState = z.enum(['running', 'paused', 'interrupted', 'cancelled', 'done'])
export type BatchState = z.infer<typeof BatchState>

export const BatchFormat = z.enum(['jsonl', 'csv'])
export type BatchFormat = z.infer<typeof BatchFormat>

/** A problem with one line of a batch file (1-based line numbers, as an editor shows them). */
export interface LineError {
  line: number
  field?: string
  message: string
}

export interface TaskRow {
  id: number
  batchId: string
  seq: number
  type: string
  fp: string
  steps: number
  provider: string
  model: string
  status: TaskStatus
  attempts: number
  error: string | null
  createdAt: number
  startedAt: number | null
  finishedAt: number | null
}

export type StatusCounts = Record<TaskStatus, number>

export interface BatchSummary {
  id: string
  name: string
  source: string | null
  state: BatchState
  audit: boolean
  createdAt: number
  updatedAt: number
  total: number
  counts: StatusCounts
}

/** No provider takes this many calls at once from one console; a typo must not flood one. */
export const MAX_CONCURRENCY_LIMIT = 1000

export const AimdParamsPatch = z.strictObject({
  min: z.number().int().min(1).max(MAX_CONCURRENCY_LIMIT).optional(),
  max: z.number().int().min(1).max(MAX_CONCURRENCY_LIMIT).optional(),
  initial: finiteNumber.min(1).max(MAX_CONCURRENCY_LIMIT).optional(),
  increase: finiteNumber.positive().optional(),
  decrease: finiteNumber.gt(0).lt(1).optional(),
  cooldownMs: z.number().int().nonnegative().optional(),
  nearLimitRemaining: z.number().int().nonnegative().optional(),
})
export type AimdParamsPatch = z.infer<typeof AimdParamsPatch>

export interface AimdParamsView {
  min: number
  max: number
  initial: number
  increase: number
  decrease: number
  cooldownMs: number
  nearLimitRemaining: number
}

export interface LimitChangeView {
  partition: string
  ts: number
  from: number
  to: number
  reason: string
}

export interface PartitionView {
  partition: string
  limit: number
  concurrency: number
  inflight: number
  waiting: number
  throttles: number
  successes: number
  params: AimdParamsView
  lastChange: LimitChangeView | null
}

/** One point of the live concurrency chart. */
export interface SchedulerSample {
  partition: string
  ts: number
  limit: number
  concurrency: number
  inflight: number
  waiting: number
  /** Throttles seen since the previous sample of this partition. */
  throttles: number
}

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
  outputTokens: number
  totalTokens: number
  /**
   * Sum of every priced row, whatever its outcome: what was actually billed. Null when calls were
   * made but none of them could be priced, so an unknown model never reads as free.
   */
  costMicros: number | null
  /** Rows with tokens but no price; their cost is missing from costMicros. */
  unpricedCalls: number
  /** Sum of saved_micros of 'reused' rows; null when every reuse was of an unpriced result. */
  savedMicros: number | null
  /** Cost of duplicate executions: every call of them, including steps before the claim was lost. */
  wastedMicros: number
  throttled: number
  errors: number
  abandoned: number
}

export interface CostPoint {
  ts: number
  costMicros: number
  calls: number
  tokens: number
}

export interface ForecastTypeView {
  taskType: string
  tasks: number
  distinctTasks: number
  duplicates: number
  calls: number
  inputTokens: number
  outputTokens: number
  costMicros: number | null
  savedByDedupMicros: number | null
}

export interface ForecastView {
  byType: ForecastTypeView[]
  total: ForecastTypeView
  unpricedTasks: number
}

export const ProviderId = z.enum(['sim', 'openai', 'anthropic', 'openai-compatible'])
export type ProviderId = z.infer<typeof ProviderId>

/** Settings as the console sees them: secrets are never sent, only whether one is stored. */
export interface SettingsView {
  dbPath: string
  defaultProvider: ProviderId
  defaultModel: string
  resultTtlMs: number
  audit: boolean
  providers: Record<ProviderId, { baseUrl: string | null; hasKey: boolean; keyHint: string | null }>
  priceOverrides: Record<string, PriceView>
  priceTableVersion: string
  /** Why keys cannot be stored here, when they cannot (no OS keyring, headless mode). */
  secretStorage: { available: boolean; reason: string | null }
}

export const PriceView = z.strictObject({
  input: finiteNumber.nonnegative(),
  cachedInput: finiteNumber.nonnegative(),
  cacheWrite: finiteNumber.nonnegative(),
  output: finiteNumber.nonnegative(),
})
export type PriceView = z.infer<typeof PriceView>

/**
 * Where a provider's requests go: http(s), never credentials inside the URL. (An API key is only
 * ever sent over https or to this machine: the providers refuse plain http elsewhere.)
 */
export const BaseUrl = z.url().refine(
  (value) => {
    const url = new URL(value)
    return !url.username && !url.password && (url.protocol === 'https:' || url.protocol === 'http:')
  },
  { message: 'must be an http:// or https:// URL, without user:password' },
)

/** True for 127.0.0.0/8, ::1 and localhost: the addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true
  if (h.startsWith('::ffff:')) return isLoopbackHost(h.slice('::ffff:'.length))
  return /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h)
}

export const SettingsPatch = z.strictObject({
  defaultProvider: ProviderId.optional(),
  defaultModel: z.string().min(1).max(200).optional(),
  resultTtlMs: z.number().int().nonnegative().optional(),
  audit: z.boolean().optional(),
  baseUrls: z.partialRecord(ProviderId, BaseUrl.nullable()).optional(),
  priceOverrides: z.record(z.string().min(1), PriceView).optional(),
})
export type SettingsPatch = z.infer<typeof SettingsPatch>

const RangeFilter = {
  since: epochMs.optional(),
  until: epochMs.optional(),
  batchId: z.string().optional(),
}

// ---------------------------------------------------------------- commands

/** Each command: its input schema and (as a type) its result. */
export const commandSchemas = {
  'tasks:enqueue': z.strictObject({
    tasks: z.array(TaskInput).min(1).max(100_000),
    name: z.string().max(200).optional(),
    audit: z.boolean().optional(),
  }),
  'batches:preview': z.strictObject({
    fileName: z.string().max(500),
    content: z.string().max(200 * 1024 * 1024),
    format: BatchFormat.optional(),
    /** Forecast without deduplication; default: the audit setting. */
    audit: z.boolean().optional(),
  }),
  'batches:import': z.strictObject({
    fileName: z.string().max(500),
    content: z.string().max(200 * 1024 * 1024),
    format: BatchFormat.optional(),
    skipInvalid: z.boolean().optional(),
    audit: z.boolean().optional(),
  }),
  'batches:list': z.strictObject({}),
  'batches:pause': z.strictObject({ batchId: z.string().min(1) }),
  'batches:resume': z.strictObject({ batchId: z.string().min(1) }),
  'batches:cancel': z.strictObject({ batchId: z.string().min(1) }),
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
  'scheduler:get': z.strictObject({}),
  'scheduler:set': z.strictObject({
    partition: z.string().min(1),
    params: AimdParamsPatch,
  }),
  'ledger:rollup': z.strictObject(RangeFilter),
  'ledger:over-time': z.strictObject({ ...RangeFilter, bucketMs: z.number().int().min(1000) }),
  'ledger:export': z.strictObject({
    kind: z.enum(['events', 'summary']),
    ...RangeFilter,
  }),
  'settings:get': z.strictObject({}),
  'settings:set': SettingsPatch,
  'secrets:set': z.strictObject({
    provider: ProviderId,
    apiKey: z.string().min(1).max(1000).nullable(),
  }),
} as const

export interface CommandResults {
  'tasks:enqueue': { batchId: string; enqueued: number }
  'batches:preview': {
    format: BatchFormat
    valid: number
    errors: LineError[]
    forecast: ForecastView | null
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
  'tasks:list': { rows: TaskRow[]; total: number }
  'tasks:retry': { retried: number }
  'scheduler:get': PartitionView[]
  'scheduler:set': PartitionView[]
  'ledger:rollup': { byType: TypeRollupView[]; totals: TypeRollupView }
  'ledger:over-time': CostPoint[]
  /** Over IPC: the file written (save dialog). Over HTTP: answered by a download instead. */
  'ledger:export': { path: string | null; rows: number }
  'settings:get': SettingsView
  'settings:set': SettingsView
  'secrets:set': SettingsView
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

// ---------------------------------------------------------------- events

export interface TasksChangedEvent {
  batches: BatchSummary[]
  /** Changed rows since the last event (capped; the table refetches when truncated). */
  tasks: TaskRow[]
  truncated: boolean
}

export interface SchedulerChangedEvent {
  samples: SchedulerSample[]
  changes: LimitChangeView[]
  partitions: PartitionView[]
}

export interface LedgerChangedEvent {
  totals: TypeRollupView
}

export interface EventPayloads {
  'tasks:changed': TasksChangedEvent
  'scheduler:changed': SchedulerChangedEvent
  'ledger:changed': LedgerChangedEvent
}
export type EventName = keyof EventPayloads
export const EVENTS: EventName[] = ['tasks:changed', 'scheduler:changed', 'ledger:changed']

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
