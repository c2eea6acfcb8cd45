// One provider call of one step: admitted by the scheduler, classified, put on the ledger, and
// retried on throttles and transient errors.
import { classify, isDeterministicFailure, retryDelayMs } from '../providers/classify'
import { estimateTokens } from '../providers/prompt'
import { PartitionStoppedError } from '../pacing/scheduler'
import { describeStop, setupFailure, unreachableCode } from '../providers/setup-failures'
import type {
  ChatMessage,
  LedgerOutcome,
  Outcome,
  Provider,
  ProviderResponse,
  RequestParams,
  Usage,
} from '../core/types'
import { checkBatch, StopSignal, type Active, type CallResult, type RunContext } from './context'
import { estimateUsage, ledgerRow, ZERO_USAGE } from './ledger-rows'
import { persistPaid, writeBeforeSend } from './durable/held-writes'
import { backoffMs } from './retry'
import { sleep } from '../core/timers'
import {
  budgetScope,
  markSent,
  markTeamSent,
  releaseBudget,
  reserveBudget,
  rethrowing,
  settleBudget,
  type Hold,
} from './budget-reserve'
import { VIA_BATCH, VIA_HEADER } from '../providers/batch/constants'

/** What one call sends: the conversation so far, its index in the execution, under which epoch. */
export interface StepCall {
  messages: ChatMessage[]
  /** The call's index within its execution (1, 2, ...): the ledger row's step. */
  step: number
  /** The provider and model it goes to (an agent's ctx.chat may pick others than the task's). */
  provider: string
  model: string
  /** Null for an audit-mode duplicate, which owns no claim. */
  epoch: number | null
  /** The answer's cap, when the step sets one: the output estimate for the rate budget. */
  maxOutputTokens?: number
  /** The task's request parameters (max_tokens, temperature, ...), sent with every call. */
  params?: RequestParams
  /** Runs just before the request goes out, its writes committed with the claim's (the intent). */
  beforeSend?: () => void
  /** Runs with the answer, in the write of its ledger row, while this epoch owns the claim. */
  onAnswer?: (answer: PaidAnswer) => void
  /**
   * Runs with the ledger row of a request that got no usable answer (a refusal, an error, a
   * timeout, an abort): nothing was lost, the intent is void until the next attempt's.
   */
  onUnanswered?: () => void
  /** An earlier run sent this same call and its answer was lost: this one is paid twice. */
  answerLost?: boolean
}

/** An answer as paid for and ledgered. */
export interface PaidAnswer {
  response: ProviderResponse
  usage: Usage
  costMicros: number | null
}

/** Why a call paid twice is on the ledger as a duplicate. */
export const ANSWER_LOST = 'answer lost'

/** One request's answer (or the failure standing in for it), with its ledger row's fields. */
interface Sent {
  response: ProviderResponse
  outcome: Outcome
  base: ReturnType<typeof ledgerRow> & { latencyMs: number; status: number | null }
  /** The request got no answer before its deadline and was aborted. */
  timedOut: boolean
  /** A setup failure: the answer stopped the partition (setup-failures.ts). */
  stopped: boolean
  /** The call's reservations under the caps, settled with its ledger row; null: none. */
  reservation: Hold | null
}

