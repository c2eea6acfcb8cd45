import type Database from 'better-sqlite3'
import type {
  CommandHandlers,
  EventName,
  EventPayloads,
  LineError,
  LedgerFilter,
} from '../../../shared/contract'
import type { AgentRegistry } from '../agents/registry'
import type { ParsedTask } from '../intake/batch-file'
import type { SqliteClaimStore } from '../claims/claims'
import type { Ledger } from '../ledger/ledger'
import { Results, type ResultsExportOptions } from '../results/results'
import type { ControllerKind } from '../pacing/controllers'
import type { PacingOptions } from '../pacing/partition-pacing'
import type { Prices } from '../pricing/prices'
import type { HttpProviderId } from '../providers'
import type { BatchApi, BatchApiOptions } from '../providers/batch/collector'
import type { SimProviderOptions } from '../providers/sim'
import type { TaskQueue } from '../queue/queue'
import type { Runner } from '../runner'
import type { Scheduler } from '../pacing/scheduler'
import type { SettingsStore } from '../settings/settings'
import type { AimdParams, Clock, Provider } from '../core/types'
import type { ResolvedTask, TaskDefaults } from './batch-lifecycle'
import { BatchLifecycle } from './batch-lifecycle'
import { EngineEvents } from './events'
import { ProviderId } from '../../../shared/contract'
import { batchHandlers } from './handlers/batches'
import { BatchApiRuns } from './batch-api-runs'
import { budgetHandlers } from './handlers/budgets'
import { watchBudgetAlerts } from './budget-alerts'
import { ledgerHandlers, noTeamStore } from './handlers/ledger'
import { resultsHandlers } from './handlers/results'
import { schedulerHandlers } from './handlers/scheduler'
import { settingsHandlers, teamStoreView } from './handlers/settings'
import { taskHandlers } from './handlers/tasks'
import { createParts, type EngineParts } from './parts'
import { commitOpenScopes } from '../db/step-writes'
import type { SecretsAccess } from './secrets'
import { HTTP_PROVIDERS, keyRefusals, type KeyScope } from './provider-access'
import { budgets, type Budgets } from './budgets'
import { EngineError } from '../core/errors'
import type { TeamStore } from '../team/connect'
import { startTeamLedger } from '../team/ledger/source'
import { teamCsv } from '../team/ledger/team-read'
import type { OtlpTarget } from '../telemetry/otlp-config'
import { ConsoleTraceExport, contentOption } from '../telemetry/console-export'
import { effectiveOtlpTarget } from './observability'

export type { StreamedStart } from './batch-stream'
export type { SecretsAccess }

