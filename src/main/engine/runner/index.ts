import { EventEmitter } from 'node:events'
import type { TaskStatus } from '../../../shared/contract'
import { classify, isDeterministicFailure, retryDelayMs } from '../classify'
import type { Ledger } from '../ledger'
import { continueMessage, estimateTokens, taskMessages } from '../prompt'
import type { QueuedTask, TaskQueue } from '../queue'
import type { Scheduler } from '../scheduler'
import type {
  ChatMessage,
  ClaimStore,
  Clock,
  JsonValue,
  LedgerOutcome,
  Outcome,
  Provider,
  ProviderResponse,
  StoredResult,
  Usage,
} from '../types'

const ZERO_USAGE: Usage = {
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
}

export interface RunnerOptions {
  queue: TaskQueue
  claims: ClaimStore
  scheduler: Scheduler
  ledger: Ledger
  clock: Clock
  /** Resolves a task's provider id; undefined = unknown provider (the task fails, visibly). */
  provider: (id: string) => Provider | undefined
  /** Who this process is in claims, task leases and the ledger. */
  workerId: string
  /** Only these batches (the CLI runs its own); null = every running batch (the console). @default null */
  batchIds?: string[] | null
  /** Claim and task lease, renewed every third of it while the task runs. @default 30_000 */
  leaseMs?: number
  /** One provider call's deadline; a timeout counts as a throttle signal. @default 120_000 */
  callTimeoutMs?: number
  /** Attempts per call for transient errors (5xx, network, timeout). @default 4 */
  maxAttempts?: number
  /** Retries per call for throttles (429/503/529) before the task fails visibly. @default 50 */
  maxThrottleRetries?: number
  /** A waiter re-checks its claim at least this often. @default 60_000 */
  waitTimeoutMs?: number
  /** Tasks picked beyond the scheduler's current concurrency, to keep the pipe full. @default 2 */
  prefetch?: number
  /** How often the queue is re-read for work other processes queued or left. @default 500 */
  pollMs?: number
}

export interface TaskEvent {
  taskId: number
  batchId: string
  status: TaskStatus
}

export interface RunnerEvents {
  task: [event: TaskEvent]
  /** Something went wrong in the background (a database write that failed); work goes on. */
  warning: [message: string]
  /** A batch may have changed state (finished, interrupted). */
  batch: [batchId: string]
}

type Finish =
  | { status: 'succeeded' | 'reused' | 'failed'; result: string | null; error: string | null }
  | { status: 'requeue'; error: string | null }

class StopSignal extends Error {
  /** stop: this runner shuts down; pause: the batch was paused; cancel: it was cancelled. */
  constructor(readonly mode: 'stop' | 'pause' | 'cancel') {
    super(mode === 'cancel' ? 'batch cancelled' : `runner ${mode}`)
  }
}

interface Active {
  task: QueuedTask
  controller: AbortController
  /** The claim epoch while this worker owns the task's claim. */
  epoch: number | null
  /** Set when a renewal found the claim taken over: later steps are not sent. */
  lost: boolean
  done: Promise<void>
}

type CallResult =
  | { kind: 'ok'; text: string; usage: Usage }
  | { kind: 'lost'; text: string }
  | { kind: 'failed'; deterministic: boolean; error: string; status: number | null }

/**
 * queue → claim → run steps through the scheduler → save → ledger. One per process; any number of
 * processes may run on one database: the queue pick and the claims are atomic across them.
 */
export class Runner extends EventEmitter<RunnerEvents> {
  readonly #o: Required<Omit<RunnerOptions, 'batchIds'>> & { batchIds: string[] | null }
  readonly #active = new Map<number, Active>()
  /** Tasks waiting on another worker's claim: they hold no slot. */
  readonly #waiting = new Set<number>()
  #running = false
  #stopping = false
  #pumping = false
  #pollTimer: NodeJS.Timeout | undefined
  #renewTimer: NodeJS.Timeout | undefined

