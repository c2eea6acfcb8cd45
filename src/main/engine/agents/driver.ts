// A handler of a user's agent module as a Driver (runner/effects.ts): its ctx.chat and ctx.step
// are the execution's effects, so they are claimed, paced, ledgered (and journaled) like the
// built-in loop's calls. What the handler returns must be JSON; what it throws fails the task.
// A ctx.chat or ctx.step the handler did not await is still the task's: the execution ends when
// every effect it started has settled, so its call is ledgered as the task's own (not a late
// duplicate after the claim is gone); one started after that is refused, never sent.
import { RequestParams } from '../../../shared/contract'
import { findNonJson } from '../../../shared/json-value'
import { isChatMessage, toChatMessage } from '../providers/prompt'
import type { ChatMessage, JsonValue } from '../core/types'
import {
  EffectStop,
  type ChatRequest,
  type Driver,
  type DriverTask,
  type Effects,
} from '../runner/durable/effects'
import type { AgentContext, AgentHandler, AgentTask } from './module'

/**
 * A handler's own failure (it threw, or returned what JSON cannot carry): the task fails with this
 * message. The claim is released, not kept as a result: the same task runs again next time.
 */
export class AgentFailure extends Error {
  readonly code = 'agent_failed'
  constructor(message: string) {
    super(message)
    this.name = 'AgentFailure'
  }
}

/** Runs `handler` as the driver of a task of type `type`. */
export function agentDriver(type: string, handler: AgentHandler): Driver {
  return async (task, effects) => {
    const inFlight = new InFlight(task, effects)
    const ctx = contextFor(task, inFlight)
    let value: unknown
    try {
      value = await handler(ctx.task, ctx)
    } catch (err) {
      await inFlight.settle()
      // The execution's own ends (a lost claim, a call that failed for good, a stop) go on up.
      if (err instanceof EffectStop || effects.signal.aborted) throw err
      throw new AgentFailure(errorMessage(err))
    }
    await inFlight.settle()
    const json = jsonOrFailure(value, `the result of handler "${type}"`)
    return { text: JSON.stringify(json), value: json }
  }
}

/**
 * The effects a handler started and has not seen settle. A promise the handler drops is marked
 * handled here, so its failure neither crashes the process (an unhandled rejection) nor goes
 * unsaid: it is a line of the task's log. A refused stop still ends the task as the runner's
 * (JournaledEffects.runnerEnd), whoever awaited the call.
 */
class InFlight {
  readonly #pending = new Set<Promise<unknown>>()
  #closed = false

  constructor(
    readonly task: DriverTask,
    readonly effects: Effects,
  ) {}

  /** Runs one effect of the handler's, refused once the execution has ended. */
  track<T>(what: string, start: () => Promise<T>): Promise<T> {
    if (this.#closed) {
      const refused = new AgentFailure(
        `${what} after the handler of task ${this.task.id} (line ${this.task.seq}) had returned` +
          ' and its calls had settled: not sent (await every ctx.chat and ctx.step)',
      )
      this.effects.log(refused.message)
      const p = Promise.reject(refused)
      p.catch(() => {})
      return p
    }
    const p = start()
    this.#pending.add(p)
    p.then(
      () => this.#pending.delete(p),
      (err: unknown) => {
        this.#pending.delete(p)
        this.effects.log(`${what} failed: ${errorMessage(err)}`)
      },
    )
    return p
  }

  /** Waits until no effect is in flight (one may start another), then refuses new ones. */
  async settle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending])
    this.#closed = true
  }
}

function contextFor(task: DriverTask, inFlight: InFlight): AgentContext {
  const { effects } = inFlight
  const agentTask: AgentTask = Object.freeze({
    id: task.id,
    batchId: task.batchId,
    line: task.seq,
    type: task.type,
    payload: task.payload,
    key: task.key,
    provider: task.provider,
    model: task.model,
  })
  return {
    task: agentTask,
    signal: effects.signal,
    chat(request) {
      return inFlight.track('ctx.chat', async () => {
        const answer = await effects.chat(chatRequest(request))
        return {
          text: answer.text,
          message: answer.message,
          usage: { ...answer.usage },
          finishReason: answer.finishReason,
        }
      })
    },
    step<T extends JsonValue>(name: string, fn: () => Promise<T> | T): Promise<T> {
      return inFlight.track(`ctx.step("${String(name)}")`, async () => {
        if (typeof name !== 'string' || name === '') {
          throw new AgentFailure(`ctx.step: name must be a non-empty string, got ${typeof name}`)
        }
        if (typeof fn !== 'function') {
          throw new AgentFailure(`ctx.step("${name}"): fn must be a function, got ${typeof fn}`)
        }
        // Checked before it is journaled: a value replayed later must be the one the code saw.
        return effects.step(name, async () => jsonOrFailure(await fn(), `ctx.step("${name}")`) as T)
      })
    },
    log(message) {
      effects.log(typeof message === 'string' ? message : String(message))
    },
  }
}

/** ctx.chat's argument, checked field by field: a mistake names the field. */
function chatRequest(input: unknown): ChatRequest {
  if (input === null || typeof input !== 'object') {
    throw new AgentFailure(`ctx.chat: expected { messages, model?, provider?, params? }`)
  }
  const r = input as Record<string, unknown>
  if (!Array.isArray(r.messages) || r.messages.length === 0) {
    throw new AgentFailure('ctx.chat: messages must be a non-empty array of {role, content}')
  }
  const messages: ChatMessage[] = r.messages.map((m: unknown, i) => {
    const bad = findNonJson(m, `messages[${i}]`)
    if (bad) throw new AgentFailure(`ctx.chat: ${bad.message}`)
    if (!isChatMessage(m as JsonValue)) {
      throw new AgentFailure(
        `ctx.chat: messages[${i}] must be {role: system|developer|user|assistant|tool, content}`,
      )
    }
    return toChatMessage(m as Parameters<typeof toChatMessage>[0])
  })
  const request: ChatRequest = { messages }
  for (const field of ['model', 'provider'] as const) {
    const value = r[field]
    if (value === undefined) continue
    if (typeof value !== 'string' || value === '') {
      throw new AgentFailure(`ctx.chat: ${field} must be a non-empty string, got ${typeof value}`)
    }
    request[field] = value
  }
  if (r.params !== undefined) {
    const parsed = RequestParams.safeParse(r.params)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const where = issue?.path.length ? `params.${issue.path.join('.')}` : 'params'
      throw new AgentFailure(`ctx.chat: ${where}: ${issue?.message ?? 'invalid'}`)
    }
    request.params = parsed.data
  }
  return request
}

function jsonOrFailure(value: unknown, what: string): JsonValue {
  const bad = findNonJson(value, 'value')
  if (bad) {
    throw new AgentFailure(`${what} is not JSON: ${bad.message}`)
  }
  return value as JsonValue
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name
  return String(err)
}