export interface EngineOptions {
  /** The database file (created with its folder if missing). Ignored when `db` is given. */
  dbPath: string
  db?: Database.Database
  /** better-sqlite3 binary for another ABI (Electron). */
  nativeBinding?: string
  /**
   * Opens the database read only, for commands that only read (summary, batches, export): the
   * engine is never started, and a write through it fails with SQLITE_READONLY.
   */
  readOnly?: boolean
  /** SQLite's quick_check on open; a damaged file is refused (openDatabase's quickCheck). */
  checkIntegrity?: boolean
  /** @default systemClock */
  clock?: Clock
  /** @default `${hostname}:${pid}:${random}` */
  workerId?: string
  /** Extra or replacement providers by id. */
  providers?: Record<string, Provider>
  /** Options of the built-in simulated provider. */
  sim?: SimProviderOptions
  /** AIMD defaults for every partition. @default PACER_AIMD */
  scheduler?: Partial<AimdParams>
  /**
   * The concurrency controller for this engine, overriding the stored setting (CLI --controller).
   * @default the `controller` setting ('adaptive' unless changed)
   */
  controller?: ControllerKind
  /**
   * Anthropic prompt caching for this engine, overriding the stored setting (CLI
   * --no-prompt-cache) until the setting is changed.
   * @default the `promptCaching` setting (on unless changed)
   */
  promptCaching?: boolean
  /** The scheduler's pacing (retry-after pauses, header budgets); false turns it off. @default true */
  pacing?: PacingOptions | boolean
  /** Result retention for this engine, overriding the stored setting (CLI --result-ttl). */
  resultTtlMs?: number
  /** Reuse truncated answers for this engine, overriding the setting (CLI --accept-truncated). */
  acceptTruncated?: boolean
  /** Claim and task lease. @default 30_000 */
  leaseMs?: number
  /** One provider call's deadline, overriding the stored setting (CLI --timeout). */
  callTimeoutMs?: number
  /** Only run these batches (the CLI). @default null = every running batch */
  batchIds?: string[] | null
  secrets?: SecretsAccess
  /**
   * Base URLs given to this process (the CLI's --base-url, OPENAI_BASE_URL and the like): they win
   * over Settings, and a key from the environment may go to them. @default {}
   */
  processBaseUrls?: Partial<Record<HttpProviderId, string>>
  /** How often batched events are pushed to subscribers. @default 200 */
  eventIntervalMs?: number
  /** Team mode: pacing shared through this connected store; closed by shutdown. */
  team?: TeamStore
  /**
   * A teamStore saved through this engine's Settings is the user's own choice (the desktop app's
   * window), so later processes join it. A console others may reach (`pacer serve`) stores it
   * unconfirmed: a process joins it only when given it (--store, PACER_STORE). @default false
   */
  confirmsTeamStore?: boolean
  /**
   * Team mode was asked for and could not start: why, as Settings shows it (the process runs
   * alone); a function when that changes while it runs (team-join.ts tries the store again).
   */
  teamProblem?: string | (() => string | null)
  /**
   * A console (`pacer serve`, the desktop app): the batches it runs are exported live to the
   * OTLP target given to the process (`target`: --otlp, OTEL_EXPORTER_OTLP_*) or else the one in
   * Settings; `problem`: why the process's own setting was refused. Absent: no export (the CLI's
   * `pacer run` exports its batch itself).
   */
  otlp?: { target: OtlpTarget | null; problem?: string | null; content?: boolean }
  /**
   * Calls to OpenAI (and compatible servers) and Anthropic go as provider batches at the batch
   * price, journaled so a rerun resumes polling instead of submitting again. @default off
   */
  batchApi?: boolean | Omit<BatchApiOptions, 'db' | 'writes' | 'clock'>
}

export interface Engine {
  readonly db: Database.Database
  readonly dbPath: string
  readonly queue: TaskQueue
  readonly ledger: Ledger
  readonly scheduler: Scheduler
  readonly runner: Runner
  readonly claims: SqliteClaimStore
  readonly prices: Prices
  readonly settings: SettingsStore
  /** The answers: every task's, in input order (`pacer results`), and one task's detail. */
  readonly results: Results
  /** Where batches are queued, resumed, paused, cancelled and driven (console and CLI alike). */
  readonly batches: BatchLifecycle
  /** The spend caps: the runs' (`pacer run --budget`) and the kept ones (`pacer budgets`). */
  readonly budgets: Budgets
  /** Which agent module drives which batch; modules loaded by this process. */
  readonly agents: AgentRegistry
  /** The provider-batch path when the engine was opened with `batchApi`; null: calls go live. */
  readonly batchApi: BatchApi | null
  readonly handlers: CommandHandlers
  subscribe<E extends EventName>(
    event: E,
    listener: (payload: EventPayloads[E]) => void,
  ): () => void
  /**
   * Paid answers not on disk (yet): while the database cannot take writes, and after a stop
   * with it still full (then they are lost). `blocked`: whether it still cannot.
   */
  heldAnswers(): { count: number; costMicros: number; unpriced: number; blocked: boolean }
  /** Background trouble that did not stop the work (a database write that failed). */
  onWarning(listener: (message: string) => void): () => void
  /** `scope` 'team': the whole team's ledger from the team store (no filter), with machines. */
  exportCsv(
    kind: 'events' | 'summary',
    out: NodeJS.WritableStream,
    filter?: LedgerFilter,
    scope?: 'machine' | 'team',
  ): Promise<{ rows: number }>
  /** Streams the answers of a batch (default: the latest) as JSONL or CSV to `out`, then ends it. */
  exportResults(
    out: NodeJS.WritableStream,
    options: ResultsExportOptions,
  ): Promise<{ rows: number }>
  /**
   * Gives each task its provider and model (the defaults, or the settings'), checks them, and
   * computes its claim identity. Problems come back per line, nothing throws.
   */
  resolve(
    tasks: readonly ParsedTask[],
    defaults?: TaskDefaults,
  ): { tasks: ResolvedTask[]; errors: LineError[] }
  /**
   * Why the keys of these providers (or of a batch's unfinished tasks) would not go to their base
   * URLs, one line each; empty when every key may go. Every call would be refused the same way.
   */
  keyRefusals(scope: KeyScope): string[]
  /** Queues resolved tasks as one batch (all or nothing); returns its id. */
  enqueue(
    tasks: readonly ResolvedTask[],
    batch: {
      name: string
      source: string | null
      sourceHash: string | null
      audit: boolean
      /** The `pacer run` process that drives the batch; absent for console batches. */
      driver?: string | null
    },
  ): string
  start(): void
  /** Aborts every call in flight now (a second Ctrl-C): claims released, tasks requeued. */
  abort(): void
  /** Stops admitting, finishes or releases in-flight work, closes the database. */
  shutdown(opts?: { graceMs?: number }): Promise<void>
}

