// What a scheduler keeps up with its store beside admissions: its leases, and the view of every
// partition the store's workers drive (the console's).
import type { PartitionView } from '../../../shared/contract'
import type { Clock } from '../core/types'
import type { PacingStore, PacingView, WorkerLease } from './store'
import type { PartitionBudget } from './store-budget'
import type { LearnedPaces } from './learned-pace'
import { INITIAL_BURST_MS } from './send-pace'

/**
 * Renews the leases of a worker's partitions while it holds slots or waits, often enough that
 * they never lapse under a live worker. Stops itself when there is nothing to renew.
 */
export class Heartbeat {
  readonly #store: PacingStore
  readonly #worker: string
  readonly #clock: Clock
  readonly #leases: () => WorkerLease[]
  readonly #warn: (message: string) => void
  #timer: NodeJS.Timeout | undefined

  constructor(
    store: PacingStore,
    worker: string,
    clock: Clock,
    leases: () => WorkerLease[],
    warn: (message: string) => void,
  ) {
    this.#store = store
    this.#worker = worker
    this.#clock = clock
    this.#leases = leases
    this.#warn = warn
  }

  start(): void {
    if (this.#timer !== undefined) return
    // A third of the lease, and at least every second so the console's waiting counts stay fresh.
    const every = Math.max(10, Math.min(1000, Math.floor(this.#store.leaseMs / 3)))
    this.#timer = setInterval(() => this.beat(), every)
    this.#timer.unref()
    // At once as well: the other workers learn of this one's demand (their fair shares) now.
    setImmediate(() => this.beat())
  }

  beat(): void {
    const leases = this.#leases()
    if (leases.length === 0) {
      this.stop()
      return
    }
    try {
      const done = this.#store.heartbeat(this.#worker, leases, this.#clock.now())
      if (done instanceof Promise) done.catch((err: unknown) => this.#failed(err))
    } catch (err) {
      this.#failed(err)
    }
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }

  #failed(err: unknown): void {
    this.#warn(`pacing heartbeat: ${(err as Error).message}`)
  }
}

// A networked store answers the console's view later: the last answer is shown meanwhile.
const lastViews = new WeakMap<PacingStore, PacingView[]>()

/**
 * The console's view of a store: every partition any worker drives or drove within `recentMs`,
 * with what all workers hold, then this worker's `local` partitions the store did not list. Its
 * `budgets` know fresher what waits in its own partitions.
 */
export function sharedView(
  store: PacingStore,
  now: number,
  recentMs: number,
  local: readonly PartitionView[],
  budgets: readonly PartitionBudget[],
  warn: (message: string) => void,
): PartitionView[] {
  const waiting = new Map(budgets.map((b) => [b.partition, b.waitingEverywhere]))
  let views = lastViews.get(store) ?? []
  try {
    const answer = store.partitions(now, recentMs)
    if (answer instanceof Promise) {
      answer.then(
        (v) => lastViews.set(store, v),
        (err: unknown) => warn(`pacing store: ${(err as Error).message}`),
      )
    } else {
      views = answer
    }
  } catch (err) {
    warn(`pacing store: ${(err as Error).message}`)
  }
  const outage = store.outage ? { storeOutage: store.outage } : {}
  const mine = new Map(local.map((p) => [p.partition, p]))
  const ownViews = new Map(mine)
  const out: PartitionView[] = views.map((v) => {
    const { record } = v
    mine.delete(record.partition)
    return {
      partition: record.partition,
      limit: record.controller.limit,
      concurrency: record.concurrency,
      inflight: v.inflight,
      waiting: waiting.get(record.partition) ?? v.waiting,
      throttles: v.throttles,
      successes: v.successes,
      errors: v.errors,
      params: record.params,
      lastChange: record.lastChange,
      // This process's own pacing knows the retry-after it was told; the record, every worker's.
      pausedUntil: sharedPause(
        ownViews.get(record.partition)?.pausedUntil ?? null,
        record.pausedUntil,
        now,
      ),
      workers: v.workers,
      // Driven only by other processes: the paces they learned, from the shared record.
      ...learnedView(record.learned),
      ...ownOnly(ownViews.get(record.partition)),
      ...outage,
    }
  })
  return [...out, ...[...mine.values()].map((p) => ({ ...p, ...outage }))]
}

/**
 * What only the scheduler that drives a partition here knows, not the shared record: its stop,
 * the pace it learned from the headers and refusals it read, why it last paused.
 */
function ownOnly(own: PartitionView | undefined): Partial<PartitionView> {
  if (!own) return {}
  return {
    ...(own.stopped ? { stopped: own.stopped } : {}),
    ...(own.pace ? { pace: own.pace } : {}),
    ...(own.pauseReason ? { pauseReason: own.pauseReason } : {}),
  }
}

/**
 * The pace the record's learned paces show (learned-pace.ts): the floor's rate, or the announced
 * rate's burst once refusals narrowed it (the rate itself is the pacing process's reading of the
 * headers, not on the record). Empty when nothing was learned.
 */
function learnedView(learned: LearnedPaces | null | undefined): Partial<PartitionView> {
  const rate = learned?.floor?.ratePerMs
  if (rate != null) {
    return { pace: { burstMs: 0, perMinute: { requests: rate * 60_000 }, learned: true } }
  }
  const send = learned?.send
  return send && send.burstMs < INITIAL_BURST_MS
    ? { pace: { burstMs: send.burstMs, perMinute: {} } }
    : {}
}

/** The later of two pauses still in force, or null when neither is. */
function sharedPause(local: number | null, shared: number, now: number): number | null {
  const until = Math.max(local ?? 0, shared)
  return until > now ? until : null
}
