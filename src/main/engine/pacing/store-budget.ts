// The scheduler's side of a shared partition: this worker's permits, its controller kept in step
// with the shared record, and the store calls that admit and release. Works with stores that
// answer at once (memory, SQLite: admission stays synchronous, so a release admits a waiter in
// the same turn) and with stores that answer later (a networked one: one call in flight at a time).
import type { PartitionView } from '../../../shared/contract'
import type { ConcurrencyController } from '../aimd'
import type { AimdParams, Clock, LimitChange, Outcome } from '../types'
import type {
  Admission,
  ControllerState,
  MaybePromise,
  OutcomeCount,
  PacingRecord,
  PacingStore,
  PacingView,
  RecordChange,
  WorkerLease,
} from './store'

export interface BudgetOptions {
  partition: string
  worker: string
  store: PacingStore
  createController: (partition: string, params: AimdParams) => ConcurrencyController
  /** The params a new session starts from. */
  params: AimdParams
  /** Calls of this worker waiting in the partition. */
  waiting: () => number
  /** A slot may have come free, or a store call finished: drain the partition's waiters. */
  wake: () => void
  /** A store call failed; the budget retries on its own. */
  warn: (message: string) => void
}

/** One partition's budget as this worker sees it. */
export class PartitionBudget {
  readonly partition: string
  readonly #o: BudgetOptions
  #controller: ConcurrencyController
  #record: PacingRecord | undefined
  #joined = false
  /** Permits this worker holds. */
  #held = 0
  /** Slots a store granted while its answer was on the way, not handed to a waiter yet. */
  #grants = 0
  /** A call to a store that answers later is in flight: the next one waits for it. */
  #busy = false
  #othersWaiting = 0
  #retry: NodeJS.Timeout | undefined
  #pollDelay: number
  #news: LimitChange[] = []
  #seen: LimitChange | null = null
  /** The last heartbeat reported demand here. */
  #reported = false
  readonly #unsubscribe: () => void
  throttles = 0
  successes = 0
  errors = 0