/**
 * Every command commits the runner's open step before it answers: what a caller is told has
 * happened is on disk (and visible to other processes) by then.
 */
function committing(writes: { commit(): void }, handlers: CommandHandlers): CommandHandlers {
  const wrapped: Record<string, (input: never) => unknown> = {}
  for (const [name, handler] of Object.entries(handlers)) {
    wrapped[name] = (input: never) => {
      // Another engine of this process may hold the write lock in an open step: commit it first.
      commitOpenScopes()
      const out = (handler as (i: never) => unknown)(input)
      if (out instanceof Promise) return out.finally(() => writes.commit())
      writes.commit()
      return out
    }
  }
  return wrapped as unknown as CommandHandlers
}

/** The composition root: one database, one scheduler, one runner, and the contract's handlers. */
export function createEngine(options: EngineOptions): Engine {
  const parts = createParts(options)
  const { db, runner, scheduler, ledger } = parts
  const events = new EngineEvents(parts, options.eventIntervalMs)
  let started = false
  let closed = false
  const start = () => {
    if (started) return
    started = true
    runner.start()
  }
  const batches = new BatchLifecycle(parts, events, start)
  // A console's imports and resumes through the batch API run on engines of their own; an engine
  // that is itself a batch path (`pacer run --batch-api`, one of those runs) opens none.
  const batchApiRuns =
    options.batchApi || options.readOnly
      ? null
      : new BatchApiRuns(parts, options, createEngine, (id) => events.batchChanged(id))
  // The task detail redacts every key this engine could send, wherever a payload quotes one.
  const results = new Results(db, () =>
    ProviderId.options.map((id) => (id === 'sim' ? null : parts.secrets.get(id))),
  )
  const team = options.team
  // Team mode: this database's rows also go to the team's stream, read back off the hot path.
  const teamLedger = team && !options.readOnly ? teamLedgerOf(options, db, team) : null
  const teamBacklog = () => teamLedger?.appender.backlog ?? null
  if (teamLedger) events.watchTeamBacklog(teamBacklog, () => teamStoreView(parts, teamBacklog()))
  const spendCaps = budgets(parts)
  const alerts = watchBudgetAlerts(parts.budget, (m) => runner.emit('warning', m))
  // The team's caps say their thresholds once across the team, from the machine that crossed them.
  const teamAlerts = team ? watchBudgetAlerts(team.caps, (m) => runner.emit('warning', m)) : null
  const handlers = committing(parts.writes, {
    ...taskHandlers(parts, batches, batchApiRuns),
    ...budgetHandlers(parts, spendCaps, batches),
    ...batchHandlers(parts, batches, batchApiRuns),
    ...schedulerHandlers(parts, batches),
    ...ledgerHandlers(parts, teamLedger?.appender ?? null),
    ...resultsHandlers(results),
    ...settingsHandlers(parts, teamBacklog),
  })
  const traces = consoleTraces(parts)
  return {
    db,
    dbPath: options.dbPath,
    queue: parts.queue,
    ledger,
    scheduler,
    runner,
    claims: parts.claims,
    prices: parts.prices,
    settings: parts.settings,
    results,
    batches,
    budgets: spendCaps,
    agents: parts.agents,
    batchApi: parts.batchApi,
    handlers,
    subscribe: (event, listener) => events.subscribe(event, listener),
    heldAnswers: () => ({
      count: 0,
      costMicros: 0,
      unpriced: 0,
      ...parts.writes.health?.held(),
      blocked: parts.writes.health?.blocked ?? false,
    }),
    onWarning(listener) {
      runner.on('warning', listener)
      return () => runner.off('warning', listener)
    },
    exportCsv: (kind, out, filter, scope = 'machine') => {
      if (scope !== 'team') return ledger.exportCsv(kind, out, filter)
      if (!team) return Promise.reject(noTeamStore())
      if (filter && Object.values(filter).some((v) => v !== undefined)) {
        const why =
          'the team ledger is exported whole: since, until and batchId filter this machine'
        return Promise.reject(new EngineError('invalid_input', why, 'scope'))
      }
      return teamCsv(team.ledger, kind, out)
    },
    exportResults: (out, opts) => results.export(out, opts),
    resolve: (tasks, defaults) => batches.resolve(tasks, defaults),
    keyRefusals: (scope) => keyRefusals(parts, scope),
    enqueue: (tasks, batch) => batches.enqueue(tasks, batch),
    start,
    abort: () => runner.abortAll(),
    async shutdown(opts = {}) {
      if (closed) return
      closed = true
      await batchApiRuns?.close()
      await runner.stop(opts)
      parts.batchApi?.close()
      // The batches' last spans, read before the database closes (bounded, whatever the collector).
      await traces?.close()
      // The thresholds its last rows crossed reach their webhook before the process ends.
      await new Promise((r) => setImmediate(r))
      await team?.caps.settled()
      await Promise.all([alerts.drain(), teamAlerts?.drain()])
      alerts.stop()
      teamAlerts?.stop()
      parts.workers.stop()
      events.close()
      scheduler.close()
      parts.history.flush(parts.clock.now())
      try {
        parts.writes.commit()
      } catch (err) {
        // Lost to a full disk: said by the write health; what it held is counted (heldAnswers).
        if (!parts.writes.health?.fail(err)) throw err
      }
      parts.writes.health?.close()
      // The rows of this run go to the team's stream before its connection closes.
      await teamLedger?.close()
      await ledger.close()
      if (!options.db) db.close()
      await options.team?.close()
    },
  }
}

/** Team mode: this database's rows also go to the team's stream, read back off the hot path. */
function teamLedgerOf(
  options: EngineOptions,
  db: EngineParts['db'],
  team: NonNullable<EngineOptions['team']>,
): ReturnType<typeof startTeamLedger> {
  return startTeamLedger({
    db,
    dbPath: options.dbPath,
    nativeBinding: options.nativeBinding,
    stream: team.ledger,
    onStatus: (status) => team.report(status),
  })
}

/** A console's live OTLP export of the batches it runs, or null when it has none. */
function consoleTraces(parts: EngineParts): ConsoleTraceExport | null {
  if (!parts.otlp) return null
  const { runner } = parts
  return new ConsoleTraceExport({
    db: parts.db,
    runner,
    target: () => effectiveOtlpTarget(parts).target,
    content: parts.otlp.content
      ? (target) =>
          contentOption(
            process.env,
            target,
            HTTP_PROVIDERS.map((id) => parts.secrets.get(id)),
          )
      : undefined,
    warn: (message) => runner.emit('warning', message),
  })
}
