// One execution of a task: every step in turn, then the claim completed (fenced) with the result.
import { parseExactJson } from '../../../shared/exact-json'
import { continueMessage, taskMessages } from '../prompt'
import type { ChatMessage, JsonValue, Provider, RequestParams, Usage } from '../types'
import { callProvider } from './call'
import type { Active, CallResult, Finish, RunContext } from './context'
import { addUsage, ZERO_USAGE } from './ledger-rows'
import { executeDriven } from './live-effects'
import { persistPaid } from './held-writes'
import { isInputFailure } from './retry'

/** An execution whose claim a newer epoch took: its result is not ours to save. */
export type Execution = Finish | { status: 'fenced' }

/** Runs every step; completes the claim (fenced) unless this is an audit-mode duplicate. */
export async function execute(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  epoch: number | null,
): Promise<Execution> {
  const { task } = active
  const driver = ctx.o.driverFor(task)
  if (driver) return executeDriven(ctx, active, provider, epoch, driver)
  const messages: ChatMessage[] = taskMessages(task.type, parseExactJson(task.payload) as JsonValue)
  const params = task.params === null ? undefined : (parseExactJson(task.params) as RequestParams)
  const usage: Usage = { ...ZERO_USAGE }
  const cost = new ExecutionCost()
  let last: Extract<CallResult, { kind: 'ok' }> | undefined
  for (let step = 1; step <= task.steps; step++) {
    if (step > 1) {
      messages.push({ role: 'assistant', content: last?.text ?? '' })
      messages.push(continueMessage(step, task.steps))
    }
    const call = await callProvider(ctx, active, provider, {
      messages,
      step,
      epoch,
      params,
      maxOutputTokens: params?.max_tokens,
    })
    if (call.kind === 'lost') return { status: 'fenced' }
    if (call.kind === 'failed') return failedStep(ctx, active, call, step, epoch, cost.micros)
    last = call
    addUsage(usage, call.usage)
    cost.add(call.costMicros)
  }
  // The answer is the last step's: cut short by the output cap, it is kept but not handed out to
  // duplicates unless the operator accepts truncated answers (claims.ts).
  const truncated = last?.finishReason === 'length'
  const result = resultJson(last, task.steps, usage, cost.micros, truncated)
  if (epoch === null) return { status: 'succeeded', result, error: null }
  const { claims } = ctx.o
  const status = truncated ? 'truncated' : 'succeeded'
  const completed =
    !active.lost &&
    (await persistPaid(
      ctx,
      active,
      () => claims.complete(task.fp, epoch, result, status, cost.micros),
      {
        costMicros: cost.micros,
      },
    ))
  active.epoch = null
  if (!completed) return { status: 'fenced' }
  // The task points at the result its claim stored: one copy, however many tasks share it.
  return { status: 'succeeded', result, error: null, resultRef: claims.resultRef?.(task.fp) }
}

/**
 * A task's stored result (results.body): `{text, message?, finishReason?, truncated?, steps, usage,
 * costMicros}`. Results stored before finish reasons were kept have only text, steps and usage;
 * every reader (results.ts) takes both.
 */
function resultJson(
  last: Extract<CallResult, { kind: 'ok' }> | undefined,
  steps: number,
  usage: Usage,
  costMicros: number | null,
  truncated: boolean,
): string {
  return JSON.stringify({
    text: last?.text ?? '',
    message: last?.message,
    finishReason: last?.finishReason,
    truncated: truncated || undefined,
    steps,
    usage,
    costMicros,
  })
}

/** What an execution's paid calls cost: null once one is unpriced, or when none was paid. */
class ExecutionCost {
  #micros: number | null = 0
  #calls = 0

  add(micros: number | null): void {
    this.#calls++
    this.#micros = this.#micros === null || micros === null ? null : this.#micros + micros
  }

  get micros(): number | null {
    return this.#calls === 0 ? null : this.#micros
  }
}

/** A step that failed for good: the failure is kept as the claim's result or the claim released. */
export function failedStep(
  ctx: RunContext,
  active: Active,
  call: Extract<CallResult, { kind: 'failed' }>,
  step: number,
  epoch: number | null,
  costMicros: number | null,
): Execution {
  const { task } = active
  const error = call.status ? `HTTP ${call.status}: ${call.error}` : call.error
  if (epoch !== null) {
    const stored = JSON.stringify({ error, status: call.status, step, costMicros })
    if (call.deterministic && call.status !== null && isInputFailure(call.status)) {
      // The request itself was refused (400/413/422): the same input fails the same way, so
      // the failure is kept like a result. Setup failures (key, model, credit: setup-failures.ts)
      // never get here: they stop the partition and leave the task queued.
      if (!ctx.o.claims.complete(task.fp, epoch, stored, 'failed', costMicros)) {
        return { status: 'fenced' }
      }
    } else {
      ctx.o.claims.release(task.fp, epoch)
    }
    active.epoch = null
  }
  return { status: 'failed', result: null, error }
}
