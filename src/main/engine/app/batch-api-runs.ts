// The console's runs through the vendors' batch APIs (issue 22): each batch the import dialog
// sends at the batch price is driven by an engine of its own on the same database, opened as
// `pacer run --batch-api` opens its engine (every call waits in a provider batch rather than in a
// slot, for up to the 24-hour window) and named the batch's driver, so the console's own runner,
// which runs only batches without one, never sends its calls live. It closes when its batch ends.
import type { ProviderBatchSummary } from '../../../shared/contract'
import type { AgentModule } from '../agents/module'
import type { BatchAgents } from '../agents/registry'
import { EngineError } from '../core/errors'
import { baseUrlInEffect, keyAnswer, type HttpProviderId } from '../providers'
import { ANTHROPIC_VERSION } from '../providers/anthropic'
import { BatchApi } from '../providers/batch/collector'
import { toSummary } from '../providers/batch/answers'
import { parseBaseUrl } from '../providers/http-options'
import { keyForCall } from '../providers/keys'
import type { ResolvedTask } from '../intake/task-resolver'
import type { NewBatch } from '../queue/queue'
import type { BatchRun } from './batch-run'
import type { Engine, EngineOptions } from './engine'
import type { EngineParts } from './parts'
import { keyRefusals } from './provider-access'
import { providerKey } from './secrets'

/** The providers whose calls can go through a batch API (the simulator has none). */
export const BATCH_API_PROVIDERS: readonly string[] = ['openai', 'anthropic', 'openai-compatible']

/**
 * Every call of the run waits in a provider batch rather than in a slot: the scheduler admits them
 * all, so a round holds every task's next call (the vendors' limits split it, not the scheduler).
 */
const BATCH_CONCURRENCY = 100_000
/** The longest a call may wait (the vendors' completion window is 24 hours). */
const BATCH_CALL_TIMEOUT_MS = 86_400_000
/** A batch takes minutes to hours: a poll a minute is plenty. */
const DEFAULT_POLL_MS = 60_000
const DEFAULT_SETTLE_MS = 2_000

/** The engine options of a run through the batch API (`pacer run --batch-api`, the console's). */
export function batchApiEngineOptions(timing: {
  pollMs: number
  settleMs: number
}): Pick<EngineOptions, 'batchApi' | 'scheduler' | 'callTimeoutMs'> {
  return {
    batchApi: { pollMs: timing.pollMs, settleMs: timing.settleMs },
    scheduler: { min: BATCH_CONCURRENCY, max: BATCH_CONCURRENCY, initial: BATCH_CONCURRENCY },
    callTimeoutMs: BATCH_CALL_TIMEOUT_MS,
  }
}

/** PACER_BATCH_POLL_MS / PACER_BATCH_SETTLE_MS as the CLI reads them; a bad value: the default. */
function envTiming(env: NodeJS.ProcessEnv): { pollMs: number; settleMs: number } {
  const ms = (name: string, fallback: number) => {
    const n = Number(env[name])
    return Number.isInteger(n) && n >= 1 ? n : fallback
  }
  return {
    pollMs: ms('PACER_BATCH_POLL_MS', DEFAULT_POLL_MS),
    settleMs: ms('PACER_BATCH_SETTLE_MS', DEFAULT_SETTLE_MS),
  }
}

interface Run {
  engine: Engine
  run: BatchRun
  /** Settles once the run ended and its engine is shut down. */
  done: Promise<void>
}

/** The console engine's batch-API runs: started by an import or a resume, one engine each. */
export class BatchApiRuns {
  readonly #parts: EngineParts
  readonly #options: EngineOptions
  readonly #open: (options: EngineOptions) => Engine
  readonly #changed: (batchId: string) => void
  readonly #runs = new Map<string, Run>()
  /** A batch path on this engine's connection, for cancels of batches no run here polls. */
  #cancels: BatchApi | null = null
  #closed = false

