import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import { SqliteClaimStore } from '../claims'
import { openDatabase } from '../db'
import type { EngineOptions } from '../engine'
import { Ledger } from '../ledger'
import { Prices } from '../prices'
import { createProviders } from '../providers'
import { createSimProvider } from '../providers/sim'
import { TaskQueue } from '../queue'
import { Runner } from '../runner'
import { Scheduler } from '../scheduler'
import { SettingsStore } from '../settings'
import type { Clock, Provider } from '../types'
import { systemClock } from '../types'
import type { SecretsAccess } from './secrets'
import { envSecrets } from './secrets'

/** What the engine is made of: built once by createEngine, shared by its handlers and views. */
export interface EngineParts {
  readonly db: Database.Database
  readonly dbPath: string
  readonly clock: Clock
  readonly settings: SettingsStore
  readonly prices: Prices
  readonly claims: SqliteClaimStore
  readonly ledger: Ledger
  readonly scheduler: Scheduler
  readonly queue: TaskQueue
  readonly secrets: SecretsAccess
  /** Every provider by id: the built-in ones and the options' extras. */
  readonly providers: Readonly<Record<string, Provider>>
  readonly runner: Runner
}

/** One database, one scheduler, one runner, wired as the options say. */
export function createParts(options: EngineOptions): EngineParts {
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
  const ledger = new Ledger({ db, prices, clock, nativeBinding: options.nativeBinding })
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
  return {
    db,
    dbPath: options.dbPath,
    clock,
    settings,
    prices,
    claims,
    ledger,
    scheduler,
    queue,
    secrets,
    providers,
    runner,
  }
}