  constructor(options: RunnerOptions) {
    super()
    const leaseMs = options.leaseMs ?? 30_000
    if (!Number.isInteger(leaseMs) || leaseMs < 100) {
      throw new TypeError(`leaseMs must be an integer ≥ 100, got ${String(options.leaseMs)}`)
    }
    this.#o = {
      ...options,
      batchIds: options.batchIds ?? null,
      leaseMs,
      callTimeoutMs: options.callTimeoutMs ?? 120_000,
      maxAttempts: options.maxAttempts ?? 4,
      maxThrottleRetries: options.maxThrottleRetries ?? 50,
      waitTimeoutMs: options.waitTimeoutMs ?? 60_000,
      prefetch: options.prefetch ?? 2,
      pollMs: options.pollMs ?? 500,
    }
    options.scheduler.on('limit', () => this.pump())
  }

  get workerId(): string {
    return this.#o.workerId
  }

  /** Tasks this process is executing or waiting on. */
  get activeCount(): number {
    return this.#active.size
  }

  /** Starts picking work; requeues tasks whose worker died first. */
  start(): void {
    if (this.#running) return
    this.#running = true
    this.#stopping = false
    this.sweepExpired()
    const renewEvery = Math.max(50, Math.floor(this.#o.leaseMs / 3))
    this.#renewTimer = setInterval(
      () => this.#guard('lease renewal', () => this.#renewAll()),
      renewEvery,
    )
    this.#renewTimer.unref()
    this.#pollTimer = setInterval(
      () =>
        this.#guard('queue poll', () => {
          this.sweepExpired()
          this.#reassertOwnBatches()
          this.pump()
        }),
      this.#o.pollMs,
    )
    this.#pollTimer.unref()
    this.pump()
  }

  /** Adds batches to a scoped runner (the CLI resuming or joining a batch). */
  addBatch(batchId: string): void {
    if (this.#o.batchIds && !this.#o.batchIds.includes(batchId)) this.#o.batchIds.push(batchId)
    this.pump()
  }

  /** Tasks left running by a dead worker go back to the queue (lease expiry): never lost. */
  sweepExpired(): void {
    const { requeued, batchIds } = this.#o.queue.requeueExpired()
    if (requeued === 0) return
    for (const b of batchIds) {
      // A scoped runner is the live driver of its own batches: keep them running.
      if (this.#o.batchIds?.includes(b)) this.#o.queue.setBatchState(b, 'running', ['interrupted'])
      this.emit('batch', b)
    }
  }

  /**
   * A scoped runner (the CLI) is the live driver of its batches: if another process saw it stall
   * past its lease and marked them interrupted, take them back, or this run would wait forever.
   */
  #reassertOwnBatches(): void {
    for (const b of this.#o.batchIds ?? []) {
      if (this.#o.queue.setBatchState(b, 'running', ['interrupted'])) this.emit('batch', b)
    }
  }

  /**
   * Pause and cancel take effect before the next call, in whichever process runs the task: a
   * cancelled batch sends nothing more; a paused one starts no new task (one already under way
   * finishes its steps, so the calls already paid for are not thrown away).
   */
  #checkBatch(task: QueuedTask, notStarted: boolean): void {
    const state = this.#o.queue.batchState(task.batchId)
    if (state === 'cancelled') throw new StopSignal('cancel')
    if (state === 'paused' && notStarted) throw new StopSignal('pause')
  }

  /** Runs background work that must not crash the process: a failure becomes a warning. */
  #guard(what: string, fn: () => void): void {
    try {
      fn()
    } catch (err) {
      this.emit('warning', `${what} failed: ${(err as Error).message}`)
    }
  }

  /** Picks as many tasks as the scheduler can take now (plus a small prefetch). */
  pump(): void {
    if (!this.#running || this.#stopping || this.#pumping) return
    this.#pumping = true
    try {
      while (this.#executing() < this.#capacity()) {
        const task = this.#o.queue.pick(this.#o.workerId, this.#o.leaseMs, this.#o.batchIds)
        if (!task) break
        this.#begin(task)
      }
    } finally {
      this.#pumping = false
    }
  }

  /** Aborts this process's running tasks of a cancelled batch (they end cancelled, claims released). */
  cancelRunning(batchId: string): void {
    for (const a of this.#active.values()) {
      if (a.task.batchId === batchId) a.controller.abort(new StopSignal('cancel'))
    }
  }

  /**
   * Stops admitting, lets in-flight tasks finish for up to graceMs, then aborts the rest: their
   * claims are released and their tasks requeued, so a later run resumes them.
   */
  async stop(opts: { graceMs?: number } = {}): Promise<void> {
    if (!this.#running) return
    this.#stopping = true
    clearInterval(this.#pollTimer)
    // Waiters hold no claim and have nothing to finish: give them back at once.
    for (const id of this.#waiting) this.#active.get(id)?.controller.abort(new StopSignal('stop'))
    const all = () => Promise.all([...this.#active.values()].map((a) => a.done))
    const grace = opts.graceMs ?? 10_000
    let timer: NodeJS.Timeout | undefined
    await Promise.race([all(), new Promise<void>((r) => (timer = setTimeout(r, grace)))])
    clearTimeout(timer)
    for (const a of this.#active.values()) a.controller.abort(new StopSignal('stop'))
    await all()
    clearInterval(this.#renewTimer)
    this.#running = false
    // Leave the queue tidy: a dead worker's tasks are visible as queued, not stuck as running.
    this.sweepExpired()
  }

  /** Aborts every task now (a second Ctrl-C): claims released, tasks requeued. */
  abortAll(): void {
    for (const a of this.#active.values()) a.controller.abort(new StopSignal('stop'))
  }

  #executing(): number {
    return this.#active.size - this.#waiting.size
  }

  #capacity(): number {
    const partitions = this.#o.scheduler.snapshot()
    const concurrency =
      partitions.length === 0
        ? Math.floor(this.#o.scheduler.getParams('*').initial)
        : partitions.reduce((sum, p) => sum + p.concurrency, 0)
    return Math.max(1, concurrency) + this.#o.prefetch
  }

  #begin(task: QueuedTask): void {
    const active: Active = {
      task,
      controller: new AbortController(),
      epoch: null,
      lost: false,
      done: Promise.resolve(),
    }
    this.#active.set(task.id, active)
    this.emit('task', { taskId: task.id, batchId: task.batchId, status: 'running' })
    active.done = this.#run(active)
      .catch((err: unknown) => {
        this.emit('warning', `task ${task.id}: ${(err as Error).message}`)
      })
      .finally(() => {
        this.#active.delete(task.id)
        this.#waiting.delete(task.id)
        this.#guard('batch settle', () => this.#o.queue.settleBatch(task.batchId))
        this.emit('batch', task.batchId)
        this.pump()
      })
  }

  async #run(active: Active): Promise<void> {
    const { task } = active
    let finish: Finish
    try {
      finish = await this.#process(active)
    } catch (err) {
      const reason = err instanceof StopSignal ? err : active.controller.signal.reason
      if (reason instanceof StopSignal) {
        if (reason.mode === 'cancel') {
          this.#releaseClaim(active)
          if (this.#o.queue.finishTask(task.id, this.#o.workerId, 'cancelled', null, 'cancelled')) {
            this.emit('task', { taskId: task.id, batchId: task.batchId, status: 'cancelled' })
          }
          return
        }
        finish = { status: 'requeue', error: null }
      } else if (isBusy(err)) {
        // Another process held the database's write lock past busy_timeout: try again later.
        finish = { status: 'requeue', error: `database busy: ${(err as Error).message}` }
      } else {
        finish = {
          status: 'failed',
          result: null,
          error: `internal error: ${(err as Error).message}`,
        }
      }
      this.#releaseClaim(active)
    }
    if (finish.status === 'requeue') {
      if (this.#o.queue.requeueTask(task.id, this.#o.workerId, finish.error)) {
        this.emit('task', { taskId: task.id, batchId: task.batchId, status: 'queued' })
      }
      return
    }
    if (
      this.#o.queue.finishTask(
        task.id,
        this.#o.workerId,
        finish.status,
        finish.result,
        finish.error,
      )
    ) {
      this.emit('task', { taskId: task.id, batchId: task.batchId, status: finish.status })
    }
  }

  async #process(active: Active): Promise<Finish> {
    const { task } = active
    const provider = this.#o.provider(task.provider)
    if (!provider) {
      return { status: 'failed', result: null, error: `unknown provider "${task.provider}"` }
    }
    const { claims, workerId, leaseMs } = this.#o
    // After a fenced completion the winner's result is ours too, but nothing was saved by it.
    let fenced = false
    for (;;) {
      this.#throwIfAborted(active)
      const attempt = claims.claim(task.fp, workerId, leaseMs)
      if (attempt.kind === 'owned') {
        if (attempt.tookOver)
          this.#recordAbandoned(task, attempt.previousOwner, attempt.previousEpoch)
        active.epoch = attempt.epoch
        active.lost = false
        const outcome = await this.#execute(active, provider, attempt.epoch)
        if (outcome.status !== 'fenced') return outcome
        fenced = true
        continue
      }
      if (task.audit) {
        // Audit mode: run anyway, and put the duplicate on the ledger with its price.
        const outcome = await this.#execute(active, provider, null)
        return outcome.status === 'fenced'
          ? { status: 'failed', result: null, error: 'fenced' }
          : outcome
      }
      if (attempt.kind === 'completed') return this.#reuse(task, attempt.result, fenced)
      // Busy: another worker runs it. Wait without holding a slot.
      this.#waiting.add(task.id)
      this.pump()
      let waited
      try {
        waited = await claims.wait(task.fp, workerId, {
          timeoutMs: this.#o.waitTimeoutMs,
          leaseMs,
          signal: active.controller.signal,
        })
      } finally {
        this.#waiting.delete(task.id)
      }
      this.#throwIfAborted(active)
      if (waited.kind === 'completed') return this.#reuse(task, waited.result, fenced)
      if (waited.kind === 'owned') {
        this.#recordAbandoned(task, waited.previousOwner, waited.previousEpoch)
        active.epoch = waited.epoch
        active.lost = false
        const outcome = await this.#execute(active, provider, waited.epoch)
        if (outcome.status !== 'fenced') return outcome
        fenced = true
      }
      // released or wait_timeout: try to claim again.
    }
  }

  /** Runs every step; completes the claim (fenced) unless this is an audit-mode duplicate. */
  async #execute(
    active: Active,
    provider: Provider,
    epoch: number | null,
  ): Promise<Finish | { status: 'fenced' }> {
    const { task } = active
    const messages: ChatMessage[] = taskMessages(task.type, JSON.parse(task.payload) as JsonValue)
    const usage: Usage = { ...ZERO_USAGE }
    let text = ''
    for (let step = 1; step <= task.steps; step++) {
      if (step > 1) {
        messages.push({ role: 'assistant', content: text })
        messages.push(continueMessage(step, task.steps))
      }
      const call = await this.#call(active, provider, messages, step, epoch)
      if (call.kind === 'lost') return { status: 'fenced' }
      if (call.kind === 'failed') {
        const error = call.status ? `HTTP ${call.status}: ${call.error}` : call.error
        if (epoch !== null) {
          const stored = JSON.stringify({ error, status: call.status, step })
          if (call.deterministic && call.status !== null && isInputFailure(call.status)) {
            // The request itself was refused (400/413/422): the same input fails the same way, so
            // the failure is kept like a result. Auth, quota or unknown-model errors (401/403/404)
            // are about the setup, not the task: those release the claim for a later retry.
            if (!this.#o.claims.complete(task.fp, epoch, stored, 'failed'))
              return { status: 'fenced' }
          } else {
            this.#o.claims.release(task.fp, epoch)
          }
          active.epoch = null
        }
        return { status: 'failed', result: null, error }
      }
      text = call.text
      addUsage(usage, call.usage)
    }
    const result = JSON.stringify({ text, steps: task.steps, usage })
    if (epoch !== null) {
      const completed =
        !active.lost &&
        (await persist(() => this.#o.claims.complete(task.fp, epoch, result, 'succeeded')))
      if (!completed) {
        active.epoch = null
        return { status: 'fenced' }
      }
      active.epoch = null
    }
    return { status: 'succeeded', result, error: null }
  }

  /** One provider call, admitted by the scheduler, retried on throttles and transient errors. */
  async #call(
    active: Active,
    provider: Provider,
    messages: ChatMessage[],
    step: number,
    epoch: number | null,
  ): Promise<CallResult> {
    const { task } = active
    const { scheduler, clock, ledger } = this.#o
    const partition = `${task.provider}:${task.model}`
    let attempts = 0
    let throttles = 0
    for (;;) {
      if (active.lost) return { kind: 'lost', text: '' }
      // Stopping means no new calls: the next step or retry waits for the next run.
      if (this.#stopping) throw new StopSignal('stop')
      const notStarted = step === 1 && attempts === 0 && throttles === 0
      this.#checkBatch(task, notStarted)
      const permit = await scheduler.acquire(partition, active.controller.signal)
      try {
        // The wait for a slot may have been long: look again before sending.
        this.#checkBatch(task, notStarted)
      } catch (err) {
        permit.release('error')
        throw err
      }
      const signal = AbortSignal.any([
        active.controller.signal,
        AbortSignal.timeout(this.#o.callTimeoutMs),
      ])
      let response: ProviderResponse
      let outcome: Outcome
      try {
        response = await provider.call({ model: task.model, messages: [...messages], signal })
        outcome = classify(response, scheduler.getParams(partition).nearLimitRemaining)
      } catch (err) {
        if (active.controller.signal.aborted) {
          permit.release('error')
          // The request was sent and may be billed; its usage is unknown. Keep it on the ledger.
          this.#guard('ledger', () =>
            ledger.record({
              ...this.#row(task, step, epoch),
              usage: ZERO_USAGE,
              outcome: 'abandoned',
              latencyMs: clock.now() - permit.sentAt,
              status: null,
            }),
          )
          throw err
        }
        const timedOut = signal.aborted
        outcome = timedOut ? 'timeout' : 'error'
        response = {
          status: 0,
          headers: {},
          error: timedOut
            ? `no answer within ${this.#o.callTimeoutMs} ms`
            : `request failed: ${(err as Error).message}`,
        }
      }
      permit.release(outcome)
      const latencyMs = clock.now() - permit.sentAt
      const base = {
        ...this.#row(task, step, epoch),
        latencyMs,
        status: response.status || null,
      }
      if (outcome === 'ok' || outcome === 'near_limit') {
        // A provider that answers without usage still billed the call: estimate it (≈4 chars a
        // token) rather than put a free call on the ledger.
        const usage = response.usage ?? estimateUsage(messages, response.text ?? '')
        // Still the owner? A call that finished after a takeover was paid for twice.
        // A paid answer must reach the ledger even if another process holds the write lock.
        const owner = await persist(
          () =>
            epoch !== null && !active.lost && this.#o.claims.renew(task.fp, epoch, this.#o.leaseMs),
        )
        const kind: LedgerOutcome = owner ? 'executed' : 'duplicate'
        await persist(() => ledger.record({ ...base, usage, outcome: kind }))
        if (epoch !== null && !owner) {
          active.lost = true
          return { kind: 'lost', text: response.text ?? '' }
        }
        return { kind: 'ok', text: response.text ?? '', usage }
      }
      const pushback = outcome === 'throttled' || outcome === 'overloaded'
      ledger.record({
        ...base,
        usage: response.usage ?? ZERO_USAGE,
        outcome: pushback ? 'throttled' : 'error',
      })
      const message = response.error ?? `HTTP ${response.status}`
      if (pushback) {
        throttles++
        if (throttles > this.#o.maxThrottleRetries) {
          return {
            kind: 'failed',
            deterministic: false,
            error: `gave up after ${throttles} throttles: ${message}`,
            status: response.status || null,
          }
        }
        const wait = retryDelayMs(response.headers, clock.now()) ?? backoffMs(throttles)
        await sleep(Math.min(wait, 60_000), active.controller.signal)
        continue
      }
      if (response.status > 0 && isDeterministicFailure(response.status)) {
        return { kind: 'failed', deterministic: true, error: message, status: response.status }
      }
      attempts++
      if (attempts >= this.#o.maxAttempts) {
        return {
          kind: 'failed',
          deterministic: false,
          error: `gave up after ${attempts} attempts: ${message}`,
          status: response.status || null,
        }
      }
      await sleep(backoffMs(attempts), active.controller.signal)
    }
  }

  #reuse(task: QueuedTask, stored: StoredResult, fenced: boolean): Finish {
    if (!fenced) {
      this.#o.ledger.record({
        ...this.#row(task, 0, stored.epoch),
        usage: ZERO_USAGE,
        outcome: 'reused',
        latencyMs: null,
        status: null,
        savedMicros: this.#o.ledger.originalCostMicros(task.fp),
      })
    }
    if (stored.status === 'failed') {
      const error = safeError(stored.result)
      return { status: 'failed', result: null, error: `same task failed before: ${error}` }
    }
    return { status: fenced ? 'succeeded' : 'reused', result: stored.result, error: null }
  }

  /** The owner we took over from was mid-call when it vanished: the ledger keeps that attempt. */
  #recordAbandoned(
    task: QueuedTask,
    previousOwner: string | undefined,
    previousEpoch: number | undefined,
  ): void {
    this.#o.ledger.record({
      ...this.#row(task, 0, previousEpoch ?? null),
      worker: previousOwner ?? 'unknown',
      usage: ZERO_USAGE,
      outcome: 'abandoned',
      latencyMs: null,
      status: null,
    })
  }

  /** The fields every ledger row of a task shares. */
  #row(task: QueuedTask, step: number, epoch: number | null) {
    return {
      ts: this.#o.clock.now(),
      taskId: task.id,
      batchId: task.batchId,
      fp: task.fp,
      worker: this.#o.workerId,
      taskType: task.type,
      provider: task.provider,
      model: task.model,
      step,
      epoch,
    }
  }

  #releaseClaim(active: Active): void {
    if (active.epoch !== null) {
      this.#o.claims.release(active.task.fp, active.epoch)
      active.epoch = null
    }
  }

  #renewAll(): void {
    for (const a of this.#active.values()) {
      this.#o.queue.renewTask(a.task.id, this.#o.workerId, this.#o.leaseMs)
      if (a.epoch !== null && !a.lost) {
        if (!this.#o.claims.renew(a.task.fp, a.epoch, this.#o.leaseMs)) a.lost = true
      }
    }
  }

  #throwIfAborted(active: Active): void {
    if (active.controller.signal.aborted) throw active.controller.signal.reason
  }
}