  /** `open` opens an engine (createEngine); `changed` tells the consoles a batch changed. */
  constructor(
    parts: EngineParts,
    options: EngineOptions,
    open: (o: EngineOptions) => Engine,
    changed: (batchId: string) => void,
  ) {
    this.#parts = parts
    this.#options = options
    this.#open = open
    this.#changed = changed
  }

  /** Why these providers' calls cannot go through a batch API from here; null when they can. */
  refusal(providers: Iterable<string>): string | null {
    const wanted = new Set(providers)
    const without = [...wanted].filter((p) => !BATCH_API_PROVIDERS.includes(p)).sort()
    if (without.length > 0) {
      return `the Batch API needs provider openai, anthropic or openai-compatible; these tasks use ${without.join(', ')} (the simulator has no batch API)`
    }
    if (this.#options.dbPath === ':memory:') {
      return 'the Batch API needs a database file: its submissions are journaled there'
    }
    const refused = keyRefusals(this.#parts, { providers: wanted })
    return refused.length > 0 ? refused.join('; ') : null
  }

  /** Queues the tasks as a batch whose calls go as provider batches, and starts its run. */
  enqueue(
    tasks: readonly ResolvedTask[],
    batch: Omit<NewBatch, 'state' | 'driver'>,
    agents?: { module: AgentModule; batch: BatchAgents },
    budgetMicros?: number,
  ): string {
    this.#refuse(tasks.map((t) => t.provider))
    const engine = this.#engine()
    try {
      if (agents) engine.agents.remember(agents.module)
      const id = engine.batches.enqueue(
        tasks,
        { ...batch, driver: engine.runner.workerId },
        agents?.batch,
        budgetMicros,
      )
      engine.batches.markBatchApi(id)
      this.#drive(id, engine)
      return id
    } catch (err) {
      void engine.shutdown({ graceMs: 0 })
      throw err
    }
  }

  /**
   * Whether `batchId` is a batch-API batch whose run has stopped: a resume opens a run for it
   * here (its polling resumes; nothing is submitted twice), instead of sending its calls live.
   */
  resumes(batchId: string): boolean {
    const b = this.#parts.queue.batch(batchId)
    return b !== null && b.batchApi === true && b.state === 'interrupted'
  }

  /** Resumes a stopped batch-API batch on a run of this process. */
  resume(batchId: string): void {
    this.#start(batchId, ['queued', 'running'], (engine) => {
      // The run's engine writes on a connection of its own: this one's open step must not hold
      // the lock (or an older snapshot) meanwhile.
      this.#parts.writes.commit()
      if (!engine.batches.resume(batchId, { driver: engine.runner.workerId, fromPaused: false })) {
        throw new EngineError('invalid_input', `batch ${batchId} is not interrupted`, 'batchId')
      }
    })
  }

  /**
   * Asks the vendor to cancel one provider batch (Pacer's number for it), with the key Settings
   * gives its server: what finished is kept, collected and priced by the run polling it.
   */
  async cancel(id: number): Promise<ProviderBatchSummary> {
    const api = this.#cancelPath()
    const s = api.journal.submission(id)
    if (!s) throw new EngineError('not_found', `no provider batch ${id}`, 'id')
    const run = s.batchId === null ? undefined : this.#runs.get(s.batchId)
    const via = run?.engine.batchApi ?? api
    try {
      await via.cancel(String(id), this.#keyHeaders(s.vendor, s.endpoint, id))
    } catch (err) {
      throw err instanceof RangeError ? new EngineError('invalid_input', err.message, 'id') : err
    }
    // Written on this engine's own connection, which the consoles' follow of the database skips.
    if (s.batchId !== null) this.#changed(s.batchId)
    return toSummary(api.journal.submission(id)!)
  }

  /**
   * A whole-batch Cancel of a batch-API batch (issue 22): a run of this console sees the batch
   * cancelled and cancels its provider batches itself, letting what finished land, priced
   * (cancel-batch.ts). A batch no run here drives (its `pacer` process's, or stopped): its open
   * provider batches are cancelled with the keys Settings gives, so the vendor stops the work; a
   * live `pacer` driver collects what finished, a stopped one keeps it in the journal for a retry.
   */
  async cancelRemote(batchId: string): Promise<void> {
    if (this.#runs.has(batchId) || this.#parts.queue.batch(batchId)?.batchApi !== true) return
    const api = this.#cancelPath()
    for (const s of api.journal.ofBatch(batchId)) {
      if (s.ended || s.remoteId === null) continue
      try {
        await this.cancel(s.id)
      } catch (err) {
        this.#parts.runner.emit('warning', `batch ${batchId}: ${(err as Error).message}`)
      }
    }
  }

  /**
   * Retries failed or cancelled tasks (a batch's, or by id) of batch-API batches through the
   * batch API again, never live at twice the price; null when none of them is such a batch.
   */
  async retry(filter: { batchId?: string; taskIds?: readonly number[] }): Promise<number | null> {
    const { queue, db } = this.#parts
    // The tasks to retry per batch: a batch's own filter, or the ids given that are of it.
    const byBatch = new Map<string, { batchId: string; taskIds?: number[] }>()
    if (filter.taskIds === undefined || filter.taskIds.length === 0) {
      if (filter.batchId !== undefined) byBatch.set(filter.batchId, { batchId: filter.batchId })
    } else {
      const rows = db
        .prepare(
          'SELECT id, batch_id AS batchId FROM tasks WHERE id IN (SELECT value FROM json_each(?))',
        )
        .all(JSON.stringify(filter.taskIds)) as { id: number; batchId: string }[]
      for (const r of rows) {
        let f = byBatch.get(r.batchId)
        if (!f) byBatch.set(r.batchId, (f = { batchId: r.batchId, taskIds: [] }))
        f.taskIds!.push(r.id)
      }
    }
    const viaApi = [...byBatch.keys()].filter((id) => queue.batch(id)?.batchApi === true)
    if (viaApi.length === 0) return null
    if (viaApi.length < byBatch.size) {
      throw new EngineError(
        'invalid_input',
        'these tasks are of batches sent live and of batches sent through the Batch API: retry them apart',
        'taskIds',
      )
    }
    let retried = 0
    for (const batchId of viaApi) retried += await this.#retryOne(batchId, byBatch.get(batchId)!)
    return retried
  }

  /** `filter` names the batch (its run's runner takes it up) and, maybe, which of its tasks. */
  async #retryOne(
    batchId: string,
    filter: { batchId: string; taskIds?: number[] },
  ): Promise<number> {
    const running = this.#runs.get(batchId)
    if (running && this.#parts.queue.batch(batchId)?.state !== 'cancelled') {
      return running.engine.batches.retry(filter)
    }
    // A cancelled batch's run sends no more rounds: the retry runs on a new one once it ended.
    await running?.done
    let retried = 0
    this.#start(batchId, ['failed', 'cancelled'], (engine) => {
      // Named its driver first: the console's own runner never picks its requeued tasks up.
      this.#parts.queue.setDriver(batchId, engine.runner.workerId)
      this.#parts.writes.commit()
      retried = engine.batches.retry(filter)
    })
    return retried
  }

  /**
   * Opens a run's engine for the batch (its tasks in `statuses` must be able to go through a batch
   * API from here), lets `begin` queue its work on it, and drives it on the batch API.
   */
  #start(batchId: string, statuses: string[], begin: (engine: Engine) => void): void {
    const providers = this.#parts.db
      .prepare(
        `SELECT DISTINCT provider FROM tasks WHERE batch_id = ? AND status IN (SELECT value FROM json_each(?))`,
      )
      .pluck()
      .all(batchId, JSON.stringify(statuses)) as string[]
    this.#refuse(providers)
    const engine = this.#engine()
    try {
      begin(engine)
      engine.batches.markBatchApi(batchId)
      this.#drive(batchId, engine)
    } catch (err) {
      void engine.shutdown({ graceMs: 0 })
      throw err
    }
  }

  /**
   * Stops every run (the console is closing): the calls waiting for their provider batches let
   * go at once (the batches stay at the vendor, journaled), and the batches are left interrupted
   * for a Resume, which polls them again.
   */
  async close(): Promise<void> {
    this.#closed = true
    this.#cancels?.close()
    const runs = [...this.#runs.values()]
    for (const r of runs) r.run.stop()
    await Promise.all(runs.map((r) => r.done))
  }

  #refuse(providers: Iterable<string>): void {
    const why = this.refusal(providers)
    if (why !== null) throw new EngineError('batch_api_refused', why, 'batchApi')
  }

  #engine(): Engine {
    if (this.#closed) throw new EngineError('closed', 'the console is closing')
    const o = this.#options
    return this.#open({
      dbPath: o.dbPath,
      nativeBinding: o.nativeBinding,
      clock: o.clock,
      providers: o.providers,
      sim: o.sim,
      secrets: o.secrets,
      processBaseUrls: o.processBaseUrls,
      controller: o.controller,
      promptCaching: o.promptCaching,
      resultTtlMs: o.resultTtlMs,
      acceptTruncated: o.acceptTruncated,
      leaseMs: o.leaseMs,
      batchIds: [],
      ...batchApiEngineOptions(envTiming(process.env)),
    })
  }

  /** Drives the batch to its end (as `pacer run` does), then closes its engine. */
  #drive(batchId: string, engine: Engine): void {
    const off = engine.onWarning((m) => this.#parts.runner.emit('warning', m))
    // No grace when it stops: its calls wait on the vendor for hours, not seconds.
    const run = engine.batches.drive(batchId, { graceMs: 0 })
    const done = run.done
      .then(
        () => {},
        (err: unknown) =>
          this.#parts.runner.emit('warning', `batch ${batchId}: ${(err as Error).message}`),
      )
      .finally(async () => {
        off()
        this.#runs.delete(batchId)
        await engine.shutdown({ graceMs: 0 })
      })
      .then(() => {})
    this.#runs.set(batchId, { engine, run, done })
  }

  #cancelPath(): BatchApi {
    const { db, writes, clock } = this.#parts
    this.#cancels ??= new BatchApi({ db, writes, clock })
    return this.#cancels
  }

  /**
   * The key a cancel carries: the one this console's calls to that server carry (the provider
   * whose base URL in effect is the submission's server), under the same rule as a call's.
   */
  #keyHeaders(
    vendor: 'openai' | 'anthropic',
    endpoint: string,
    id: number,
  ): Record<string, string> {
    const parts = this.#parts
    const origin = new URL(endpoint).origin
    const ids: HttpProviderId[] =
      vendor === 'anthropic' ? ['anthropic'] : ['openai-compatible', 'openai']
    for (const provider of ids) {
      const { url } = baseUrlInEffect(
        provider,
        parts.processBaseUrls,
        parts.settings.get().baseUrls,
      )
      let base
      try {
        base = parseBaseUrl(url)
      } catch {
        continue
      }
      if (base.url.origin !== origin) continue
      const key = providerKey(parts.secrets, provider)
      const checked = keyForCall(
        provider,
        () => keyAnswer(provider, url, key, parts.processBaseUrls),
        base,
      )
      if ('refused' in checked) {
        throw new EngineError('key_refused', checked.refused.error ?? 'key refused', 'id')
      }
      const k = checked.key
      if (k === null) return {}
      return vendor === 'anthropic'
        ? { 'x-api-key': k, 'anthropic-version': ANTHROPIC_VERSION }
        : { authorization: `Bearer ${k}` }
    }
    throw new EngineError(
      'invalid_input',
      `provider batch ${id} was sent to ${origin}, which no ${vendor} base URL in Settings names now: set it back to cancel it`,
      'id',
    )
  }
}
