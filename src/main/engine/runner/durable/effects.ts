// The effects of one task execution, numbered in the order the execution makes them: provider
// calls (the built-in multi-step loop's and an agent's ctx.chat) and an agent's ctx.step side
// effects. This is the contract between the call journal (journal.ts: records each effect with its
// ledger row, replays it when the execution runs again) and whatever drives the execution (the
// built-in loop in execute.ts, a user's agent module in agents/).
import type { ChatMessage, FinishReason, JsonValue, RequestParams, Usage } from '../../core/types'

/** One provider call an execution asks for. */
export interface ChatRequest {
  messages: ChatMessage[]
  /** Another model than the task's: the call goes through that model's partition. */
  model?: string
  /** Another provider than the task's (a configured provider id). */
  provider?: string
  params?: RequestParams
}

/** A call's answer, live or replayed from the journal. */
export interface ChatAnswer {
  text: string
  /** The provider's message as returned (tool calls included), when it gave one. */
  message: JsonValue | null
  usage: Usage
  finishReason: FinishReason | null
  costMicros: number | null
  /** True when the journal answered: no request was sent, the ledger row is `replayed`. */
  replayed: boolean
}

/**
 * Thrown by an effect when the execution cannot go on in this process: its claim was lost to a
 * takeover (its result is not ours to save) or the call failed for good. The driver lets it
 * propagate; the runner turns it into the task's end.
 */
export class EffectStop extends Error {
  constructor(
    readonly why: 'lost' | 'failed',
    message: string,
    /** For 'failed': the HTTP status, and whether the same request fails the same way. */
    readonly status: number | null = null,
    readonly deterministic = false,
    /** For 'failed': kept as the claim's result, so a rerun does not pay for it again. */
    readonly keep = false,
  ) {
    super(message)
  }
}

/** What an execution may do. Each call of chat/step takes the next index (1, 2, ...). */
export interface Effects {
  /** A provider call: claimed, paced, ledgered and journaled; replayed when the journal has it. */
  chat(request: ChatRequest): Promise<ChatAnswer>
  /**
   * Any other side effect (a tool call, an HTTP fetch): `fn` runs once; its JSON value is
   * journaled and returned again on replay without running `fn`.
   */
  step<T extends JsonValue>(name: string, fn: () => Promise<T> | T): Promise<T>
  /** A line for the task's log, shown with the task in the console. */
  log(message: string): void
  /** Aborted on cancel, pause, Ctrl-C or a lost claim. */
  readonly signal: AbortSignal
}

/** How a driver's execution ended: the task's answer. */
export interface DriverResult {
  /** The answer as text (an agent's JSON value is stored as `value`, and as JSON text here). */
  text: string
  message?: JsonValue
  finishReason?: FinishReason
  /** An agent's JSON result. */
  value?: JsonValue
}

/**
 * What runs one execution of a task through its effects: the built-in multi-step loop, or a
 * handler of a user's agent module. The runner picks one per task (RunnerOptions.driverFor).
 */
export type Driver = (task: DriverTask, effects: Effects) => Promise<DriverResult>

/** The task as a driver sees it (the queue's row, parsed). */
export interface DriverTask {
  id: number
  batchId: string
  /** Line number for a file. */
  seq: number
  type: string
  payload: JsonValue
  key: string | null
  steps: number
  provider: string
  model: string
  params: RequestParams | null
}
