import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import { AgentRegistry } from '../agents/registry'
import { SqliteClaimStore } from '../claims/claims'
import { completedClaims } from '../claims/seeds'
import { openDatabase } from '../db'
import { StepWrites } from '../db/step-writes'
import { wireWriteHealth, type WriteHealth } from '../db/write-failures'
import type { EngineOptions } from './engine'
import { CallJournal } from '../runner/durable/journal'
import { Ledger } from '../ledger/ledger'
import type { ControllerKind } from '../pacing/controllers'
import { controllerFactory } from '../pacing/controllers'
import { Prices } from '../pricing/prices'
import { SpendBudget } from '../pacing/spend-budget'
import { createProviders, type HttpProviderId } from '../providers'
import { createSimProvider } from '../providers/sim'
import { BatchApi, type BatchApiOptions } from '../providers/batch/collector'
import { BatchJournal } from '../providers/batch/journal'
import { toSummary } from '../providers/batch/answers'
import { TaskQueue } from '../queue/queue'
import { Runner, type RetryRun } from '../runner'
import { SqlitePacingStore } from '../pacing/store-sqlite'
import type { TeamStore } from '../team/connect'
import { Scheduler } from '../pacing/scheduler'
import { PacingHistory } from '../pacing/history'
import { SettingsStore } from '../settings/settings'
import { TaskLog } from '../runner/durable/task-log'
import type { Clock, Provider } from '../core/types'
import { systemClock } from '../core/types'
import { WorkerRegistry } from '../queue/workers'
import type { SecretsAccess } from './secrets'
import { envSecrets, providerKey } from './secrets'
import type { OtlpTarget } from '../telemetry/otlp-config'

/** What the engine is made of: built once by createEngine, shared by its handlers and views. */
export interface EngineParts {
  readonly db: Database.Database
  /** The runner's writes, one transaction per task step: commit() before answering a caller. */
  readonly writes: StepWrites
  readonly dbPath: string
  readonly clock: Clock
  /** Each partition's samples and pauses kept for the Concurrency chart (pacing/history.ts). */
  readonly history: PacingHistory
  readonly settings: SettingsStore
  readonly prices: Prices
  readonly claims: SqliteClaimStore
  readonly ledger: Ledger
  /** The batches' spend caps and the reservations of the calls in flight under them. */
  readonly budget: SpendBudget
  readonly scheduler: Scheduler
  readonly queue: TaskQueue
  readonly secrets: SecretsAccess
  /** Base URLs given to this process (command line, environment): they win over Settings. */
  readonly processBaseUrls: Readonly<Partial<Record<HttpProviderId, string>>>
  /** Every provider by id: the built-in ones and the options' extras. */
  readonly providers: Readonly<Record<string, Provider>>
  readonly runner: Runner
  /** This process's row among the workers on the database, and the judge of the others'. */
  readonly workers: WorkerRegistry
  /** Which agent module drives which batch (`--agents`, the console's import). */
  readonly agents: AgentRegistry
  /** Which concurrency controller the scheduler runs, and the swap to another one. */
  readonly controller: ControllerSwitch
  /** The call deadline was given for this engine (`--timeout`): the setting does not move it. */
  readonly callTimeoutFixed: boolean
  /** A teamStore saved through Settings here is confirmed (the desktop app's own window). */
  readonly confirmsTeamStore: boolean
  /** Whether Anthropic calls mark their stable prefix for the prompt cache. */
  readonly promptCaching: PromptCachingSwitch
  /** Team mode's store, when this process paces through one. */
  readonly team: TeamStore | null
  /** `--retry-failed` batches in team mode and when their run began (the runner's option). */
  readonly retryFailedSince: Map<string, RetryRun>
  /** Why team mode, asked for, is off in this process (the store did not answer at its start). */
  readonly teamProblem: string | null
  /**
   * The console's live OTLP export (`pacer serve`, the desktop app): on, and the target given to
   * this process (`--otlp`, OTEL_EXPORTER_OTLP_*), which wins over Settings. null: not a console.
   */
  readonly otlp: {
    processTarget: OtlpTarget | null
    problem: string | null
    /** --otlp-content: prompts and answers on the spans. */
    content: boolean
  } | null
  /** Calls go as provider batches at the batch price (`pacer run --batch-api`); null: live. */
  readonly batchApi: BatchApi | null
}

/**
 * Forgets a cached failure (a retry), in the team's claims too: sent before any claim of the task
 * on the same connection, so Redis forgets it first. True when this database had one.
 */
export function forgetFailure(parts: Pick<EngineParts, 'claims' | 'team' | 'runner'>, fp: string) {
  parts.team?.claims.forgetFailure(fp).catch((err: Error) => {
    parts.runner.emit('warning', `the team store kept a failure to retry: ${err.message}`)
  })
  return parts.claims.forgetFailure(fp)
}

/**
 * `--retry-failed` in team mode: the batch's tasks also run again where the team's store kept a
 * failure from before now that this database never saw (the runner forgets it there first).
 */
