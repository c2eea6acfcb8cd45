// One partition budget's calls to its pacing store (store-budget.ts): an answer given at once is
// handled at once, one that comes later (a networked store) holds further calls until it arrives.
// And the timer that has the budget look at the store again: after a failure, at the end of a
// pause, or by polling with backoff for the releases of workers in other processes.
import { backoff, type Backoff } from '../core/backoff'
import { timerMs } from '../core/timers'
import type { MaybePromise, PollPolicy } from './store'

export interface StoreCallsOptions {
  partition: string
  poll: PollPolicy | null | undefined
  /** A store call finished, or the retry timer fired: drain the partition's waiters. */
  wake: () => void
  /** The retry timer fired: what the budget knows of the store may be out of date. */
  stale: () => void
  /** A store call failed; the budget retries on its own. */
  warn: (message: string) => void
}

/** The store calls of one partition's budget, and its retry timer. */
export class StoreCalls {
  readonly #o: StoreCallsOptions
  /**
   * Calls to a store that answers later in flight (releases may overlap): admission waits for
   * them, and so does the heartbeat, whose absolute slot count would otherwise overwrite a change
   * on its way (a release counted twice, and a slot too many for every worker).
   */
  #pending = 0
  #retry: NodeJS.Timeout | undefined
  /** The store's poll policy as waits (null: every worker is in this process, none to poll for). */
  readonly #polls: Backoff | null

  constructor(o: StoreCallsOptions) {
    this.#o = o
    this.#polls = o.poll ? backoff({ initialMs: o.poll.minMs, maxMs: o.poll.maxMs }) : null
  }

  /** Calls still waiting for their answer. */
  get pending(): number {
    return this.#pending
  }

  /**
   * Runs a store call. An answer at once is handled at once and its result returned; a later one
   * (a networked store) holds further calls until it arrives, then `granted` runs for an
   * admission that succeeded and waiters are woken.
   */
  run<T>(
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
    this.#pending++
    answer.then(
      (value) => {
        this.#pending--
        // Handed out through the next take(): the scheduler's drain keeps the FIFO.
        if (handle(value) === true) granted?.()
        this.#o.wake()
      },
      (err: unknown) => {
        this.#pending--
        this.#failed(err)
      },
    )
    return false
  }

  /** An admission went through: polling starts again from its shortest delay. */
  resetPoll(): void {
    this.#polls?.reset()
  }

  /**
   * When the next look at the store may find a slot: at the end of a pause, or by polling with
   * backoff for workers in other processes (this process's own releases and retunes wake it at
   * once, without a timer).
   */
  armRetry(pausedUntil: number, now: number): void {
    if (this.#retry !== undefined) return
    if (pausedUntil > now) {
      this.retryIn(pausedUntil - now)
    } else if (this.#polls) {
      this.retryIn(this.#polls.next())
    }
  }

  retryIn(ms: number): void {
    if (this.#retry !== undefined) return
    this.#retry = setTimeout(
      () => {
        this.#retry = undefined
        this.#o.stale()
        this.#o.wake()
      },
      // A pause read from the store may reach past one timer's span: waking early only looks again.
      timerMs(ms),
    )
    // The wait itself keeps the process alive (the scheduler holds waiters); a stray timer must not.
    this.#retry.unref()
  }

  close(): void {
    clearTimeout(this.#retry)
    this.#retry = undefined
  }

  #failed(err: unknown): void {
    this.#o.warn(`pacing store (${this.#o.partition}): ${(err as Error).message}`)
    this.retryIn(this.#o.poll?.maxMs ?? 50)
  }
}