/** One provider call, admitted by the scheduler, retried on throttles and transient errors. */
export async function callProvider(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  call: StepCall,
): Promise<CallResult> {
  const { o } = ctx
  const partition = `${call.provider}:${call.model}`
  let attempts = 0
  let throttles = 0
  let timeouts = 0
  for (;;) {
    if (active.lost) return { kind: 'lost', text: '' }
    // Stopping means no new calls: the next step or retry waits for the next run.
    if (ctx.stopping()) throw new StopSignal('stop')
    const notStarted = call.step === 1 && attempts === 0 && throttles === 0 && timeouts === 0
    const sent = await send(ctx, active, provider, call, notStarted)
    const { response, outcome, base } = sent
    if (outcome === 'ok' || outcome === 'near_limit') {
      return answered(ctx, active, sent, call)
    }
    const pushback = outcome === 'throttled' || outcome === 'overloaded'
    o.writes.run(() => {
      const r = o.ledger.record({
        ...base,
        ...failedUsage(response, call.messages),
        outcome: pushback ? 'throttled' : sent.timedOut ? 'timeout' : 'error',
      })
      settleBudget(ctx, budgetScope(active, call), sent.reservation, r.costMicros)
      call.onUnanswered?.()
    })
    const message = response.error ?? `HTTP ${response.status}`
    // The partition stopped (this answer, or one before it): the task stays queued.
    const stop = sent.stopped ? o.scheduler.stopped(partition) : undefined
    if (stop) throw new PartitionStoppedError(partition, stop.reason)
    // Paid, and the same request would be paid for the same answer again: kept as the failure.
    if (response.unreadable?.oversize) {
      return { kind: 'failed', deterministic: true, keep: true, error: message, status: null }
    }
    if (pushback) {
      throttles++
      if (throttles > o.maxThrottleRetries) {
        return {
          kind: 'failed',
          deterministic: false,
          error: `gave up after ${throttles} throttles: ${message}`,
          status: response.status || null,
        }
      }
      // A pacing scheduler pauses the whole partition on the refusal's retry-after (or backs off
      // at the floor) and holds admissions to the announced budget: the retry queues at once and
      // goes when it says. Sleeping here as well would wait twice.
      if (o.scheduler.paced) continue
      const wait = retryDelayMs(response.headers, o.clock.now()) ?? backoffMs(throttles)
      await sleep(Math.min(wait, 60_000), active.controller.signal)
      continue
    }
    if (response.status > 0 && isDeterministicFailure(response.status)) {
      return { kind: 'failed', deterministic: true, error: message, status: response.status }
    }
    // A call that hung once may hang again, each time for the whole deadline: one retry only.
    if (sent.timedOut && ++timeouts >= o.maxTimeoutAttempts) {
      return {
        kind: 'failed',
        deterministic: false,
        error: `timeout: gave up after ${timeouts} calls with ${message}`,
        status: null,
      }
    }
    if (!sent.timedOut && ++attempts >= o.maxAttempts) {
      return {
        kind: 'failed',
        deterministic: false,
        error: `gave up after ${attempts} attempts: ${message}`,
        status: response.status || null,
      }
    }
    await sleep(backoffMs(attempts + timeouts), active.controller.signal)
  }
}

