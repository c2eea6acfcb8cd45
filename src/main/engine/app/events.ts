import { EventEmitter } from 'node:events'
import type Database from 'better-sqlite3'
import type {
  BatchSummary,
  EventName,
  EventPayloads,
  LimitChangeView,
  PauseView,
  PartitionView,
  SchedulerSample,
  TeamLedgerBacklog,
  TeamStoreView,
} from '../../../shared/contract'
import type { EngineParts } from './parts'

/** At most this many changed task rows go in one `tasks:changed`; the console refetches beyond. */
const MAX_TASKS_PER_EVENT = 500
/** The batches compared with the database: the ones the console's batch list shows. */
const FOLLOWED_BATCHES = 200
/**
 * A batch whose driver died changes (running → interrupted) with no commit to see: while any
 * followed batch runs, the list is read again this often even when the database did not move.
 */
const RUNNING_RECHECK_MS = 2000

type Sources = Pick<EngineParts, 'queue' | 'scheduler' | 'ledger' | 'runner' | 'clock'> &
  Partial<Pick<EngineParts, 'db'>>

/**
 * The contract's events, batched: the runner and the scheduler report every change as it
 * happens; subscribers get what changed every `intervalMs`, in one event per kind.
 */
export class EngineEvents {
  readonly #parts: Sources
  readonly #emitter = new EventEmitter()
  readonly #changedTasks = new Set<number>()
  readonly #changedBatches = new Set<string>()
  readonly #samples: SchedulerSample[] = []
  readonly #changes: LimitChangeView[] = []
  readonly #pauses: PauseView[] = []
  readonly #lastThrottles = new Map<string, number>()
  /** Partitions this process sampled since the last flush (its scheduler is active). */
  readonly #sampled = new Set<string>()
  /** Partitions sampled at the last flush: one more sample once idle, so the chart falls to zero. */
  #wasActive = new Set<string>()
  /** The last change seen per partition, to announce other processes' changes once. */
  readonly #remoteChanges = new Map<string, string>()
  readonly #timer: NodeJS.Timeout
  #ledgerDirty = false
  #lastLedgerPush = 0
  // A rollup of a million-row ledger takes most of a second: push at most every 2 s, and never
  // spend more than a tenth of the time on it.
  #ledgerPushEveryMs = 2000
  /** A partition was stopped or resumed since the last flush. */
  #stopsMoved = false
  /** Team mode: this machine's ledger rows waiting for the team store. */
  #teamBacklog: (() => TeamLedgerBacklog | null) | null = null
  #teamView: (() => TeamStoreView) | null = null
  /** The backlog as last pushed ('' = none). */
  #lastBacklog = ''
  /** `PRAGMA data_version`: moves only when another connection (another process) commits. */
  readonly #dataVersion: Database.Statement | null
  #lastDataVersion: unknown = null
  /** Each followed batch as last seen (its summary's key), to announce what others changed. */
  #seenBatches = new Map<string, string>()
  #lastBatchRead = 0
  #anyRunning = false

