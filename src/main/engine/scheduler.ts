import { EventEmitter } from 'node:events'
import type { PartitionView } from '../../shared/contract'
import type { ConcurrencyController, ControllerFactory } from './aimd'
import { SeedAimd, mergeAimdParams } from './aimd'
import type {
  CallAnswer,
  PacingOptions,
  PacingSnapshot,
  PauseChange,
} from './pacing/partition-pacing'
import { PartitionPacing, checkPacingOptions } from './pacing/partition-pacing'
import type { CallEstimate, Reservation } from './pacing/rate-budget'
import type { AimdParams, Clock, LimitChange, Outcome } from './types'
import { SEED_AIMD, systemClock } from './types'

/** The right to make one provider call in a partition. */
export interface Permit {
  readonly partition: string
  /** When the permit was granted (epoch ms). */
  readonly sentAt: number
  /**
   * Frees the slot and feeds the outcome to the controller; with pacing on, the answer's headers
   * and usage settle the rate budget and may pause the partition. Idempotent: later calls do nothing.
   */
  release(outcome: Outcome, answer?: CallAnswer): void
}

/** One partition's state: the contract's view of it. */
export type PartitionSnapshot = PartitionView

export interface SchedulerSample {
  ts: number
  partitions: PartitionSnapshot[]
}

export interface ParamsChange {
  /** A partition, or '*' for the defaults given to partitions created later. */
  partition: string
  ts: number
  params: AimdParams
}

export interface SchedulerEvents {
  limit: [change: LimitChange]
  params: [change: ParamsChange]
  sample: [sample: SchedulerSample]
  /** With pacing on: a refusal's retry-after (or the floor's backoff) paused the partition. */
  pause: [change: PauseChange]
  /** With pacing on: an answer's rate-limit headers announced a new budget (cause `headers`). */
  budget: [change: LimitChange]
}

export interface SchedulerOptions {
  /** Source of time for sentAt, cooldowns and samples. @default systemClock */
  clock?: Clock
  /** Defaults for every partition, merged over SEED_AIMD. @default SEED_AIMD */
  params?: Partial<AimdParams>
  /** Builds a partition's controller. @default (partition, params, limit) => new SeedAimd(...) */
  createController?: ControllerFactory
  /** How often 'sample' is emitted while any partition is active, in ms. @default 250 */
  sampleIntervalMs?: number
  /**
   * Pacing beyond concurrency: partition-wide pauses on retry-after, and admission that waits for
   * header-announced rate budgets. `true` is `{}` (all defaults). @default undefined (off)
   */
  pacing?: PacingOptions | boolean
}

/** Raised for acquires that are still waiting, or arrive, after close(). */
export class SchedulerClosedError extends Error {
  constructor() {
    super('Scheduler is closed')
    this.name = 'SchedulerClosedError'
  }
}

interface Waiter {
  resolve(permit: Permit): void
  reject(reason: unknown): void
  signal: AbortSignal | undefined
  onAbort: (() => void) | undefined
  estimate: CallEstimate | undefined
}

interface PartitionState {
  name: string
  controller: ConcurrencyController
  inflight: number
  queue: Waiter[]
  throttles: number
  successes: number
  errors: number
  lastChange: LimitChange | null
  pacing: PartitionPacing | undefined
}

const OUTCOMES: readonly Outcome[] = [
  'ok',
  'near_limit',
  'throttled',
  'overloaded',
  'timeout',
  'error',
]

/**
 * Admission by partition (provider:model), one AIMD controller each. A call is admitted while
 * inflight < controller.concurrency, re-read on every admission as the seed's scheduler does, so a
 * cut applies at once and a raise admits waiters at once. Waiters are served FIFO per partition.
 */
export class Scheduler extends EventEmitter<SchedulerEvents> {
  readonly #clock: Clock
  #createController: ControllerFactory
  readonly #sampleIntervalMs: number
  readonly #partitions = new Map<string, PartitionState>()
  readonly #pacing: Required<PacingOptions> | undefined
  #defaults: AimdParams
  #timer: NodeJS.Timeout | undefined
  #closed = false

