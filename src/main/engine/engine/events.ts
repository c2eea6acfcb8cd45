import { EventEmitter } from 'node:events'
import type {
  BatchSummary,
  EventName,
  EventPayloads,
  LimitChangeView,
  PauseView,
  SchedulerSample,
} from '../../../shared/contract'
import type { EngineParts } from './parts'

/** At most this many changed task rows go in one `tasks:changed`; the console refetches beyond. */
const MAX_TASKS_PER_EVENT = 500

type Sources = Pick<EngineParts, 'queue' | 'scheduler' | 'ledger' | 'runner' | 'clock'>

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
  readonly #timer: NodeJS.Timeout
  #ledgerDirty = false
  #lastLedgerPush = 0
  // A rollup of a million-row ledger takes most of a second: push at most every 2 s, and never
  // spend more than a tenth of the time on it.
  #ledgerPushEveryMs = 2000

  constructor(parts: Sources, intervalMs = 200) {
    this.#parts = parts
    this.#emitter.setMaxListeners(0)
    const { runner, scheduler } = parts
    runner.on('task', (e) => {
      this.#changedTasks.add(e.taskId)
      this.#changedBatches.add(e.batchId)
      this.#ledgerDirty = true
    })
    runner.on('batch', (id) => this.#changedBatches.add(id))
    scheduler.on('limit', (c) => this.#changes.push({ ...c }))
    scheduler.on('budget', (c) => this.#changes.push({ ...c }))
    scheduler.on('pause', (p) => this.#pauses.push({ ...p }))
    scheduler.on('sample', (s) => {
      for (const p of s.partitions) {
        const before = this.#lastThrottles.get(p.partition) ?? 0
        this.#lastThrottles.set(p.partition, p.throttles)
        this.#samples.push({
          partition: p.partition,
          ts: s.ts,
          limit: p.limit,
          concurrency: p.concurrency,
          inflight: p.inflight,
          waiting: p.waiting,
          throttles: p.throttles - before,
        })
      }
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

  /** Sends what changed since the last flush. */
  flush(): void {
    const { queue, scheduler, ledger, clock } = this.#parts
    const emitter = this.#emitter
    if (
      emitter.listenerCount('tasks:changed') > 0 &&
      (this.#changedTasks.size || this.#changedBatches.size)
    ) {
      const ids = [...this.#changedTasks]
      const batches = [...this.#changedBatches]
        .map((id) => queue.batch(id))
        .filter((b): b is BatchSummary => b !== null)
      emitter.emit('tasks:changed', {
        batches,
        tasks: queue.tasksById(ids.slice(0, MAX_TASKS_PER_EVENT)),
        truncated: ids.length > MAX_TASKS_PER_EVENT,
      })
    }
    this.#changedTasks.clear()
    this.#changedBatches.clear()
    if (this.#samples.length || this.#changes.length || this.#pauses.length) {
      emitter.emit('scheduler:changed', {
        samples: this.#samples.splice(0),
        changes: this.#changes.splice(0),
        pauses: this.#pauses.splice(0),
        partitions: scheduler.snapshot(),
      })
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
  }

  /** Sends what is left and stops the timer. */
  close(): void {
    this.flush()
    clearInterval(this.#timer)
  }
}
