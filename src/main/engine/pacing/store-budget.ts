// The scheduler's side of a shared partition: this worker's permits, its controller kept in step
// with the shared record, the store calls that admit and release (store-calls.ts). Stores answer at
// once (memory, SQLite: a release admits a waiter in the same turn) or later (networked: one call).
import type { ConcurrencyController } from './aimd'
import type { AimdParams, LimitChange, Outcome } from '../core/types'
import type { PacingSnapshot } from './partition-pacing'
import { negatedCost, type BudgetCost, type BudgetSettle, type BudgetTicket } from './shared-budget'
import { PartitionOks } from './partition-oks'
import { changeOf, controllerStateOf, outcomeCount, sameChange, sameParams } from './store'
import { StoreCalls } from './store-calls'
import type { Admission, PacingRecord, PacingStore, RecordChange, WorkerLease } from './store'

/** A slot taken with a cost: the call's place in the shared announced budget. */
export interface Charged {
  ticket: BudgetTicket
  cost: BudgetCost
}

/** A blocked admission looks at a polled store's shared budget again at least this often. */
const BUDGET_POLL_MS = 250

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
  /** Each admission's record brings the learned paces (learned-pace.ts) and the workers' count. */
  adoptLearned?: (learned: PacingRecord['learned'], workers?: number) => void
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
  /** What each grant was charged (null: taken without a cost), in the order they came. */
  readonly #charges: (Charged | null)[] = []
  /** What the slot take() just handed out was charged. */
  #charged: Charged | null = null
  #othersWaiting = 0
  readonly #calls: StoreCalls
  #news: LimitChange[] = []
  #seen: LimitChange | null = null
  /** The last heartbeat reported demand here. */
  #reported = false
  /** The last answer said no slot is free: take() waits for a sign of change. */
  #full = false
  readonly #unsubscribe: () => void
  throttles = 0
  successes = 0
  errors = 0
  readonly oks = new PartitionOks()

  constructor(o: BudgetOptions, now: number) {
    this.partition = o.partition
    this.#o = o
    this.#controller = o.createController(o.partition, { ...o.params })
    this.#calls = new StoreCalls({
      partition: o.partition,
      poll: o.store.poll,
      wake: () => o.wake(),
      stale: () => {
        this.#full = false
      },
      warn: (message) => o.warn(message),
    })
    // Another worker of this process released or retuned the partition: look again at once.
    this.#unsubscribe = o.store.subscribe(o.worker, (partition) => {
      if (partition !== this.partition) return
      this.#full = false
      o.wake()
    })
    this.#join(now)
  }

  get controller(): ConcurrencyController {
    return this.#controller
  }

  get held(): number {
    return this.#held
  }

  get params(): AimdParams {
    return this.#controller.params
  }

  /** This worker's waiting calls, and the other workers' as they last reported them. */
  get waitingEverywhere(): number {
    return this.#o.waiting() + this.#othersWaiting
  }

  get lastChange(): LimitChange | null {
    return this.#record?.lastChange ?? this.#seen
  }

  /** The pacing snapshot with the shared pause, which another worker's refusal may have set. */
  withSharedPause(local: PacingSnapshot | undefined, now: number): PacingSnapshot | undefined {
    const shared = this.#record?.pausedUntil ?? 0
    if (!local || shared <= now || shared <= (local.pausedUntil ?? 0)) return local
    return { ...local, pausedUntil: shared }
  }

  /** Limit changes to announce: this worker's, and other workers' seen when re-reading the record. */
  takeNews(): LimitChange[] {
    if (this.#news.length === 0) return NONE
    const news = this.#news
    this.#news = []
    return news
  }

  /**
   * Takes a slot for the head waiter if the shared budget has one now. Otherwise false, and `wake`
   * is called when one may have come free: at once for this process's releases, at a pause's
   * end, or by polling with backoff for workers in other processes.
   */
  take(now: number, cost?: BudgetCost): boolean {
    this.#charged = null
    if (this.#grants > 0) {
      this.#grants--
      this.#held++
      this.#charged = this.#charges.shift() ?? null
      return true
    }
    if (this.#calls.pending > 0) return false
    if (!this.#joined) {
      this.#join(now)
      if (!this.#joined) return false
    }
    if (this.#full || (this.#record?.pausedUntil ?? 0) > now) {
      // Known full or paused: no store call until something may have changed.
      this.#calls.armRetry(this.#record?.pausedUntil ?? 0, now)
      return false
    }
    const waiting = Math.max(0, this.#o.waiting() - 1)
    let charged: Charged | null = null
    return this.#calls.run(
      () => this.#o.store.admit(this.partition, this.#o.worker, now, waiting, cost),
      (a) => {
        charged = a.ticket && cost ? { ticket: a.ticket, cost } : null
        this.#charged = charged
        return this.#admitted(a, now)
      },
      // Admitted later: the slot #admitted counted is handed out through the next take().
      () => {
        this.#held--
        this.#grant(charged)
      },
    )
  }

  /** What the slot the last take() handed out was charged in the shared budget, if anything. */
  get charged(): Charged | null {
    return this.#charged
  }

  #grant(charged: Charged | null): void {
    this.#grants++
    this.#charges.push(charged)
  }

  /** Gives back slots granted while no waiter was left to take them (they aborted meanwhile). */
  returnGrants(now: number): void {
    while (this.#grants > 0 && this.#calls.pending === 0) {
      this.#grants--
      this.#held++
      const charged = this.#charges.shift()
      // Never sent: its charge goes back to the shared budget.
      const refund = charged && { ticket: charged.ticket, correction: negatedCost(charged.cost) }
      this.release(now, 0, null, null, undefined, false, refund ?? undefined)
    }
  }

  /**
   * Frees one of this worker's slots, counts the outcome (null: a slot given back unused) and
   * feeds the controller what it should see of it on the shared record, in one store write with
   * the pause, if any, and what the call taught the pace (`learn`, replayed on the record written:
   * learned-pace.ts). `handoff`: the next waiter may go, so the same write takes it again.
   */
  release(
    now: number,
    sentAt: number,
    outcome: Outcome | null,
    seen: Outcome | null = outcome,
    pauseUntil?: number,
    handoff = false,
    account?: BudgetSettle,
    handoffCost?: BudgetCost,
    learn?: (learned: PacingRecord['learned']) => PacingRecord['learned'],
  ): void {
    this.#held = Math.max(0, this.#held - 1)
    const count = outcome && outcomeCount(outcome)
    if (count === 'success') this.successes++
    else if (count === 'throttle') this.throttles++
    else if (count === 'error') this.errors++
    if (!this.#joined) {
      // No record to write to (the store failed): the controller still learns, locally.
      const inflight = this.#held + 1
      if (outcome) this.#announce(this.#controller.onOutcome(outcome, { now, sentAt, inflight }))
      return
    }
    let decided: LimitChange | null = null
    const decide = (record: PacingRecord, inflight: number): RecordChange | null => {
      this.#adopt(record)
      decided = seen ? this.#controller.onOutcome(seen, { now, sentAt, inflight }) : null
      return changeOf(this.#controller, record, decided, pauseUntil, learn?.(record.learned))
    }
    const request = {
      now,
      waiting: this.#o.waiting(),
      outcome: count,
      decide,
      handoff,
      ...(account && { budget: account }),
      ...(handoffCost && { handoffCost }),
    }
    this.#calls.run(
      () => this.#o.store.release(this.partition, this.#o.worker, request),
      (r) => {
        this.oks.seen(r.oks, count === 'throttle' ? now : null)
        if (r.handedOff)
          this.#grant(r.ticket && handoffCost ? { ticket: r.ticket, cost: handoffCost } : null)
        this.#adopt(r.record, r.changed)
        this.#learn(r.record, r.inflight)
        this.#announce(decided)
      },
    )
  }

  /**
   * The operator swapped the controller kind: the new one (built at the current limit) takes over
   * here, and its state and the operator's change go to the shared record.
   */
  replaceController(next: ConcurrencyController, now: number, reason: string): void {
    const from = this.#controller.limit
    this.#controller = next
    const change: LimitChange = {
      partition: this.partition,
      ts: now,
      from,
      to: next.limit,
      reason,
      cause: 'operator',
    }
    if (!this.#joined) {
      this.#announce(change)
      return
    }
    this.#calls.run(
      () =>
        this.#o.store.update(this.partition, now, (record) =>
          changeOf(this.#controller, record, change),
        ),
      (r) => {
        if (r) this.#adopt(r.record, r.changed)
        this.#full = false
        this.#announce(change)
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
        ...changeOf(this.#controller, record, decided),
        params: this.#controller.params,
      }
    }
    this.#calls.run(
      () => this.#o.store.update(this.partition, now, decide),
      (r) => {
        if (r) this.#adopt(r.record, r.changed)
        this.#full = false
        this.#announce(decided)
      },
    )
  }

  /**
   * What the heartbeat renews: only while this worker holds slots here or waits, and once more
   * when it stopped, so that no other worker holds back for a demand that is gone.
   */
  lease(): WorkerLease | null {
    if (!this.#joined || this.#calls.pending > 0) return null
    const waiting = this.#o.waiting()
    const slots = this.#held + this.#grants
    const active = slots > 0 || waiting > 0
    if (!active && !this.#reported) return null
    this.#reported = active
    return { partition: this.partition, slots, waiting }
  }

  close(): void {
    this.#calls.close()
    this.#unsubscribe()
    try {
      if (this.#joined) this.#o.store.leave?.(this.partition, this.#o.worker)
    } catch (err) {
      this.#o.warn(`pacing store (${this.partition}): ${(err as Error).message}`)
    }
  }

  #join(now: number): void {
    const init = {
      params: this.#controller.params,
      controller: controllerStateOf(this.#controller, null),
    }
    this.#calls.run(
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
    this.oks.seen(a.oks)
    this.#o.adoptLearned?.(a.record.learned, a.workers)
    this.#adopt(a.record)
    if (a.admitted) {
      this.#calls.resetPoll()
      this.#held++
      this.#learn(a.record, a.inflight)
      return true
    }
    // Refused: full, or past this worker's fair share (a pause is known from the record).
    this.#full = a.record.pausedUntil <= now
    const budgetWait = a.budgetWaitMs ?? 0
    if (budgetWait > 0) {
      // The shared announced budget is spent until then: this process's releases ring at once,
      // other processes' readings and refunds are looked for now and then.
      this.#calls.retryIn(this.#o.store.poll ? Math.min(budgetWait, BUDGET_POLL_MS) : budgetWait)
      return false
    }
    this.#calls.armRetry(this.#record?.pausedUntil ?? 0, now)
    return false
  }

  /** Whether the next take() can skip the store: the budget as the last answer left it. */
  #learn(record: PacingRecord, inflight: number): void {
    this.#full = inflight >= record.concurrency
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
}

const NONE: LimitChange[] = []