  /** A scheduler with no partitions yet; they are created on first use. */
  constructor(options: SchedulerOptions = {}) {
    super()
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`Expected \`options\` to be an object, got \`${String(options)}\``)
    }
    const {
      clock = systemClock,
      params = {},
      createController,
      sampleIntervalMs = 250,
      pacing,
    } = options
    if (clock === null || typeof clock !== 'object' || typeof clock.now !== 'function') {
      throw new TypeError(`Expected \`clock\` to have a now() function, got \`${String(clock)}\``)
    }
    if (createController !== undefined && typeof createController !== 'function') {
      throw new TypeError(
        `Expected \`createController\` to be a function, got \`${String(createController)}\``,
      )
    }
    if (
      typeof sampleIntervalMs !== 'number' ||
      !Number.isInteger(sampleIntervalMs) ||
      sampleIntervalMs < 1
    ) {
      throw new TypeError(
        `Expected \`sampleIntervalMs\` to be an integer >= 1, got \`${String(sampleIntervalMs)}\``,
      )
    }
    this.#clock = clock
    this.#defaults = mergeAimdParams(SEED_AIMD, params)
    this.#createController =
      createController ?? ((partition, p, limit) => new SeedAimd(partition, p, limit))
    this.#sampleIntervalMs = sampleIntervalMs
    this.#pacing =
      pacing === undefined || pacing === false
        ? undefined
        : checkPacingOptions(pacing === true ? {} : pacing)
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
    const state = this.#partition(partition)
    const permit = new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined, estimate }
      if (signal) {
        waiter.onAbort = () => {
          const index = state.queue.indexOf(waiter)
          if (index === -1) return
          state.queue.splice(index, 1)
          reject(signal.reason)
        }
        signal.addEventListener('abort', waiter.onAbort, { once: true })
      }
      state.queue.push(waiter)
    })
    // Through the queue even when a slot is free, so FIFO holds whatever the controller does.
    this.#drain(state)
    this.#startSampling()
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
    for (const state of targets) mergeAimdParams(state.controller.params, patch)

    const now = this.#clock.now()
    this.#defaults = nextDefaults
    const changes: LimitChange[] = []
    for (const state of targets) {
      const change = state.controller.setParams(patch, now)
      if (change) {
        state.lastChange = change
        changes.push(change)
      }
      this.#drain(state)
    }
    for (const change of changes) this.emit('limit', change)
    if (all) this.emit('params', { partition: '*', ts: now, params: { ...nextDefaults } })
    for (const state of targets) {
      this.emit('params', { partition: state.name, ts: now, params: state.controller.params })
    }
  }

  /** The partition's params; for '*' or a partition not used yet, the defaults it would get. */
  getParams(partition: string): AimdParams {
    checkPartition(partition)
    const state = this.#partitions.get(partition)
    return state ? state.controller.params : { ...this.#defaults }
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
      createController(s.name, s.controller.params, s.controller.limit),
    )
    this.#createController = createController
    const ts = this.#clock.now()
    const reason = `operator: ${name}`
    const changes = states.map((state, i): LimitChange => {
      const from = state.controller.limit
      state.controller = next[i] as ConcurrencyController
      state.lastChange = {
        partition: state.name,
        ts,
        from,
        to: state.controller.limit,
        reason,
        cause: 'operator',
      }
      this.#drain(state)
      return state.lastChange
    })
    for (const change of changes) this.emit('limit', change)
  }

  /** True when the scheduler paces (pauses, budgets): a refused call may re-acquire at once. */
  get paced(): boolean {
    return this.#pacing !== undefined
  }

  /** Every partition's current state, in creation order. */
  snapshot(): PartitionSnapshot[] {
    const now = this.#clock.now()
    return [...this.#partitions.values()].map((s) => ({
      partition: s.name,
      limit: s.controller.limit,
      concurrency: s.controller.concurrency,
      inflight: s.inflight,
      waiting: s.queue.length,
      params: s.controller.params,
      throttles: s.throttles,
      successes: s.successes,
      errors: s.errors,
      lastChange: s.lastChange,
      pausedUntil: s.pacing?.snapshot(now).pausedUntil ?? null,
    }))
  }

  /** With pacing on: the partition's pause and rate budget; undefined otherwise or if unused. */
  pacing(partition: string): PacingSnapshot | undefined {
    checkPartition(partition, false)
    return this.#partitions.get(partition)?.pacing?.snapshot(this.#clock.now())
  }

  /** Stops sampling and rejects every waiter with SchedulerClosedError; held permits may still be released. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#stopSampling()
    for (const state of this.#partitions.values()) {
      state.pacing?.stop()
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
      state = {
        name,
        controller: this.#createController(name, { ...this.#defaults }),
        inflight: 0,
        queue: [],
        throttles: 0,
        successes: 0,
        errors: 0,
        lastChange: null,
        pacing: this.#pacing && new PartitionPacing(name, this.#pacing),
      }
      this.#partitions.set(name, state)
    }
    return state
  }

  #admit(state: PartitionState, estimate: CallEstimate | undefined): Permit {
    state.inflight++
    const sentAt = this.#clock.now()
    const reservation = state.pacing?.admit(sentAt, estimate)
    let released = false
    return {
      partition: state.name,
      sentAt,
      release: (outcome: Outcome, answer?: CallAnswer) => {
        if (released) return
        released = true
        this.#release(state, sentAt, outcome, reservation, answer)
      },
    }
  }

  #release(
    state: PartitionState,
    sentAt: number,
    outcome: Outcome,
    reservation: Reservation | undefined,
    answer: CallAnswer | undefined,
  ): void {
    const inflight = state.inflight
    state.inflight--
    // The slot is freed before the outcome is checked, so a bad outcome cannot leak capacity.
    if (!OUTCOMES.includes(outcome)) {
      this.#drain(state)
      throw new TypeError(`Unknown outcome \`${String(outcome)}\``)
    }
    if (outcome === 'throttled' || outcome === 'overloaded' || outcome === 'timeout') {
      state.throttles++
    } else if (outcome === 'error') {
      state.errors++
    } else {
      state.successes++
    }
    const now = this.#clock.now()
    const settled =
      state.pacing && reservation ? state.pacing.settle(now, reservation, outcome, answer) : null
    // A refusal the announced budget explains is the budget's to pace, not a concurrency signal.
    const seen = settled?.absorbed ? 'near_limit' : outcome
    const change = state.controller.onOutcome(seen, { now, sentAt, inflight })
    if (change) state.lastChange = change
    let pause = settled?.pause ?? null
    const refused = outcome === 'throttled' || outcome === 'overloaded'
    // Nothing left to cut and no wait announced: only a pause keeps the retry from going at once.
    if (refused && state.pacing && !pause && !settled?.absorbed && !change) {
      const { concurrency, params } = state.controller
      if (concurrency <= params.min) pause = state.pacing.backoff(now)
    }
    // Admit first, emit after: a throwing listener must not strand waiters.
    this.#drain(state)
    if (change) this.emit('limit', change)
    if (pause) this.emit('pause', pause)
    for (const budget of settled?.budgets ?? []) this.emit('budget', budget)
  }

  #drain(state: PartitionState): void {
    while (state.queue.length > 0 && state.inflight < state.controller.concurrency) {
      const head = state.queue[0] as Waiter
      // A pause or the rate budget holds the head, and so the whole FIFO, until it wakes it.
      if (
        state.pacing?.ready(this.#clock.now(), head.estimate, () => this.#drain(state)) === false
      ) {
        return
      }
      const waiter = state.queue.shift() as Waiter
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort)
      waiter.resolve(this.#admit(state, waiter.estimate))
    }
  }

  #active(): boolean {
    for (const s of this.#partitions.values()) {
      if (s.inflight > 0 || s.queue.length > 0) return true
    }
    return false
  }

  #startSampling(): void {
    if (this.#timer !== undefined || this.#closed) return
    this.#timer = setInterval(() => {
      this.emit('sample', { ts: this.#clock.now(), partitions: this.snapshot() })
      // One idle sample is emitted before stopping, so the chart falls back to zero.
      if (!this.#active()) this.#stopSampling()
    }, this.#sampleIntervalMs)
    // The chart must not keep a finished CLI process alive.
    this.#timer.unref()
  }

  #stopSampling(): void {
    if (this.#timer === undefined) return
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}

/** '*' names every partition in setParams/getParams, so no partition may be called that. */
function checkPartition(partition: unknown, allowAll = true): asserts partition is string {
  if (typeof partition !== 'string' || partition === '' || (!allowAll && partition === '*')) {
    const expected = allowAll ? 'a non-empty string' : "a non-empty string other than '*'"
    throw new TypeError(`Expected \`partition\` to be ${expected}, got \`${String(partition)}\``)
  }
}