export function retryTeamFailures(
  parts: Pick<EngineParts, 'team' | 'retryFailedSince'>,
  batchId: string,
  since: number,
): void {
  if (parts.team) parts.retryFailedSince.set(batchId, { since, forgotten: new Set() })
}

/** This process's prompt caching: the CLI flag until the setting changes, then the setting. */
export interface PromptCachingSwitch {
  readonly enabled: boolean
  /** Called with the setting just stored: from now on the process follows it. */
  set(on: boolean): void
}

/** The scheduler's controller by name: the settings view reads it, the settings handler sets it. */
export interface ControllerSwitch {
  readonly kind: ControllerKind
  /** Swaps every partition's controller at its current limit (and later partitions'). */
  set(kind: ControllerKind): void
}

/** The Concurrency chart's history: what this process's scheduler sampled and paused, by second. */
function recordHistory(
  db: Database.Database,
  scheduler: Scheduler,
  warn: (message: string) => void,
): PacingHistory {
  const history = new PacingHistory(db, warn)
  if (!db.readonly) {
    scheduler.on('sample', (s) => history.record(s.ts, s.partitions))
    scheduler.on('pause', (p) => history.recordPause(p))
  }
  return history
}

/** The scheduler on the pacing store every process shares, and the switch of its controller. */
function createPacing(
  options: EngineOptions,
  deps: { db: Database.Database; clock: Clock; workerId: string; kind: ControllerKind },
): { scheduler: Scheduler; controller: ControllerSwitch } {
  // Every process on the database shares each partition's budget; a dead one's slots come back
  // after the same lease as its claims (the runner's default: 30 s).
  // In team mode, every machine on the team's Redis. A process alone on a partition leases it in
  // blocks (store-sqlite-lean.ts): no write per call until another process shows demand.
  const pacingStore =
    options.team?.pacing ??
    new SqlitePacingStore({ db: deps.db, leaseMs: options.leaseMs ?? 30_000, lean: true })
  let kind = deps.kind
  const scheduler = new Scheduler({
    clock: deps.clock,
    params: options.scheduler,
    createController: controllerFactory(kind),
    // Pauses on retry-after and header-announced budgets are what users get; tests may opt out.
    pacing: options.pacing ?? true,
    store: pacingStore,
    worker: deps.workerId,
    // 200 ms: the console's live chart promises at least 4 updates a second, timer drift included.
    sampleIntervalMs: 200,
  })
  const controller: ControllerSwitch = {
    get kind() {
      return kind
    },
    set(next) {
      scheduler.setController(controllerFactory(next), `${next} controller`)
      kind = next
    },
  }
  return { scheduler, controller }
}

function promptCachingSwitch(
  override: boolean | undefined,
  settings: SettingsStore,
): PromptCachingSwitch {
  let cachingOverride = override
  return {
    get enabled() {
      return cachingOverride ?? settings.get().promptCaching
    },
    set(on) {
      cachingOverride = on
    },
  }
}

/** Every provider by id: the built-in ones (the simulator among them) and the options' extras. */
function createProviderMap(
  options: EngineOptions,
  deps: {
    clock: Clock
    settings: SettingsStore
    secrets: SecretsAccess
    processBaseUrls: EngineParts['processBaseUrls']
    promptCaching: PromptCachingSwitch
    /** The network the HTTP providers use (the batch path's, with --batch-api). */
    fetch?: typeof fetch
  },
): Record<string, Provider> {
  const { settings, secrets, promptCaching } = deps
  const sim = createSimProvider({ clock: deps.clock, ...options.sim })
  return {
    ...createProviders({
      sim,
      // Read at every call, so a base URL or key saved in Settings applies without a restart.
      get baseUrls() {
        return settings.get().baseUrls
      },
      processBaseUrls: deps.processBaseUrls,
      apiKey: (id) => providerKey(secrets, id),
      promptCaching: () => promptCaching.enabled,
      fetch: deps.fetch,
    }),
    ...options.providers,
  }
}

/** The scheduler's warnings said by the runner; the pacing store's failing writes while the disk is full are said once, by the write health. */
function forwardSchedulerWarnings(scheduler: Scheduler, health: WriteHealth, runner: Runner): void {
  scheduler.on('warning', (message) => {
    if (!health.blocked || !/disk is full|disk I\/O error/.test(message)) {
      runner.emit('warning', message)
    }
  })
}

/** The provider-batch path, when the options ask for it (`pacer run --batch-api`). */
function createBatchApi(
  options: EngineOptions,
  deps: Pick<BatchApiOptions, 'db' | 'writes' | 'clock'>,
): BatchApi | null {
  if (!options.batchApi) return null
  return new BatchApi({ ...deps, ...(options.batchApi === true ? {} : options.batchApi) })
}

/** The summaries of batch-API batches carry their provider batches, read from the journal. */
function followProviderBatches(queue: TaskQueue, db: Database.Database): void {
  const journal = new BatchJournal(db)
  queue.followProviderBatches((batchId) => journal.ofBatch(batchId).map(toSummary))
}