function estimateUsage(messages: readonly ChatMessage[], text: string): Usage {
  return {
    inputTokens: estimateTokens(messages),
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: text === '' ? 0 : estimateTokens([{ role: 'assistant', content: text }]),
  }
}

function addUsage(total: Usage, u: Usage): void {
  total.inputTokens += u.inputTokens
  total.cachedInputTokens += u.cachedInputTokens
  total.cacheWriteTokens += u.cacheWriteTokens
  total.outputTokens += u.outputTokens
}

/** Exponential backoff with full jitter (AWS architecture blog), capped at 30 s. */
function backoffMs(attempt: number): number {
  const cap = Math.min(30_000, 250 * 2 ** Math.min(attempt, 10))
  return Math.floor(cap / 2 + Math.random() * (cap / 2))
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Runs a database write that must not be lost, retrying while another process holds the write
 * lock past busy_timeout (each try already waited that long), for up to about a minute.
 */
async function persist<T>(write: () => T): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return write()
    } catch (err) {
      if (!isBusy(err) || attempt >= 8) throw err
      await new Promise((r) => setTimeout(r, Math.min(8000, 250 * 2 ** attempt)))
    }
  }
}

/** The provider refused the request itself: sending it again would fail the same way. */
function isInputFailure(status: number): boolean {
  return status === 400 || status === 413 || status === 422
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}

function safeError(result: string): string {
  try {
    const parsed = JSON.parse(result) as { error?: unknown }
    return typeof parsed.error === 'string' ? parsed.error : result
  } catch {
    return result
  }
}
