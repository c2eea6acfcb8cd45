import { EventEmitter } from 'node:events'
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import type {
  BatchSummary,
  CommandHandlers,
  EventName,
  EventPayloads,
  ForecastView,
  LimitChangeView,
  LineError,
  ProviderId,
  SchedulerSample,
  SettingsView,
} from '../../shared/contract'
import type { ParsedTask } from './batch-file'
import { formatFromName, parseBatchFile, validateTask } from './batch-file'
import { SqliteClaimStore } from './claims'
import { openDatabase } from './db'
import { EngineError } from './errors'
import { executionFingerprint } from './fingerprint'
import { forecastBatch } from './forecast'
import { checkIdempotencyKey } from './idempotency-keys'
import type { LedgerFilter } from './ledger'
import { Ledger } from './ledger'
import { Prices } from './prices'
import type { SimProviderOptions } from './providers/sim'
import { DEFAULT_BASE_URLS, createProviders, type HttpProviderId } from './providers'
import { SIM_DEFAULT_MODEL, createSimProvider } from './providers/sim'
import { TaskQueue } from './queue'
import { Runner } from './runner'
import { Scheduler } from './scheduler'
import { SettingsStore } from './settings'
import type { AimdParams, Clock, Provider } from './types'
import { systemClock } from './types'

/** A task ready to queue: provider and model resolved, `fp` is its claim identity. */
export interface ResolvedTask extends ParsedTask {
  provider: string
  model: string
  /** The execution's fingerprint (task + provider + model + steps). */
  runFp: string
}

/** Where API keys live: the desktop's safeStorage vault, or the environment in headless mode. */
export interface SecretsAccess {
  get(provider: ProviderId): string | null
  set?(provider: ProviderId, apiKey: string | null): void
  readonly available: boolean
  readonly reason: string | null
}

export interface EngineOptions {
  /** The database file (created with its folder if missing). Ignored when `db` is given. */
  dbPath: string
  db?: Database.Database
  /** better-sqlite3 binary for another ABI (Electron). */
  nativeBinding?: string
  /** @default systemClock */
  clock?: Clock
  /** @default `${hostname}:${pid}:${random}` */
  workerId?: string
  /** Extra or replacement providers by id. */
  providers?: Record<string, Provider>
  /** Options of the built-in simulated provider. */
  sim?: SimProviderOptions
  /** AIMD defaults for every partition. @default SEED_AIMD */
  scheduler?: Partial<AimdParams>
  /** Result retention for this engine, overriding the stored setting (CLI --result-ttl). */
  resultTtlMs?: number
  /** Claim and task lease. @default 30_000 */
  leaseMs?: number
  /** Only run these batches (the CLI). @default null = every running batch */
  batchIds?: string[] | null
  secrets?: SecretsAccess
  /** How often batched events are pushed to subscribers. @default 200 */
  eventIntervalMs?: number
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
  readonly handlers: CommandHandlers
  subscribe<E extends EventName>(
    event: E,
    listener: (payload: EventPayloads[E]) => void,
  ): () => void
  exportCsv(
    kind: 'events' | 'summary',
    out: NodeJS.WritableStream,
    filter?: LedgerFilter,
  ): Promise<{ rows: number }>
  /**
   * Gives each task its provider and model (the defaults, or the settings'), checks them, and
   * computes its claim identity. Problems come back per line, nothing throws.
   */
  resolve(
    tasks: readonly ParsedTask[],
    defaults?: { provider?: string; model?: string },
  ): { tasks: ResolvedTask[]; errors: LineError[] }
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
  /** Stops admitting, finishes or releases in-flight work, closes the database. */
  shutdown(opts?: { graceMs?: number }): Promise<void>
}