  constructor(parts: Sources, intervalMs = 200) {
    this.#parts = parts
    this.#emitter.setMaxListeners(0)
    this.#dataVersion = parts.db ? parts.db.prepare('PRAGMA data_version').pluck() : null
    // What the database holds at start is not news: only later changes are announced.
    if (this.#dataVersion) this.#followDatabase(true)
    const { runner, scheduler } = parts
    runner.on('task', (e) => {
      this.#changedTasks.add(e.taskId)
      this.#changedBatches.add(e.batchId)
      this.#ledgerDirty = true
    })
    runner.on('batch', (id) => this.#changedBatches.add(id))
    scheduler.on('limit', (c) => {
      this.#changes.push({ ...c })
      this.#remoteChanges.set(c.partition, changeKey(c))
    })
    scheduler.on('budget', (c) => this.#changes.push({ ...c }))
    scheduler.on('pause', (p) => this.#pauses.push({ ...p }))
    // A partition stopped or resumed is news even when nothing else moved (no sample, no change).
    scheduler.on('stopped', () => (this.#stopsMoved = true))
    scheduler.on('resumed', () => (this.#stopsMoved = true))
    scheduler.on('sample', (s) => {
      for (const p of s.partitions) this.#sampled.add(p.partition)
      this.#ledgerDirty = true
    })
    this.#timer = setInterval(() => {
      try {
        this.flush()
      } catch (err) {
        // A busy database must not kill the engine; the next flush sends what this one could not.
        runner.emit('warning', `event flush failed: ${(err as Error).message}`)
      }
    }, intervalMs)
    this.#timer.unref()
  }

  subscribe<E extends EventName>(
    event: E,
    listener: (payload: EventPayloads[E]) => void,
  ): () => void {
    this.#emitter.on(event, listener)
    return () => this.#emitter.off(event, listener)
  }

  /** A batch changed outside the runner (queued, paused, resumed, cancelled): tell the consoles. */
  batchChanged(batchId: string): void {
    this.#changedBatches.add(batchId)
  }

  /**
   * Team mode: where the ledger's backlog is read; when it moves, `team:changed` pushes the
   * team store's whole view (`view`, the backlog in it), as Settings shows it.
   */
  watchTeamBacklog(read: () => TeamLedgerBacklog | null, view: () => TeamStoreView): void {
    this.#teamBacklog = read
    this.#teamView = view
  }

  /** Sends what changed since the last flush. */
  flush(): void {
    const { queue, ledger, clock } = this.#parts
    const emitter = this.#emitter
    const listening = emitter.listenerCount('tasks:changed') > 0
    const remote = listening ? this.#followDatabase(false) : new Map<string, BatchSummary>()
    if (listening && (this.#changedTasks.size || this.#changedBatches.size || remote.size)) {
      const ids = [...this.#changedTasks]
      const own = [...this.#changedBatches]
        .filter((id) => !remote.has(id))
        .map((id) => queue.batch(id))
        .filter((b): b is BatchSummary => b !== null)
      const batches = [...own, ...remote.values()]
      for (const b of own) this.#seenBatches.set(b.id, batchKey(b))
      emitter.emit('tasks:changed', {
        batches,
        tasks: queue.tasksById(ids.slice(0, MAX_TASKS_PER_EVENT)),
        truncated: ids.length > MAX_TASKS_PER_EVENT,
      })
    }
    this.#changedTasks.clear()
    this.#changedBatches.clear()
    if (emitter.listenerCount('scheduler:changed') > 0) {
      const partitions = this.#sample()
      const news = this.#samples.length || this.#changes.length || this.#pauses.length
      if (news || this.#stopsMoved) {
        this.#stopsMoved = false
        emitter.emit('scheduler:changed', {
          samples: this.#samples.splice(0),
          changes: this.#changes.splice(0),
          pauses: this.#pauses.splice(0),
          partitions,
        })
      }
    } else {
      this.#changes.length = 0
      this.#pauses.length = 0
      this.#sampled.clear()
    }
    if (this.#ledgerDirty && clock.now() - this.#lastLedgerPush >= this.#ledgerPushEveryMs) {
      this.#ledgerDirty = false
      this.#lastLedgerPush = clock.now()
      if (emitter.listenerCount('ledger:changed') > 0) {
        const t0 = performance.now()
        const totals = { ...ledger.totals(), taskType: 'total' }
        this.#ledgerPushEveryMs = Math.max(2000, Math.round((performance.now() - t0) * 10))
        emitter.emit('ledger:changed', { totals })
      }
    }
    this.#flushTeam()
  }

  /**
   * The batches other processes changed since the last look (a `pacer run` on the same file, a
   * second console, a team worker): read only when the database moved (`PRAGMA data_version`, a
   * counter SQLite keeps per connection, so the idle cost is one pragma whatever the tables hold)
   * or a followed batch is unfinished and may have lost its driver. What is read is the batch
   * list — its counts are columns kept with every status change — never the tasks: the console
   * re-reads the task rows it shows when the counts move.
   */
  #followDatabase(initial: boolean): Map<string, BatchSummary> {
    const changed = new Map<string, BatchSummary>()
    if (!this.#dataVersion) return changed
    const version = this.#dataVersion.get()
    const now = this.#parts.clock.now()
    const recheck = this.#anyRunning && now - this.#lastBatchRead >= RUNNING_RECHECK_MS
    if (!initial && version === this.#lastDataVersion && !recheck) return changed
    this.#lastDataVersion = version
    this.#lastBatchRead = now
    const seen = new Map<string, string>()
    let running = false
    for (const b of this.#parts.queue.listBatches(FOLLOWED_BATCHES)) {
      const key = batchKey(b)
      seen.set(b.id, key)
      if (b.state === 'running') running = true
      if (!initial && this.#seenBatches.get(b.id) !== key) changed.set(b.id, b)
    }
    this.#seenBatches = seen
    this.#anyRunning = running
    return changed
  }

  #flushTeam(): void {
    if (!this.#teamBacklog || !this.#teamView) return
    if (this.#emitter.listenerCount('team:changed') === 0) return
    const ledgerBacklog = this.#teamBacklog()
    const key = ledgerBacklog ? `${ledgerBacklog.rows}|${ledgerBacklog.since}` : ''
    if (key === this.#lastBacklog) return
    this.#lastBacklog = key
    this.#emitter.emit('team:changed', this.#teamView())
  }

  /**
   * One sample per partition that any process on the database drives (while this one's
   * scheduler is active, or any process has calls in flight or waiting, and once more after),
   * with what all processes hold: the console charts a batch the same whoever runs it.
   */
  #sample(): PartitionView[] {
    const { scheduler, clock } = this.#parts
    const view = scheduler.view()
    const active = new Set<string>()
    const ts = clock.now()
    for (const p of view) {
      this.#remoteChange(p.lastChange)
      const sampled = this.#sampled.has(p.partition)
      const busy = sampled || p.inflight > 0 || p.waiting > 0
      if (busy) active.add(p.partition)
      if (!busy && !this.#wasActive.has(p.partition)) continue
      // A partition first seen mid-session brings its past throttles: they are not news. And
      // counters restart with a new session: a drop is no throttle.
      const before = this.#lastThrottles.get(p.partition) ?? (sampled ? 0 : p.throttles)
      this.#lastThrottles.set(p.partition, p.throttles)
      this.#samples.push({
        partition: p.partition,
        ts,
        limit: p.limit,
        concurrency: p.concurrency,
        inflight: p.inflight,
        waiting: p.waiting,
        throttles: Math.max(0, p.throttles - before),
      })
    }
    // Another process spending money changes the ledger too.
    if (active.size > this.#sampled.size) this.#ledgerDirty = true
    this.#sampled.clear()
    this.#wasActive = active
    return view
  }

  #remoteChange(change: LimitChangeView | null): void {
    if (!change) return
    const key = changeKey(change)
    const seen = this.#remoteChanges.get(change.partition)
    this.#remoteChanges.set(change.partition, key)
    // The first sight of a partition is its history (scheduler:get carries it), not news.
    if (seen !== undefined && seen !== key) this.#changes.push({ ...change })
  }

  /** Sends what is left and stops the timer. */
  close(): void {
    this.flush()
    clearInterval(this.#timer)
  }
}

/** What a console shows of a batch: when it differs, the batch is announced. */
function batchKey(b: BatchSummary): string {
  // A provider batch's poll changes its status and counts, not the batch row: news too.
  const remote = b.providerBatches?.map((r) => [r.remoteId, r.status, r.counts, r.ended])
  return JSON.stringify([
    b.state,
    b.updatedAt,
    b.counts,
    b.stopReason,
    b.owner?.alive,
    b.name,
    remote,
  ])
}

function changeKey(c: LimitChangeView): string {
  return `${c.ts}|${c.from}|${c.to}|${c.reason}`
}