/** Sends the request once a slot is free; a send aborted mid-call stays on the ledger, rethrown. */
async function send(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  call: StepCall,
  notStarted: boolean,
): Promise<Sent> {
  const { messages, step, epoch, maxOutputTokens, params } = call
  const { task } = active
  const { scheduler, clock, ledger } = ctx.o
  const partition = `${call.provider}:${call.model}`
  const row = () => ({
    ...ledgerRow(ctx.o, task, step, epoch),
    provider: call.provider,
    model: call.model,
  })
  checkBatch(ctx, task, notStarted)
  // What the call should cost, for a partition paced by an announced token budget.
  const estimate = { inputTokens: estimateTokens(messages), outputTokens: maxOutputTokens ?? 0 }
  if (ctx.stopping()) throw new StopSignal('stop')
  // Reserved before the slot is taken: a call waiting for money holds no slot.
  const reserving = reserveBudget(ctx, active, call)
  const budget = reserving === null ? null : await reserving
  const reservation = budget?.hold ?? null
  const giveBack = () => releaseBudget(ctx, reservation)
  const permit = await admit(ctx, active, partition, estimate).catch(rethrowing(giveBack))
  let intent = false
  try {
    // The wait for a slot may have been long: look again before sending. A stop that began
    // meanwhile means no new calls, even with a slot free.
    checkBatch(ctx, task, notStarted)
    if (ctx.stopping()) throw new StopSignal('stop')
    await writeBeforeSend(ctx, active, call.beforeSend)
    markSent(ctx, reservation)
    intent = true
    // Team mode's caps only: a round trip to the team store (no await without one).
    if (reservation?.team != null) await markTeamSent(ctx, active, reservation)
    // Nothing is sent on the strength of a claim (or an intent) that is not on disk yet (or was
    // lost to a full disk), nor while the disk cannot take the answer.
    await ctx.onDisk(active)
    // Another task's answer may have stopped the partition while this one waited for the disk.
    const stop = scheduler.stopped(partition)
    if (stop) throw new PartitionStoppedError(partition, stop.reason)
  } catch (err) {
    permit.release('error')
    giveBack()
    // Nothing was sent: the intent is void.
    if (intent) ctx.guard('journal', () => call.onUnanswered?.())
    throw err
  }
  const { signal } = active.controller
  const limit = deadline(active, ctx.o.callTimeoutMs)
  let response: ProviderResponse
  let outcome: Outcome
  let unreachable: string | undefined
  let hung = false
  try {
    response = await provider.call({
      model: call.model,
      messages: [...messages],
      // Under a cap a call without an output cap is sent with the one its reservation assumed.
      maxOutputTokens: budget?.defaultedOutput ? budget.outputTokens : maxOutputTokens,
      params,
      // Every step of a multi-step task resends the steps before it: worth caching.
      cacheHistory: task.steps > 1,
      signal,
    })
    outcome = classify(response, scheduler.getParams(partition).nearLimitRemaining)
  } catch (err) {
    if (signal.aborted && !limit.timedOut()) {
      permit.release('error')
      // The request was sent and may be billed; its usage is unknown. Keep it on the ledger.
      ctx.guard('ledger', () =>
        ctx.o.writes.run(() => {
          const r = ledger.record({
            ...row(),
            usage: ZERO_USAGE,
            outcome: 'abandoned',
            latencyMs: clock.now() - permit.sentAt,
            status: null,
          })
          settleBudget(ctx, budgetScope(active, call), reservation, r.costMicros)
          call.onUnanswered?.()
        }),
      )
      throw err
    }
    const timedOut = limit.timedOut()
    hung = timedOut
    outcome = timedOut ? 'timeout' : 'error'
    if (!timedOut) unreachable = unreachableCode(err)
    response = {
      status: 0,
      headers: {},
      error: timedOut
        ? `no answer within ${ctx.o.callTimeoutMs} ms`
        : `request failed: ${(err as Error).message}`,
    }
  } finally {
    limit.clear()
  }
  // Every task of the partition would get this answer: stop it before the slot is freed, so no
  // waiter is let through to send the same request.
  const setup =
    outcome === 'ok' || outcome === 'near_limit'
      ? undefined
      : setupFailure(call.provider, response, unreachable)
  if (setup) scheduler.stop(partition, describeStop(partition, setup))
  // Headers and real usage settle the partition's rate budget and may pause it.
  permit.release(outcome, { headers: response.headers, usage: response.usage })
  const latencyMs = clock.now() - permit.sentAt
  return {
    response,
    outcome,
    base: { ...row(), latencyMs, status: response.status || null },
    timedOut: hung,
    stopped: setup !== undefined,
    reservation,
  }
}

/** Waits for the scheduler's slot; a stop meanwhile ends the wait at once (Runner.stop). */
async function admit(
  ctx: RunContext,
  active: Active,
  partition: string,
  estimate: { inputTokens: number; outputTokens: number },
) {
  active.admitting = true
  try {
    return await ctx.o.scheduler.acquire(partition, active.controller.signal, estimate)
  } finally {
    active.admitting = false
  }
}

/**
 * The usage a failed call is ledgered with: what the provider reported, else, for a 2xx whose body
 * was unreadable (it may have been billed), an estimate: the request as sent, and whatever answer
 * text could be read. Its row keeps the status received, not the 502 it is retried as.
 */
function failedUsage(
  response: ProviderResponse,
  messages: readonly ChatMessage[],
): { usage: Usage; estimated?: boolean; status?: number } {
  const { unreadable } = response
  if (!unreadable) return { usage: response.usage ?? ZERO_USAGE }
  if (response.usage) return { usage: response.usage, status: unreadable.status }
  const usage = estimateUsage(messages, unreadable.text)
  // An answer too big to read: its bytes, about 4 to a token (JSON's quotes and keys count too).
  if (unreadable.oversize) usage.outputTokens = Math.ceil(unreadable.oversize.bytes / 4)
  return { usage, estimated: true, status: unreadable.status }
}