  constructor(o: BudgetOptions, now: number) {
    this.partition = o.partition
    this.#o = o
    this.#controller = o.createController(o.partition, { ...o.params })
    this.#pollDelay = o.store.poll?.minMs ?? 0
    // Another worker of this process released or retuned the partition: look again at once.
    this.#unsubscribe = o.store.subscribe(o.worker, (partition) => {
      if (partition === this.partition) o.wake()
    })
    this.#join(now)
  }

  get controller(): ConcurrencyController {
    return this.#controller
  }

  /** Permits this worker holds. */
  get held(): number {
    return this.#held
  }

  get othersWaiting(): number {
    return this.#othersWaiting
  }

  get lastChange(): LimitChange | null {
    return this.#record?.lastChange ?? this.#seen
  }

  /** Until when the shared record pauses admissions (0 when not paused). */
  get pausedUntil(): number {
    return this.#record?.pausedUntil ?? 0
  }

  /** Limit changes to announce: this worker's, and other workers' seen when re-reading the record. */
  takeNews(): LimitChange[] {
    if (this.#news.length === 0) return NONE
    const news = this.#news
    this.#news = []
    return news
  }

  /**
   * Takes a slot for the head waiter if the shared budget has one now. Otherwise false, and
   * `wake` is called when one may have come free: at once for this process's releases, at the
   * end of a pause, or by polling with backoff for workers in other processes.
   */
  take(now: number): boolean {
    if (this.#grants > 0) {
      this.#grants--
      this.#held++
      return true
    }
    if (this.#busy) return false
    if (!this.#joined) {
      this.#join(now)
      if (!this.#joined) return false
    }
    const waiting = Math.max(0, this.#o.waiting() - 1)
    return this.#call(
      () => this.#o.store.admit(this.partition, this.#o.worker, now, waiting),
      (a) => this.#admitted(a, now),
      () => this.#grants++,
    )
  }

  /** Gives back slots granted while no waiter was left to take them (they aborted meanwhile). */
  returnGrants(now: number): void {
    while (this.#grants > 0 && !this.#busy) {
      this.#grants--
      this.#held++
      this.release(now, 0, null, null)
    }
  }

  /**
   * Frees one of this worker's slots and feeds the outcome (null: a slot given back unused) to
   * the controller on the shared record, in one store write with the pause, if any.
   */
  release(
    now: number,
    sentAt: number,
    outcome: Outcome | null,
    count: OutcomeCount | null,
    pauseUntil?: number,
  ): void {
    this.#held = Math.max(0, this.#held - 1)
    if (count === 'success') this.successes++
    else if (count === 'throttle') this.throttles++
    else if (count === 'error') this.errors++
    if (!this.#joined) {
      // No record to write to (the store failed): the controller still learns, locally.
      if (outcome)
        this.#announce(
          this.#controller.onOutcome(outcome, { now, sentAt, inflight: this.#held + 1 }),
        )
      return
    }
    let decided: LimitChange | null = null
    const decide = (record: PacingRecord, inflight: number): RecordChange | null => {
      this.#adopt(record)
      decided = outcome ? this.#controller.onOutcome(outcome, { now, sentAt, inflight }) : null
      return this.#changeOf(record, decided, pauseUntil)
    }
    const request = { now, waiting: this.#o.waiting(), outcome: count, decide }
    this.#call(
      () => this.#o.store.release(this.partition, this.#o.worker, request),
      (r) => {
        this.#adopt(r.record, r.changed)
        this.#announce(decided)
      },
    )
  }

  /** Applies an operator's patch (validated by the caller) on the shared record. */
  setParams(patch: Partial<AimdParams>, now: number): void {
    if (!this.#joined) {
      this.#announce(this.#controller.setParams(patch, now))
      return
    }
    let decided: LimitChange | null = null
    const decide = (record: PacingRecord): RecordChange => {
      this.#adopt(record)
      decided = this.#controller.setParams(patch, now)
      return {
        ...this.#changeOf(record, decided),
        params: this.#controller.params,
      }
    }
    this.#call(
      () => this.#o.store.update(this.partition, now, decide),
      (r) => {
        if (r) this.#adopt(r.record, r.changed)
        this.#announce(decided)
      },
    )
  }

  /**
   * What the heartbeat renews: only while this worker holds slots here or waits, and once more
   * when it stopped, so that no other worker holds back for a demand that is gone.
   */
  lease(): WorkerLease | null {
    if (!this.#joined || this.#busy) return null
    const waiting = this.#o.waiting()
    const slots = this.#held + this.#grants
    const active = slots > 0 || waiting > 0
    if (!active && !this.#reported) return null
    this.#reported = active
    return { partition: this.partition, slots, waiting }
  }

  close(): void {
    clearTimeout(this.#retry)
    this.#retry = undefined
    this.#unsubscribe()
  }

  #join(now: number): void {
    const init = { params: this.#controller.params, controller: stateOf(this.#controller, null) }
    this.#call(
      () => this.#o.store.join(this.partition, this.#o.worker, init, now),
      ({ record, created }) => {
        this.#joined = true
        // The live session's last change is history, not news.
        this.#seen = record.lastChange
        if (created) this.#record = record
        else this.#adopt(record)
      },
    )
  }

  #admitted(a: Admission, now: number): boolean {
    this.#othersWaiting = a.othersWaiting
    this.#adopt(a.record)
    if (a.admitted) {
      this.#pollDelay = this.#o.store.poll?.minMs ?? 0
      this.#held++
      return true
    }
    const poll = this.#o.store.poll
    if (a.record.pausedUntil > now) {
      this.#retryIn(a.record.pausedUntil - now)
    } else if (poll && this.#retry === undefined) {
      // Backs off only while polls find nothing: this process's own releases wake it at once.
      this.#retryIn(this.#pollDelay)
      this.#pollDelay = Math.min(poll.maxMs, this.#pollDelay * 2)
    }
    return false
  }

  /**
   * Runs a store call. An answer at once is handled at once and its result returned; a later one
   * (a networked store) holds further calls until it arrives, then `granted` runs for an
   * admission that succeeded and waiters are woken.
   */
  #call<T>(
    run: () => MaybePromise<T>,
    handle: (value: T) => boolean | void,
    granted?: () => void,
  ): boolean {
    let answer: MaybePromise<T>
    try {
      answer = run()
    } catch (err) {
      this.#failed(err)
      return false
    }
    if (!(answer instanceof Promise)) return handle(answer) === true
    this.#busy = true
    answer.then(
      (value) => {
        this.#busy = false
        if (handle(value) === true) {
          // Handed out through the next take(): the scheduler's drain keeps the FIFO.
          this.#held--
          granted?.()
        }
        this.#o.wake()
      },
      (err: unknown) => {
        this.#busy = false
        this.#failed(err)
      },
    )
    return false
  }

  #failed(err: unknown): void {
    this.#o.warn(`pacing store (${this.partition}): ${(err as Error).message}`)
    this.#retryIn(this.#o.store.poll?.maxMs ?? 50)
  }

  #retryIn(ms: number): void {
    if (this.#retry !== undefined) return
    this.#retry = setTimeout(
      () => {
        this.#retry = undefined
        this.#o.wake()
      },
      Math.max(1, Math.ceil(ms)),
    )
    // The wait itself keeps the process alive (the scheduler holds waiters); a stray timer must not.
    this.#retry.unref()
  }

  /** Continues from the shared record; `own`: this worker just wrote it from its controller. */
  #adopt(record: PacingRecord, own = false): void {
    const known = this.#record
    if (known?.version === record.version) return
    this.#record = record
    if (own) return
    const c = this.#controller
    if (!sameParams(c.params, record.params)) {
      this.#controller = this.#o.createController(this.partition, { ...record.params })
    }
    this.#controller.importState?.(record.controller)
    const change = record.lastChange
    if (
      change &&
      !sameChange(change, this.#seen) &&
      !sameChange(change, known?.lastChange ?? null)
    ) {
      this.#seen = change
      this.#news.push(change)
    }
  }

  #announce(change: LimitChange | null): void {
    if (!change) return
    this.#seen = change
    this.#news.push(change)
  }

  /** What the controller's step changed in the record; null when nothing did. */
  #changeOf(
    record: PacingRecord,
    change: LimitChange | null,
    pauseUntil?: number,
  ): RecordChange | null {
    const controller = stateOf(this.#controller, record.controller.lastCutAt)
    const out: RecordChange = {}
    if (!sameState(controller, record.controller)) out.controller = controller
    if (change) out.lastChange = change
    if (pauseUntil !== undefined && pauseUntil > record.pausedUntil) out.pausedUntil = pauseUntil
    return Object.keys(out).length > 0 ? out : null
  }
}

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
 * with what all workers hold, then this worker's `local` partitions the store did not list.
 * `waiting` is this worker's fresher count of what waits in its partitions.
 */