/** One database, one scheduler, one runner, wired as the options say. */
export function createParts(options: EngineOptions): EngineParts {
  const clock = options.clock ?? systemClock
  const db =
    options.db ??
    openDatabase(options.dbPath, {
      nativeBinding: options.nativeBinding,
      readOnly: options.readOnly,
      quickCheck: options.checkIntegrity,
    })
  const settings = new SettingsStore(db)
  const stored = settings.get()
  const prices = new Prices(stored.priceOverrides)
  // A step whose commit failed is lost as in a crash: its tasks' leases run out and they run again.
  // A full disk is said once (write-failures.ts), not once per lost step.
  const health = wireWriteHealth(db, options.dbPath, (message) => runner.emit('warning', message))
  const writes = new StepWrites(db, {
    onError: (err) => {
      if (!health.fail(err)) runner.emit('warning', `writes were not saved: ${err.message}`)
    },
    health,
  })
  const claims = new SqliteClaimStore({
    db,
    clock,
    resultTtlMs: options.resultTtlMs ?? stored.resultTtlMs,
    acceptTruncated: options.acceptTruncated ?? stored.acceptTruncated,
    writes,
  })
  const ledger = new Ledger({ db, prices, clock, writes, nativeBinding: options.nativeBinding })
  const budget = new SpendBudget({ db, prices, clock, writes })
  const teamClaims = teamClaimsOf(options, claims, db)
  const workerId =
    options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
  const { scheduler, controller } = createPacing(options, {
    db,
    clock,
    workerId,
    kind: options.controller ?? stored.controller,
  })
  const promptCaching = promptCachingSwitch(options.promptCaching, settings)
  // Registered before any batch names this worker as its driver, renewed for as long as it runs.
  const workers = new WorkerRegistry({ db, clock, id: workerId, leaseMs: options.leaseMs, writes })
  workers.start((err) => runner.emit('warning', `worker heartbeat failed: ${err.message}`))
  writes.commit()
  const queue = new TaskQueue(db, clock, writes, workers)
  followProviderBatches(queue, db)
  const secrets: SecretsAccess = options.secrets ?? envSecrets()
  const processBaseUrls = Object.freeze({ ...options.processBaseUrls })
  const batchApi = createBatchApi(options, { db, writes, clock })
  const providers = createProviderMap(options, {
    clock,
    settings,
    secrets,
    processBaseUrls,
    promptCaching,
    fetch: batchApi?.fetch,
  })
  const agents = new AgentRegistry(db)
  const retryFailedSince = new Map<string, RetryRun>()
  const runner = new Runner({
    queue,
    claims,
    team: teamClaims,
    retryFailedSince,
    scheduler,
    ledger,
    budget,
    teamCaps: options.team?.caps ?? null,
    clock,
    workerId,
    provider: (id) => providers[id],
    batchIds: options.batchIds ?? null,
    leaseMs: options.leaseMs,
    callTimeoutMs: options.callTimeoutMs ?? stored.callTimeoutSeconds * 1000,
    writes,
    driverFor: (task) => agents.driverFor(task),
    // Every execution's effects are journaled, so a rerun replays what was already paid for.
    journal: db.readonly
      ? null
      : { journal: new CallJournal(db, writes), log: new TaskLog(db, writes) },
  })
  const history = recordHistory(db, scheduler, (message) => runner.emit('warning', message))
  forwardSchedulerWarnings(scheduler, health, runner)
  return {
    db,
    writes,
    dbPath: options.dbPath,
    clock,
    settings,
    prices,
    claims,
    ledger,
    budget,
    scheduler,
    history,
    queue,
    secrets,
    processBaseUrls,
    providers,
    runner,
    workers,
    agents,
    controller,
    callTimeoutFixed: options.callTimeoutMs !== undefined,
    confirmsTeamStore: options.confirmsTeamStore ?? false,
    otlp: consoleOtlpPart(options.otlp),
    promptCaching,
    team: options.team ?? null,
    retryFailedSince,
    batchApi,
    // A function while the process tries its store again in the background (team-join.ts).
    get teamProblem() {
      const problem = options.teamProblem
      return typeof problem === 'function' ? problem() : (problem ?? null)
    },
  }
}

/**
 * Team mode's claims: they keep this database's retention (Settings change it), and a server that
 * lost them is re-seeded from this database's completed claims. Null outside team mode.
 */
function teamClaimsOf(options: EngineOptions, claims: SqliteClaimStore, db: Database.Database) {
  const teamClaims = options.team?.claims ?? null
  teamClaims?.follow(claims)
  teamClaims?.seedFrom(completedClaims(db))
  return teamClaims
}

/** The console's live export, as its parts keep it (null: not a console, no export). */
function consoleOtlpPart(otlp: EngineOptions['otlp']): EngineParts['otlp'] {
  return otlp
    ? { processTarget: otlp.target, problem: otlp.problem ?? null, content: otlp.content ?? false }
    : null
}