/** Why a call's deadline aborted its task's signal. */
class CallTimeout extends Error {}

/**
 * A call's deadline: a timer of our own, cleared when the call ends (AbortSignal.timeout stays
 * alive until it fires, and on Node 20 AbortSignal.any can lose it: nodejs/node#57736). It aborts
 * the task's own signal; the task then carries on with a fresh controller. One AbortSignal per task
 * instead of one more per call: on Node 20 each costs ~15 µs to create and listen to.
 */
function deadline(active: Active, ms: number): { timedOut(): boolean; clear(): void } {
  const controller = active.controller
  const timer = setTimeout(() => controller.abort(new CallTimeout(`no answer within ${ms} ms`)), ms)
  const timedOut = () => controller.signal.reason instanceof CallTimeout
  return {
    timedOut,
    clear() {
      clearTimeout(timer)
      // Fired, even as the answer landed: what follows must not see the call's deadline.
      if (timedOut() && active.controller === controller) active.controller = new AbortController()
    },
  }
}

/** A paid answer: on the ledger as executed, or as a duplicate if the claim was lost meanwhile. */
async function answered(
  ctx: RunContext,
  active: Active,
  { response, base, reservation }: Sent,
  { messages, epoch, onAnswer, answerLost, provider, model }: StepCall,
): Promise<CallResult> {
  const { task } = active
  const { claims, ledger, leaseMs } = ctx.o
  // A provider that answers without usage still billed the call: estimate it (≈4 chars a
  // token) rather than put a free call on the ledger, and say so on the row.
  const estimated = response.usage === undefined
  const usage = response.usage ?? estimateUsage(messages, response.text ?? '')
  // Answered through a provider batch: billed at the batch rate, and never paid twice, whatever
  // an earlier run's intent says (the batch journal knows what was submitted, and submits once).
  const viaBatch = response.headers[VIA_HEADER] === VIA_BATCH
  const tier = viaBatch ? ('batch' as const) : undefined
  // Still the owner? A call that finished after a takeover was paid for twice.
  // A paid answer must reach the ledger even if another process holds the write lock, or the
  // disk is full for a while (held-writes.ts): one write, committed before the task goes on. The
  // answer reaches the journal in the transaction of its ledger row, or neither does.
  const { owner, costMicros } = await persistPaid(
    ctx,
    active,
    () => {
      const owner = epoch !== null && !active.lost && claims.renew(task.fp, epoch, leaseMs)
      const kind: LedgerOutcome = owner ? 'executed' : 'duplicate'
      const r = ledger.record({ ...base, usage, outcome: kind, estimated, tier })
      let spent = r.costMicros
      // This call was sent before and paid, but its answer was lost (the process died first):
      // that payment goes on the ledger now, a duplicate of its own with no epoch (what it wasted
      // is its cost, not the whole execution's: ledger-queries.ts executionsSql), at this
      // answer's usage (the same request), so estimated.
      if (owner && answerLost && !viaBatch) {
        const again = { epoch: null, reason: ANSWER_LOST, outcome: 'duplicate' as const }
        const lost = ledger.record({ ...base, ...again, usage, estimated: true })
        if (spent !== null && lost.costMicros !== null) spent += lost.costMicros
      }
      settleBudget(ctx, budgetScope(active, { provider, model }), reservation, spent)
      if (owner) onAnswer?.({ response, usage, costMicros: r.costMicros })
      return { owner, costMicros: r.costMicros }
    },
    { costMicros: ledger.costOf(provider, model, usage) },
  )
  if (epoch !== null && !owner) {
    active.lost = true
    return { kind: 'lost', text: response.text ?? '' }
  }
  const ok: CallResult = { kind: 'ok', text: response.text ?? '', usage, costMicros }
  if (response.finishReason !== undefined) ok.finishReason = response.finishReason
  if (response.message !== undefined) ok.message = response.message
  return ok
}
