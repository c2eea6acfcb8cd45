import { EventEmitter } from 'node:events'
import type { ConcurrencyController, ControllerFactory } from './aimd'
import { SeedAimd, mergeAimdParams } from './aimd'
import type { CallAnswer, PacingOptions, PacingSnapshot } from './partition-pacing'
import { PartitionPacing, checkPacingOptions } from './partition-pacing'
import type { CallEstimate } from './budget-reading'
import type { BudgetCost } from './shared-budget'
import { type PacingStore, checkStoreOptions } from './store'
import type { BudgetOptions, Charged } from './store-budget'
import { PartitionBudget } from './store-budget'
import { Heartbeat, sharedView } from './store-link'
import { onePermit } from './permit'
import { MemoryPacingStore } from './store-memory'
import type { AimdParams, Clock, Outcome } from '../core/types'
import { PACER_AIMD, systemClock } from '../core/types'
import { Sampling } from './scheduler-sampling'
import type {
  PartitionSnapshot,
  PartitionState,
  PartitionStop,
  Permit,
  SchedulerEvents,
  SchedulerOptions,
  Sent,
  Waiter,
} from './scheduler-types'
import {
  OUTCOMES,
  PartitionStoppedError,
  SchedulerClosedError,
  checkPartition,
  checkSchedulerOptions,
  listenForAbort,
} from './scheduler-types'

export { PartitionStoppedError, SchedulerClosedError } from './scheduler-types'
export type { PartitionStop, Permit, SchedulerOptions, SchedulerSample } from './scheduler-types'

/**
 * Admission by partition (provider:model), one AIMD controller each. A call is admitted while
 * inflight < controller.concurrency, re-read on every admission as the seed's scheduler does, so a
 * cut applies at once and a raise admits waiters at once. Waiters are served FIFO per partition.
 * With a shared store, inflight counts every scheduler's calls and the controller continues from
 * the shared record, so a cut seen anywhere applies everywhere.
 */
export class Scheduler extends EventEmitter<SchedulerEvents> {
  readonly #clock: Clock
  #createController: ControllerFactory
  readonly #sampling: Sampling
  readonly #partitions = new Map<string, PartitionState>()
  /** Partitions a setup failure stopped, until resume(). */
  readonly #stops = new Map<string, PartitionStop>()
  readonly #pacing: Required<PacingOptions> | undefined
  readonly #store: PacingStore
  readonly #heartbeat: Heartbeat
  readonly #newPartition: (name: string, queue: Waiter[], wake: () => void) => PartitionState
  #defaults: AimdParams
  #closed = false

