// One provider call of one step: admitted by the scheduler, classified, put on the ledger, and
// retried on throttles and transient errors.
import { classify, isDeterministicFailure, quotaExhausted, retryDelayMs } from '../classify'
import { estimateTokens } from '../prompt'
import type { ChatMessage, LedgerOutcome, Outcome, Provider, ProviderResponse } from '../types'
import { checkBatch, StopSignal, type Active, type CallResult, type RunContext } from './context'
import { estimateUsage, ledgerRow, ZERO_USAGE } from './ledger-rows'
import { backoffMs, persist, sleep } from './retry'

/** What one step sends: the conversation so far, which step it is, under which claim epoch. */
export interface StepCall {
  messages: ChatMessage[]
  step: number
  /** Null for an audit-mode duplicate, which owns no claim. */
  epoch: number | null
  /** The answer's cap, when the step sets one: the output estimate for the rate budget. */
  maxOutputTokens?: number
}

/** One request's answer (or the failure standing in for it), with its ledger row's fields. */
interface Sent {
  response: ProviderResponse
  outcome: Outcome
  base: ReturnType<typeof ledgerRow> & { latencyMs: number; status: number | null }
}

/** One provider call, admitted by the scheduler, retried on throttles and transient errors. */
export async function callProvider(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  call: StepCall,
): Promise<CallResult> {
  const { o } = ctx
  let attempts = 0
  let throttles = 0
  for (;;) {
    if (active.lost) return { kind: 'lost', text: '' }
    // Stopping means no new calls: the next step or retry waits for the next run.
    if (ctx.stopping()) throw new StopSignal('stop')
    const notStarted = call.step === 1 && attempts === 0 && throttles === 0
    const sent = await send(ctx, active, provider, call, notStarted)
    const { response, outcome, base } = sent
    if (outcome === 'ok' || outcome === 'near_limit') {
      return answered(ctx, active, sent, call)
    }
    const pushback = outcome === 'throttled' || outcome === 'overloaded'
    o.ledger.record({
      ...base,
      usage: response.usage ?? ZERO_USAGE,
      outcome: pushback ? 'throttled' : 'error',
    })
    const message = response.error ?? `HTTP ${response.status}`
    const quota = quotaExhausted(response)
    if (quota !== undefined) {
      // Retrying spends nothing but time until someone adds credit: fail now, say why.
      return {
        kind: 'failed',
        deterministic: true,
        quota: true,
        error: quota,
        status: response.status,
      }
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
    attempts++
    if (attempts >= o.maxAttempts) {
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

/** Sends the request once a slot is free; a send aborted mid-call stays on the ledger, rethrown. */
async function send(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  { messages, step, epoch, maxOutputTokens }: StepCall,
  notStarted: boolean,
): Promise<Sent> {
  const { task } = active
  const { scheduler, clock, ledger } = ctx.o
  const partition = `${task.provider}:${task.model}`
  checkBatch(ctx, task, notStarted)
  // What the call should cost, for a partition paced by an announced token budget.
  const estimate = { inputTokens: estimateTokens(messages), outputTokens: maxOutputTokens ?? 0 }
  const permit = await scheduler.acquire(partition, active.controller.signal, estimate)
  try {
    // The wait for a slot may have been long: look again before sending.
    checkBatch(ctx, task, notStarted)
    // Nothing is sent on the strength of a claim that is not on disk yet.
    await ctx.o.writes.durable()
  } catch (err) {
    permit.release('error')
    throw err
  }
  const { signal } = active.controller
  const limit = deadline(active, ctx.o.callTimeoutMs)
  let response: ProviderResponse
  let outcome: Outcome
  try {
    response = await provider.call({
      model: task.model,
      messages: [...messages],
      maxOutputTokens,
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
        ledger.record({
          ...ledgerRow(ctx.o, task, step, epoch),
          usage: ZERO_USAGE,
          outcome: 'abandoned',
          latencyMs: clock.now() - permit.sentAt,
          status: null,
        }),
      )
      throw err
    }
    const timedOut = limit.timedOut()
    outcome = timedOut ? 'timeout' : 'error'
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
  // Headers and real usage settle the partition's rate budget and may pause it.
  permit.release(outcome, { headers: response.headers, usage: response.usage })
  const latencyMs = clock.now() - permit.sentAt
  return {
    response,
    outcome,
    base: { ...ledgerRow(ctx.o, task, step, epoch), latencyMs, status: response.status || null },
  }
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
  { response, base }: Sent,
  { messages, epoch }: StepCall,
): Promise<CallResult> {
  const { task } = active
  const { claims, ledger, leaseMs } = ctx.o
  // A provider that answers without usage still billed the call: estimate it (≈4 chars a
  // token) rather than put a free call on the ledger.
  const usage = response.usage ?? estimateUsage(messages, response.text ?? '')
  // Still the owner? A call that finished after a takeover was paid for twice.
  // A paid answer must reach the ledger even if another process holds the write lock.
  const owner = await persist(
    () => epoch !== null && !active.lost && claims.renew(task.fp, epoch, leaseMs),
  )
  const kind: LedgerOutcome = owner ? 'executed' : 'duplicate'
  const { costMicros } = await persist(() => ledger.record({ ...base, usage, outcome: kind }))
  if (epoch !== null && !owner) {
    active.lost = true
    return { kind: 'lost', text: response.text ?? '' }
  }
  return { kind: 'ok', text: response.text ?? '', usage, costMicros }
}