/** The composition root: one database, one scheduler, one runner, and the contract's handlers. */
export function createEngine(options: EngineOptions): Engine {
  const clock = options.clock ?? systemClock
  const db = options.db ?? openDatabase(options.dbPath, { nativeBinding: options.nativeBinding })
  const settings = new SettingsStore(db)
  const stored = settings.get()
  const prices = new Prices(stored.priceOverrides)
  const claims = new SqliteClaimStore({
    db,
    clock,
    resultTtlMs: options.resultTtlMs ?? stored.resultTtlMs,
  })
  const ledger = new Ledger({ db, prices, clock })
  // 200 ms: the console's live chart promises at least 4 updates a second, timer drift included.
  const scheduler = new Scheduler({ clock, params: options.scheduler, sampleIntervalMs: 200 })
  const queue = new TaskQueue(db, clock)
  const secrets: SecretsAccess = options.secrets ?? envSecrets()
  const sim = createSimProvider({ clock, ...options.sim })
  const providers: Record<string, Provider> = {
    ...createProviders({
      sim,
      // Read at every call, so a base URL or key saved in Settings applies without a restart.
      get baseUrls() {
        return settings.get().baseUrls
      },
      apiKey: (id) => secrets.get(id),
    }),
    ...options.providers,
  }
  const workerId =
    options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
  const runner = new Runner({
    queue,
    claims,
    scheduler,
    ledger,
    clock,
    workerId,
    provider: (id) => providers[id],
    batchIds: options.batchIds ?? null,
    leaseMs: options.leaseMs,
  })

  // ------------------------------------------------------------ batched events
  const emitter = new EventEmitter()
  emitter.setMaxListeners(0)
  const changedTasks = new Set<number>()
  const changedBatches = new Set<string>()
  const samples: SchedulerSample[] = []
  const changes: LimitChangeView[] = []
  const lastThrottles = new Map<string, number>()
  let ledgerDirty = false
  let lastLedgerPush = 0
  // A rollup of a million-row ledger takes most of a second: push at most every 2 s, and never
  // spend more than a tenth of the time on it.
  let ledgerPushEveryMs = 2000

  runner.on('task', (e) => {
    changedTasks.add(e.taskId)
    changedBatches.add(e.batchId)
    ledgerDirty = true
  })
  runner.on('batch', (id) => changedBatches.add(id))
  scheduler.on('limit', (c) => changes.push({ ...c }))
  scheduler.on('sample', (s) => {
    for (const p of s.partitions) {
      const before = lastThrottles.get(p.partition) ?? 0
      lastThrottles.set(p.partition, p.throttles)
      samples.push({
        partition: p.partition,
        ts: s.ts,
        limit: p.limit,
        concurrency: p.concurrency,
        inflight: p.inflight,
        waiting: p.waiting,
        throttles: p.throttles - before,
      })
    }
    ledgerDirty = true
  })

  const flush = () => {
    if (emitter.listenerCount('tasks:changed') > 0 && (changedTasks.size || changedBatches.size)) {
      const ids = [...changedTasks]
      const batches = [...changedBatches]
        .map((id) => queue.batch(id))
        .filter((b): b is BatchSummary => b !== null)
      emitter.emit('tasks:changed', {
        batches,
        tasks: queue.tasksById(ids.slice(0, 500)),
        truncated: ids.length > 500,
      })
    }
    changedTasks.clear()
    changedBatches.clear()
    if (samples.length || changes.length) {
      emitter.emit('scheduler:changed', {
        samples: samples.splice(0),
        changes: changes.splice(0),
        partitions: scheduler.snapshot(),
      })
    }
    if (ledgerDirty && clock.now() - lastLedgerPush >= ledgerPushEveryMs) {
      ledgerDirty = false
      lastLedgerPush = clock.now()
      if (emitter.listenerCount('ledger:changed') > 0) {
        const t0 = performance.now()
        const totals = { ...ledger.totals(), taskType: 'total' }
        ledgerPushEveryMs = Math.max(2000, Math.round((performance.now() - t0) * 10))
        emitter.emit('ledger:changed', { totals })
      }
    }
  }
  const flushTimer = setInterval(() => {
    try {
      flush()
    } catch (err) {
      // A busy database must not kill the engine; the next flush sends what this one could not.
      runner.emit('warning', `event flush failed: ${(err as Error).message}`)
    }
  }, options.eventIntervalMs ?? 200)
  flushTimer.unref()

  // ------------------------------------------------------------ commands
  const resolve: Engine['resolve'] = (tasks, defaults) => {
    const current = settings.get()
    const defaultProvider = defaults?.provider ?? current.defaultProvider
    const defaultModel =
      defaults?.model ?? (defaultProvider === current.defaultProvider ? current.defaultModel : null)
    const resolved: ResolvedTask[] = []
    const errors: LineError[] = []
    for (const t of tasks) {
      const provider = t.provider ?? defaultProvider
      if (!Object.prototype.hasOwnProperty.call(providers, provider)) {
        errors.push({
          line: t.line,
          field: 'provider',
          message: `unknown provider "${provider}" (known: ${Object.keys(providers).join(', ')})`,
        })
        continue
      }
      const model = t.model ?? (provider === defaultProvider ? defaultModel : null)
      if (!model) {
        errors.push({
          line: t.line,
          field: 'model',
          message:
            provider === defaultProvider
              ? `required: no default model is set for "${provider}"`
              : `required for provider "${provider}": only the default provider (${defaultProvider}) has a default model`,
        })
        continue
      }
      const runFp = executionFingerprint(t.payloadFp, { provider, model, steps: t.steps })
      resolved.push({ ...t, provider, model, runFp, fp: t.key === null ? runFp : t.fp })
    }
    return { tasks: resolved, errors }
  }

  const enqueue: Engine['enqueue'] = (tasks, batch) => {
    const now = clock.now()
    const id = db
      .transaction(() => {
        for (const t of tasks) {
          if (t.key === null) continue
          try {
            // A key names one execution: the same key with another payload, model or step count
            // is a different request, refused like Stripe refuses it.
            checkIdempotencyKey(db, t.key, t.runFp, now)
          } catch (err) {
            throw EngineError.from(err, `line ${t.line}`)
          }
        }
        return queue.createBatch(
          batch,
          tasks.map((t) => ({
            seq: t.line,
            type: t.type,
            payloadJson: t.payloadJson,
            fp: t.fp,
            key: t.key,
            steps: t.steps,
            provider: t.provider,
            model: t.model,
          })),
        )
      })
      .immediate()
    runner.addBatch(id)
    changedBatches.add(id)
    return id
  }

  /** Resolves, then throws the first problem as a command error naming its line or field. */
  const resolveOrThrow = (tasks: readonly ParsedTask[], fieldOf: (e: LineError) => string) => {
    const { tasks: resolved, errors } = resolve(tasks)
    const first = errors[0]
    if (first) {
      const field = fieldOf(first)
      throw new EngineError('invalid_task', `${field}: ${first.message}`, field)
    }
    return resolved
  }

  const forecastOf = (tasks: readonly ResolvedTask[], audit?: boolean): ForecastView => {
    const { byType, total, unpricedTasks } = forecastBatch(tasks, prices, {
      dedup: !(audit ?? settings.get().audit),
    })
    return { byType, total, unpricedTasks }
  }

  const settingsView = (): SettingsView => {
    const s = settings.get()
    const providerView = (id: ProviderId) => {
      const key = secrets.get(id)
      return {
        baseUrl: s.baseUrls[id] ?? null,
        hasKey: key !== null,
        // Only long keys get a hint: the last 4 of a short key reveal too much of it.
        keyHint: key && key.length >= 20 ? `…${key.slice(-4)}` : null,
      }
    }
    return {
      dbPath: options.dbPath,
      defaultProvider: s.defaultProvider,
      defaultModel: s.defaultModel,
      resultTtlMs: claims.resultTtlMs,
      audit: s.audit,
      providers: {
        sim: providerView('sim'),
        openai: providerView('openai'),
        anthropic: providerView('anthropic'),
        'openai-compatible': providerView('openai-compatible'),
      },
      priceOverrides: s.priceOverrides,
      priceTableVersion: prices.version,
      secretStorage: { available: secrets.available, reason: secrets.reason },
    }
  }

  /**
   * An API key goes only where it was entered for. Pointing a provider that has a key at another
   * origin removes the stored key (the operator enters it again for the new server); a key from
   * the environment cannot be removed, so its provider's base URL cannot be moved.
   */
  const guardKeysOnNewOrigins = (baseUrls: Partial<Record<ProviderId, string | null>>) => {
    const current = settings.get().baseUrls
    for (const [id, next] of Object.entries(baseUrls) as [ProviderId, string | null][]) {
      if (id === 'sim' || secrets.get(id) === null) continue
      const origin = (url: string | null | undefined) =>
        new URL(url ?? DEFAULT_BASE_URLS[id as HttpProviderId]).origin
      if (origin(next) === origin(current[id])) continue
      if (!secrets.set) {
        throw new EngineError(
          'base_url_locked',
          `${id}'s API key comes from the environment: its base URL cannot be moved to another server here (the key would go there)`,
          `baseUrls.${id}`,
        )
      }
      secrets.set(id, null)
    }
  }

  const batchOrThrow = (batchId: string): BatchSummary => {
    const b = queue.batch(batchId)
    if (!b) throw new EngineError('not_found', `no batch with id ${batchId}`, 'batchId')
    return b
  }

  const handlers: CommandHandlers = {
    'tasks:enqueue': (input) => {
      const errors: { line: number; field?: string; message: string }[] = []
      const parsed = input.tasks
        .map((t, i) => validateTask(t, i + 1, errors))
        .filter((t): t is ParsedTask => t !== null)
      const fieldOf = (e: LineError) => `tasks[${e.line - 1}]${e.field ? `.${e.field}` : ''}`
      const first = errors[0]
      if (first) {
        const field = fieldOf(first)
        throw new EngineError('invalid_task', `${field}: ${first.message}`, field)
      }
      const resolved = resolveOrThrow(parsed, fieldOf)
      const audit = input.audit ?? settings.get().audit
      const name = input.name ?? `console ${new Date(clock.now()).toISOString()}`
      const batchId = enqueue(resolved, { name, source: 'console', sourceHash: null, audit })
      return { batchId, enqueued: resolved.length }
    },
    'batches:preview': (input) => {
      const format = input.format ?? formatFromName(input.fileName)
      const parsed = parseBatchFile(input.content, format)
      const { tasks, errors } = resolve(parsed.tasks)
      return {
        format,
        valid: tasks.length,
        errors: sortErrors([...parsed.errors, ...errors]),
        forecast: tasks.length ? forecastOf(tasks, input.audit) : null,
      }
    },
    'batches:import': (input) => {
      const format = input.format ?? formatFromName(input.fileName)
      const parsed = parseBatchFile(input.content, format)
      const { tasks, errors: runErrors } = resolve(parsed.tasks)
      const errors = sortErrors([...parsed.errors, ...runErrors])
      const skipped = new Set(errors.map((e) => e.line)).size
      if (tasks.length === 0 || (errors.length > 0 && !input.skipInvalid)) {
        return { batchId: null, enqueued: 0, skipped: 0, errors }
      }
      const audit = input.audit ?? settings.get().audit
      const batchId = enqueue(tasks, {
        name: input.fileName,
        source: input.fileName,
        sourceHash: null,
        audit,
      })
      return { batchId, enqueued: tasks.length, skipped, errors }
    },
    'batches:list': () => queue.listBatches(),
    'batches:pause': ({ batchId }) => {
      batchOrThrow(batchId)
      queue.setBatchState(batchId, 'paused', ['running', 'interrupted'])
      changedBatches.add(batchId)
      return batchOrThrow(batchId)
    },
    'batches:resume': ({ batchId }) => {
      batchOrThrow(batchId)
      // Resumed from the console, a stopped `pacer run` batch becomes the consoles' to run.
      const b = queue.batch(batchId)
      if (b && b.state === 'interrupted') queue.setDriver(batchId, null)
      queue.setBatchState(batchId, 'running', ['paused', 'interrupted'])
      // Everything may have finished while it was paused: then it is simply done.
      queue.settleBatch(batchId)
      runner.addBatch(batchId)
      changedBatches.add(batchId)
      return batchOrThrow(batchId)
    },
    'batches:cancel': ({ batchId }) => {
      batchOrThrow(batchId)
      queue.setBatchState(batchId, 'cancelled', ['running', 'paused', 'interrupted'])
      queue.cancelQueued(batchId)
      runner.cancelRunning(batchId)
      changedBatches.add(batchId)
      return batchOrThrow(batchId)
    },
    'tasks:list': (input) => queue.listTasks(input),
    'tasks:retry': (input) => {
      const { count, fps } = queue.retry(input)
      // A retry means "try again": a failure kept as a result would answer it without trying.
      for (const fp of fps) claims.forgetFailure(fp)
      if (input.batchId) runner.addBatch(input.batchId)
      runner.pump()
      return { retried: count }
    },
    'scheduler:get': () => scheduler.snapshot(),
    'scheduler:set': ({ partition, params }) => {
      // Partitions come from tasks (provider:model); the console tunes those, or all of them.
      if (partition !== '*' && !scheduler.snapshot().some((p) => p.partition === partition)) {
        throw new EngineError(
          'not_found',
          `no partition "${partition}" yet: partitions appear when their first call is made; use "*" for all`,
          'partition',
        )
      }
      try {
        scheduler.setParams(partition, params)
      } catch (err) {
        throw EngineError.from(err, 'params')
      }
      runner.pump()
      return scheduler.snapshot()
    },
    'ledger:rollup': (filter) => ({
      byType: ledger.rollupByType(filter),
      totals: { ...ledger.totals(filter), taskType: 'total' },
    }),
    'ledger:over-time': ({ bucketMs, since, until }) =>
      ledger.costOverTime({ bucketMs, since, until }),
    'ledger:export': () => {
      throw new EngineError(
        'transport_export',
        'CSV export is answered by the transport: a save dialog in the desktop app, a download over HTTP',
      )
    },
    'settings:get': () => settingsView(),
    'settings:set': (patch) => {
      try {
        if (patch.priceOverrides) prices.setOverrides(patch.priceOverrides)
      } catch (err) {
        throw EngineError.from(err, 'priceOverrides')
      }
      if (patch.baseUrls) guardKeysOnNewOrigins(patch.baseUrls)
      const current = settings.get()
      if (
        patch.defaultProvider !== undefined &&
        patch.defaultProvider !== current.defaultProvider &&
        patch.defaultModel === undefined
      ) {
        // The old default model belongs to the old provider (sim-small on openai is a 404).
        if (patch.defaultProvider !== 'sim') {
          throw new EngineError(
            'invalid_input',
            `defaultModel: required when the default provider changes to ${patch.defaultProvider}`,
            'defaultModel',
          )
        }
        patch = { ...patch, defaultModel: SIM_DEFAULT_MODEL }
      }
      settings.set(patch)
      if (patch.resultTtlMs !== undefined) claims.resultTtlMs = patch.resultTtlMs
      return settingsView()
    },
    'secrets:set': ({ provider, apiKey }) => {
      // Removing a key must work even when the keyring is gone: that is when it matters most.
      if (!secrets.set || (!secrets.available && apiKey !== null)) {
        throw new EngineError(
          'secret_storage_unavailable',
          secrets.reason ?? 'API keys cannot be stored here',
          'apiKey',
        )
      }
      secrets.set(provider, apiKey)
      return settingsView()
    },
  }

  let started = false
  let closed = false
  return {
    db,
    dbPath: options.dbPath,
    queue,
    ledger,
    scheduler,
    runner,
    claims,
    prices,
    settings,
    handlers,
    subscribe(event, listener) {
      emitter.on(event, listener)
      return () => emitter.off(event, listener)
    },
    exportCsv: (kind, out, filter) => ledger.exportCsv(kind, out, filter),
    resolve,
    enqueue,
    start() {
      if (started) return
      started = true
      runner.start()
    },
    async shutdown(opts = {}) {
      if (closed) return
      closed = true
      await runner.stop(opts)
      flush()
      clearInterval(flushTimer)
      scheduler.close()
      if (!options.db) db.close()
    },
  }
}

function sortErrors(errors: LineError[]): LineError[] {
  return errors.sort((a, b) => a.line - b.line)
}

/** Headless mode: keys come from the environment and are never written anywhere. */
export function envSecrets(env: NodeJS.ProcessEnv = process.env): SecretsAccess {
  const vars: Record<ProviderId, string | undefined> = {
    sim: undefined,
    openai: env.OPENAI_API_KEY,
    anthropic: env.ANTHROPIC_API_KEY,
    'openai-compatible': env.PACER_OPENAI_COMPATIBLE_API_KEY,
  }
  return {
    get: (provider) => vars[provider] || null,
    available: false,
    reason:
      'headless mode keeps no keys: set OPENAI_API_KEY, ANTHROPIC_API_KEY or PACER_OPENAI_COMPATIBLE_API_KEY in the environment of `pacer serve`',
  }
}

export { SIM_DEFAULT_MODEL }