  /** A scheduler with no partitions yet; they are created on first use. */
  constructor(options: SchedulerOptions = {}) {
    super()
    checkSchedulerOptions(options)
    const {
      clock = systemClock,
      params = {},
      createController,
      sampleIntervalMs = 250,
      pacing,
      store = new MemoryPacingStore(),
      worker = `scheduler-${Math.random().toString(36).slice(2, 10)}`,
    } = options
    this.#clock = clock
    this.#defaults = mergeAimdParams(PACER_AIMD, params)
    this.#createController =
      createController ?? ((partition, p, limit) => new SeedAimd(partition, p, limit))
    this.#sampling = new Sampling(
      sampleIntervalMs,
      () => this.emit('sample', { ts: this.#clock.now(), partitions: this.snapshot() }),
      () => this.#active(),
    )
    this.#pacing =
      pacing === undefined || pacing === false
        ? undefined
        : checkPacingOptions(pacing === true ? {} : pacing)
    checkStoreOptions(store, worker)
    // A store of its own: no other worker can send on its partitions.
    const ownStore = options.store === undefined
    this.#store = store
    this.#newPartition = (partition, queue, wake) => {
      const waiting = () => queue.length
      const createController: ControllerFactory = (...args) => this.#createController(...args)
      const pacing = this.#pacing && new PartitionPacing(partition, this.#pacing, worker, ownStore)
      const adoptLearned: BudgetOptions['adoptLearned'] = (l, n) => pacing?.adopt(l, clock.now(), n)
      const o = { partition, worker, store, createController, waiting, wake, warn: this.#warn }
      const budget = new PartitionBudget(
        { ...o, params: this.#defaults, adoptLearned },
        clock.now(),
      )
      return { name: partition, budget, queue, pacing }
    }
    const leases = () => [...this.#partitions.values()].flatMap((s) => s.budget.lease() ?? [])
    this.#heartbeat = new Heartbeat(store, worker, clock, leases, this.#warn)
  }

  /**
   * Waits for a slot in the partition. Rejects with the signal's reason if aborted while waiting
   * (the waiter is removed), or with SchedulerClosedError after close(). Aborting after the permit
   * was granted does nothing: the caller owns the permit and must release it. `estimate` is what
   * the call should cost, for the rate budget (pacing on).
   */
  acquire(partition: string, signal?: AbortSignal, estimate?: CallEstimate): Promise<Permit> {
    checkPartition(partition, false)
    if (this.#closed) return Promise.reject(new SchedulerClosedError())
    if (signal?.aborted) return Promise.reject(signal.reason)
    const stop = this.#stops.get(partition)
    if (stop) return Promise.reject(new PartitionStoppedError(partition, stop.reason))
    const state = this.#partition(partition)
    let waiter!: Waiter
    const permit = new Promise<Permit>((resolve, reject) => {
      waiter = { resolve, reject, signal, onAbort: undefined, estimate }
    })
    const { queue } = state
    queue.push(waiter)
    // Through the queue even when a slot is free, so FIFO holds whatever the controller does.
    this.#drain(state)
    // Listened to only while it waits: most calls are admitted at once (~2 µs a call less).
    if (signal && queue.length > 0 && (queue.at(-1) === waiter || queue.includes(waiter))) {
      listenForAbort(queue, waiter, signal)
    }
    if (!this.#closed) this.#sampling.start()
    this.#heartbeat.start()
    return permit
  }

  /**
   * Changes AIMD params at once, for one partition or for '*' (every existing partition and the
   * defaults of later ones). Validated for every target before any is changed, so a patch that is
   * invalid for one partition changes none. Emits 'limit' for each moved limit, then 'params'.
   */
  setParams(partition: string, patch: Partial<AimdParams>): void {
    checkPartition(partition)
    const all = partition === '*'
    const targets = all ? [...this.#partitions.values()] : [this.#partition(partition)]
    const nextDefaults = all ? mergeAimdParams(this.#defaults, patch) : this.#defaults
    for (const state of targets) mergeAimdParams(state.budget.controller.params, patch)

    const now = this.#clock.now()
    this.#defaults = nextDefaults
    // On the shared record: the other schedulers pick the params up on their next admission.
    for (const state of targets) state.budget.setParams(patch, now)
    for (const state of targets) this.#drain(state)
    if (all) this.emit('params', { partition: '*', ts: now, params: { ...nextDefaults } })
    for (const state of targets) {
      this.emit('params', { partition: state.name, ts: now, params: state.budget.params })
    }
  }

  /** The partition's params; for '*' or a partition not used yet, the defaults it would get. */
  getParams(partition: string): AimdParams {
    checkPartition(partition)
    const state = this.#partitions.get(partition)
    return state ? state.budget.controller.params : { ...this.#defaults }
  }

  /**
   * Replaces the controller of every partition, each new one starting at its partition's current
   * limit and params, and the one later partitions get. Emits 'limit' (cause `operator`) for each.
   */
  setController(createController: ControllerFactory, name = 'controller'): void {
    if (typeof createController !== 'function') {
      throw new TypeError(
        `Expected \`createController\` to be a function, got \`${String(createController)}\``,
      )
    }
    const states = [...this.#partitions.values()]
    // All are built before any is swapped in: a factory that throws changes nothing.
    const next = states.map((s) =>
      createController(s.name, s.budget.controller.params, s.budget.controller.limit),
    )
    this.#createController = createController
    const ts = this.#clock.now()
    const reason = `operator: ${name}`
    states.forEach((state, i) => {
      state.budget.replaceController(next[i] as ConcurrencyController, ts, reason)
      // The drain emits the operator's change with the others.
      this.#drain(state)
    })
  }

  /**
   * Stops admitting in the partition: its waiters and later acquires reject with
   * PartitionStoppedError (calls in flight land). False when it was stopped already.
   */
  stop(partition: string, reason: string): boolean {
    checkPartition(partition, false)
    if (this.#stops.has(partition)) return false
    const stop: PartitionStop = { partition, ts: this.#clock.now(), reason }
    this.#stops.set(partition, stop)
    const state = this.#partitions.get(partition)
    for (const w of state?.queue.splice(0) ?? []) {
      if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort)
      w.reject(new PartitionStoppedError(partition, reason))
    }
    if (state) state.budget.returnGrants(stop.ts)
    this.emit('stopped', stop)
    return true
  }

  /** Lets a stopped partition (or, for '*', every one) admit again; the partitions resumed. */
  resume(partition: string): string[] {
    checkPartition(partition)
    const names = partition === '*' ? [...this.#stops.keys()] : [partition]
    const resumed = names.filter((name) => this.#stops.delete(name))
    for (const name of resumed) this.emit('resumed', name)
    return resumed
  }

  /** The partition's stop, if a setup failure holds it stopped. */
  stopped(partition: string): PartitionStop | undefined {
    return this.#stops.get(partition)
  }

  /** True when the scheduler paces (pauses, budgets): a refused call may re-acquire at once. */
  get paced(): boolean {
    return this.#pacing !== undefined
  }

  /** Every partition's current state, in creation order. */
  snapshot(): PartitionSnapshot[] {
    const now = this.#clock.now()
    return [...this.#partitions.values()].map((s) => {
      const pacing = s.pacing?.snapshot(now)
      return {
        partition: s.name,
        limit: s.budget.controller.limit,
        concurrency: s.budget.controller.concurrency,
        inflight: s.budget.held,
        waiting: s.queue.length,
        params: s.budget.controller.params,
        throttles: s.budget.throttles,
        successes: s.budget.successes,
        errors: s.budget.errors,
        lastChange: s.budget.lastChange,
        pausedUntil: pacing?.pausedUntil ?? null,
        ...(pacing?.pace ? { pace: pacing.pace } : {}),
        ...(pacing?.pauseReason ? { pauseReason: pacing.pauseReason } : {}),
        ...(this.#stops.has(s.name) ? { stopped: this.#stops.get(s.name) } : {}),
      }
    })
  }

  /**
   * Every partition a scheduler on the store drives, or drove within `recentMs`, with what all
   * of them hold: the console's view. This scheduler's partitions are always in it.
   */
  view(recentMs = 600_000): PartitionSnapshot[] {
    const budgets = [...this.#partitions.values()].map((s) => s.budget)
    const now = this.#clock.now()
    return sharedView(this.#store, now, recentMs, this.snapshot(), budgets, this.#warn)
  }

  /** With pacing on: the partition's pause and rate budget; undefined otherwise or if unused. */
  pacing(partition: string): PacingSnapshot | undefined {
    checkPartition(partition, false)
    const state = this.#partitions.get(partition)
    const now = this.#clock.now()
    return state?.budget.withSharedPause(state.pacing?.snapshot(now), now)
  }

  /** Stops sampling and rejects every waiter with SchedulerClosedError; held permits may still be released. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#sampling.stop()
    this.#heartbeat.stop()
    for (const state of this.#partitions.values()) {
      state.pacing?.stop()
      state.budget.close()
      const waiters = state.queue.splice(0)
      for (const w of waiters) {
        if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort)
        w.reject(new SchedulerClosedError())
      }
    }
  }

  #partition(name: string): PartitionState {
    let state = this.#partitions.get(name)
    if (!state) {
      const queue: Waiter[] = []
      const created: PartitionState = this.#newPartition(name, queue, () => this.#drain(created))
      state = created
      this.#partitions.set(name, state)
    }
    return state
  }

  #admit(
    state: PartitionState,
    estimate: CallEstimate | undefined,
    charged: Charged | null,
  ): Permit {
    const sentAt = this.#clock.now()
    const reservation = state.pacing?.admit(sentAt, estimate)
    return onePermit(state.name, sentAt, (outcome, answer) =>
      this.#release(state, { sentAt, reservation, charged }, outcome, answer),
    )
  }

  /** What the head waiter's call costs in the store's shared announced budget (budgets on). */
  #headCost(state: PartitionState): BudgetCost | undefined {
    return state.pacing?.cost(state.queue[0]?.estimate)
  }

  #release(
    state: PartitionState,
    call: Sent,
    outcome: Outcome,
    answer: CallAnswer | undefined,
  ): void {
    const { sentAt, reservation, charged } = call
    const now = this.#clock.now()
    // The slot is freed before the outcome is checked, so a bad outcome cannot leak capacity.
    if (!OUTCOMES.includes(outcome)) {
      const refund =
        charged && state.pacing?.account(now, sentAt, charged, true, undefined, undefined)
      state.budget.release(now, sentAt, null, null, undefined, false, refund ?? undefined)
      this.#drain(state)
      throw new TypeError(`Unknown outcome \`${String(outcome)}\``)
    }
    // A refusal among successes is lone, whichever worker's calls succeeded (partition-oks.ts).
    const lone =
      state.budget.controller.overshoot?.(sentAt) === true || state.budget.oks.lone(sentAt)
    const settled =
      (reservation && state.pacing?.settle(now, reservation, outcome, answer, lone)) ?? null
    const pause = settled?.pause ?? null
    const refused = outcome === 'throttled' || outcome === 'overloaded'
    let absorbed = settled?.absorbed === true
    const { concurrency, params } = state.budget.controller
    state.pacing?.observeLevel(now, concurrency, params.min, outcome)
    // Nothing left to cut and no budget to pace by: the floor's learned pace answers the refusal
    // (its rate is cut, and the limit learns no ceiling of one from it), and so it does for as
    // long as that pace holds, whatever the limit.
    if (refused && state.pacing && !absorbed) {
      const floor = concurrency <= params.min || state.pacing.floorPacing
      if (floor && state.pacing.floorPaced(now, sentAt)) absorbed = true
    }
    // A refusal the announced budget explains is the budget's to pace, not a concurrency signal.
    const seen = absorbed ? 'near_limit' : outcome
    // The next waiter may go: the release takes the slot again for it in the same store write.
    const handoff = this.#headReady(state, now)
    const account =
      charged && settled
        ? state.pacing?.account(now, sentAt, charged, refused, settled.reading, answer?.usage)
        : undefined
    const cost = handoff ? this.#headCost(state) : undefined
    const learn = state.pacing?.takeLearning(now)
    state.budget.controller.announcedRate?.(state.pacing?.announcedRate(now) ?? null)
    state.budget.controller.heldBack?.(state.pacing?.growthHeld(now, state.queue.length) ?? 0)
    state.budget.release(now, sentAt, outcome, seen, pause?.until, handoff, account, cost, learn)
    // Admit first, emit after (the drain emits the limit change): a throwing listener must not
    // strand waiters.
    this.#drain(state)
    if (pause) this.emit('pause', pause)
    for (const budget of settled?.budgets ?? []) this.emit('budget', budget)
  }

  #drain(state: PartitionState): void {
    while (state.queue.length > 0) {
      const now = this.#clock.now()
      // The shared budget: inflight of every scheduler on the store below the shared limit.
      if (!this.#headReady(state, now) || !state.budget.take(now, this.#headCost(state))) break
      const waiter = state.queue.shift() as Waiter
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort)
      waiter.resolve(this.#admit(state, waiter.estimate, state.budget.charged))
    }
    if (state.queue.length === 0) state.budget.returnGrants(this.#clock.now())
    for (const change of state.budget.takeNews()) this.emit('limit', change)
  }

  /** A pause or the rate budget holds the head, and so the whole FIFO, until it wakes it. */
  #headReady(state: PartitionState, now: number): boolean {
    const head = state.queue[0]
    if (head === undefined) return false
    return state.pacing?.ready(now, head.estimate, () => this.#drain(state)) !== false
  }

  #active(): boolean {
    for (const s of this.#partitions.values()) {
      if (s.budget.held > 0 || s.queue.length > 0) return true
    }
    return false
  }

  readonly #warn = (message: string): void => {
    this.emit('warning', message)
  }
}
