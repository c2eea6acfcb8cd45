// A stand-in for the call journal, until it lands: the Effects of a driven execution (an agent
// module's handler) run live. It does NOT journal: an execution run again (resume, takeover,
// retry) sends every call and runs every step again. Calls still go through callProvider: the
// claim, the scheduler's partition of the request's provider and model, the ledger.
import type { QueuedTask } from '../queue'
import { PartitionStoppedError } from '../scheduler'
import type { JsonValue, Provider, RequestParams, Usage } from '../types'
import { callProvider } from './call'
import { StopSignal, type Active, type RunContext } from './context'
import type { ChatAnswer, ChatRequest, Driver, DriverResult, DriverTask, Effects } from './effects'
import { EffectStop } from './effects'
import { failedStep, type Execution } from './execute'
import { addUsage, ZERO_USAGE } from './ledger-rows'
import { isBusy, persist } from './retry'

/** Runs `driver` under the claim (epoch) this worker owns; completes the claim with its answer. */
export async function executeDriven(
  ctx: RunContext,
  active: Active,
  provider: Provider,
  epoch: number | null,
  driver: Driver,
): Promise<Execution> {
  const { task } = active
  const effects = new LiveEffects(ctx, active, provider, epoch)
  let result: DriverResult
  try {
    result = await driver(driverTask(task), effects)
  } catch (err) {
    if (active.stopped) throw active.stopped
    if (err instanceof EffectStop) {
      if (err.why === 'lost') return { status: 'fenced' }
      const failed = {
        kind: 'failed' as const,
        deterministic: err.deterministic,
        error: err.message,
        status: err.status,
      }
      return failedStep(ctx, active, failed, effects.index, epoch, effects.costMicros)
    }
    if (err instanceof StopSignal || err instanceof PartitionStoppedError || isBusy(err)) throw err
    // The handler's own failure: not kept as a result, so the same task runs again next time.
    if (epoch !== null) ctx.o.claims.release(task.fp, epoch)
    active.epoch = null
    return { status: 'failed', result: null, error: (err as Error).message }
  }
  // A handler that caught the stop of its calls still must not complete the claim.
  if (active.stopped) throw active.stopped
  if (active.lost) return { status: 'fenced' }
  const body = JSON.stringify({
    text: result.text,
    value: result.value,
    message: result.message,
    finishReason: result.finishReason,
    steps: effects.index,
    usage: effects.usage,
    costMicros: effects.costMicros,
  })
  if (epoch === null) return { status: 'succeeded', result: body, error: null }
  const { claims } = ctx.o
  const completed =
    !active.lost &&
    (await persist(() => claims.complete(task.fp, epoch, body, 'succeeded', effects.costMicros)))
  active.epoch = null
  if (!completed) return { status: 'fenced' }
  return { status: 'succeeded', result: body, error: null, resultRef: claims.resultRef?.(task.fp) }
}

/** The queue's row as a driver sees it. */
export function driverTask(task: QueuedTask): DriverTask {
  return {
    id: task.id,
    batchId: task.batchId,
    seq: task.seq,
    type: task.type,
    payload: JSON.parse(task.payload) as JsonValue,
    key: task.key,
    steps: task.steps,
    provider: task.provider,
    model: task.model,
    params: task.params === null ? null : (JSON.parse(task.params) as RequestParams),
  }
}

/** Log lines kept per execution: a handler that logs in a loop does not fill the memory. */
const MAX_LOG_LINES = 1000

class LiveEffects implements Effects {
  /** The last index taken by chat or step. */
  index = 0
  readonly usage: Usage = { ...ZERO_USAGE }
  /** Kept in memory for the execution only (the journal stores them with the task). */
  readonly lines: string[] = []
  #cost: number | null = 0
  #paid = 0

  constructor(
    private readonly ctx: RunContext,
    private readonly active: Active,
    private readonly provider: Provider,
    private readonly epoch: number | null,
  ) {}

  get signal(): AbortSignal {
    return this.active.controller.signal
  }

  get costMicros(): number | null {
    return this.#paid === 0 ? null : this.#cost
  }

  async chat(request: ChatRequest): Promise<ChatAnswer> {
    const { task } = this.active
    const step = ++this.index
    const providerId = request.provider ?? task.provider
    const provider = providerId === task.provider ? this.provider : this.ctx.o.provider(providerId)
    if (!provider) throw new EffectStop('failed', `unknown provider "${providerId}"`, null, true)
    const taskParams = task.params === null ? undefined : (JSON.parse(task.params) as RequestParams)
    const params = request.params ? { ...taskParams, ...request.params } : taskParams
    const call = await callProvider(
      this.ctx,
      routed(this.active, providerId, request.model ?? task.model),
      provider,
      {
        messages: request.messages,
        step,
        epoch: this.epoch,
        params,
        maxOutputTokens: params?.max_tokens,
      },
    )
    if (call.kind === 'lost') throw new EffectStop('lost', 'the claim was taken over')
    if (call.kind === 'failed') {
      throw new EffectStop('failed', call.error, call.status, call.deterministic)
    }
    addUsage(this.usage, call.usage)
    this.#paid++
    this.#cost =
      this.#cost === null || call.costMicros === null ? null : this.#cost + call.costMicros
    return {
      text: call.text,
      message: call.message ?? null,
      usage: call.usage,
      finishReason: call.finishReason ?? null,
      costMicros: call.costMicros,
      replayed: false,
    }
  }

  async step<T extends JsonValue>(_name: string, fn: () => Promise<T> | T): Promise<T> {
    this.index++
    if (this.active.lost) throw new EffectStop('lost', 'the claim was taken over')
    return fn()
  }

  log(message: string): void {
    if (this.lines.length < MAX_LOG_LINES) this.lines.push(message)
  }
}

/** The task as another provider or model sees it: the partition, the request and the ledger row. */
function routed(active: Active, provider: string, model: string): Active {
  if (provider === active.task.provider && model === active.task.model) return active
  const task = { ...active.task, provider, model }
  // Writes (lost, epoch, a fresh controller) still land on the task's own record.
  return new Proxy(active, {
    get: (target, key) => (key === 'task' ? task : Reflect.get(target, key)),
  })
}