export function sharedView(
  store: PacingStore,
  now: number,
  recentMs: number,
  local: readonly PartitionView[],
  waiting: ReadonlyMap<string, number>,
  warn: (message: string) => void,
): PartitionView[] {
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
  const mine = new Map(local.map((p) => [p.partition, p]))
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
      workers: v.workers,
    }
  })
  return [...out, ...mine.values()]
}

const NONE: LimitChange[] = []

/** A controller's state as the store keeps it; controllers that cannot export share their limit. */
function stateOf(c: ConcurrencyController, lastCutAt: number | null): ControllerState {
  return c.exportState?.() ?? { limit: c.limit, lastCutAt, memory: null }
}

function sameState(a: ControllerState, b: ControllerState): boolean {
  if (a.limit !== b.limit || a.lastCutAt !== b.lastCutAt) return false
  if (a.memory === null || b.memory === null) return a.memory === b.memory
  const keys = Object.keys(a.memory)
  if (keys.length !== Object.keys(b.memory).length) return false
  return keys.every((k) => a.memory?.[k] === b.memory?.[k])
}

function sameParams(a: AimdParams, b: AimdParams): boolean {
  for (const key of Object.keys(a) as (keyof AimdParams)[]) if (a[key] !== b[key]) return false
  return true
}

function sameChange(a: LimitChange | null, b: LimitChange | null): boolean {
  if (a === b) return true
  if (!a || !b) return false
  return a.ts === b.ts && a.from === b.from && a.to === b.to && a.reason === b.reason
}
