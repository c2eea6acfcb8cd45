/**
 * Shared engine types. Plain Node, no electron. Every time is integer epoch milliseconds;
 * every amount of money is integer micro-dollars (1 USD = 1_000_000).
 */
import type { AimdParamsView, LimitChangeView, RequestParamsView } from '../../../shared/contract'

/** A store answers at once (memory, SQLite) or later (a networked store). */
export type MaybePromise<T> = T | Promise<T>

/** The single source of time for the engine; tests inject a fake. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

// ---------------------------------------------------------------- claims

/** Result of trying to claim a fingerprint. */
export type ClaimAttempt =
  | {
      kind: 'owned'
      epoch: number
      tookOver: boolean
      previousOwner?: string
      previousEpoch?: number
    }
  | { kind: 'completed'; result: StoredResult }
  | { kind: 'busy'; owner: string; epoch: number; leaseUntil: number }

/** How a completed claim ended. */
export type StoredStatus = 'succeeded' | 'failed' | 'truncated'

export interface StoredResult {
  /** JSON text of the task's result (what the last step returned plus usage). */
  result: string
  /**
   * 'succeeded' results are reused; 'failed' ones are deterministic failures cached as results;
   * 'truncated' ones (the output cap cut the answer) only when the operator accepts them.
   */
  status: StoredStatus
  owner: string
  epoch: number
  completedAt: number
  /** What the execution that produced it cost (null: unknown or unpriced): what a reuse saves. */
  costMicros?: number | null
  /** The stored result's id, when the store shares the queue's database: tasks point at it. */
  ref?: number
}

export type WaitOutcome =
  | { kind: 'completed'; result: StoredResult }
  /** The lease expired and this waiter took the claim over by compare-and-set. */
  | { kind: 'owned'; epoch: number; tookOver: true; previousOwner: string; previousEpoch: number }
  /** The claim was released (transient failure): the caller may claim again. */
  | { kind: 'released' }
  | { kind: 'wait_timeout' }

/** Options of a claim that may have to wait (a networked store out of reach, or re-seeding). */
export interface ClaimOptions {
  /** Aborts the wait: the claim rejects with the signal's reason. */
  signal?: AbortSignal
}

/**
 * The idempotency store's contract, whichever backend keeps it: SQLite answers at once
 * (claims.ts), Redis later (claims-redis.ts). One test suite runs against both
 * (test/unit/engine/claims-suite.ts); nothing outside the stores depends on SQL or Redis.
 */
export interface AsyncClaimStore {
  claim(fp: string, owner: string, leaseMs: number, opts?: ClaimOptions): MaybePromise<ClaimAttempt>
  renew(fp: string, epoch: number, leaseMs: number): MaybePromise<boolean>
  takeOver(fp: string, owner: string, expectedEpoch: number, leaseMs: number): MaybePromise<boolean>
  complete(
    fp: string,
    epoch: number,
    result: string,
    status: StoredStatus,
    costMicros?: number | null,
  ): MaybePromise<boolean>
  release(fp: string, epoch: number): MaybePromise<boolean>
  forgetFailure(fp: string): MaybePromise<boolean>
  wait(
    fp: string,
    owner: string,
    opts: { timeoutMs: number; leaseMs: number; signal?: AbortSignal },
  ): Promise<WaitOutcome>
  getResult(fp: string): MaybePromise<StoredResult | undefined>
  /** How long a completed result is reused (0 = forever); changeable while running. */
  resultTtlMs: number
  /** Whether a 'truncated' result is reused; changeable while running. */
  acceptTruncated: boolean
}

/**
 * The local idempotency store, synchronous: the runner's SQLite transactions (group commit, the
 * journal closed in the completion's transaction, a full disk's held writes) depend on it.
 */
export interface ClaimStore extends Omit<AsyncClaimStore, 'resultTtlMs' | 'acceptTruncated'> {
  /** Atomic insert-or-ignore claim; on conflict reports the completed result or the busy owner. */
  claim(fp: string, owner: string, leaseMs: number): ClaimAttempt
  /** Extends the lease while this epoch still owns the claim. False = lost it (fenced out). */
  renew(fp: string, epoch: number, leaseMs: number): boolean
  /** Compare-and-set takeover, only after the lease expired. */
  takeOver(fp: string, owner: string, expectedEpoch: number, leaseMs: number): boolean
  /** Fenced completion. False = a newer epoch owns the claim: nothing was written. */
  complete(
    fp: string,
    epoch: number,
    result: string,
    status: StoredStatus,
    costMicros?: number | null,
  ): boolean
  /** Gives up a running claim (transient failure, shutdown) so another worker may claim it. */
  release(fp: string, epoch: number): boolean
  /** Forgets a cached failure (the operator retries after fixing the cause): the next claim runs. */
  forgetFailure(fp: string): boolean
  /** Waits for the claim to complete, be released, or expire (then takes it over by CAS). */
  wait(
    fp: string,
    owner: string,
    opts: { timeoutMs: number; leaseMs: number; signal?: AbortSignal },
  ): Promise<WaitOutcome>
  /** The stored result if completed and not past retention. */
  getResult(fp: string): StoredResult | undefined
  /** The id of the result a completed claim stored (StoredResult.ref), without reading it. */
  resultRef?(fp: string): number | undefined
}

/**
 * A team's claim store, shared by every machine (claims-redis.ts): answers later, waits while the
 * server is out of reach, and renews a whole round of claims at once.
 */
export interface TeamClaimStore extends AsyncClaimStore {
  claim(fp: string, owner: string, leaseMs: number, opts?: ClaimOptions): Promise<ClaimAttempt>
  /** Fenced completion, retried while the server is out of reach (the answer is paid). */
  complete(
    fp: string,
    epoch: number,
    result: string,
    status: StoredStatus,
    costMicros?: number | null,
    opts?: ClaimOptions,
  ): Promise<boolean>
  release(fp: string, epoch: number): Promise<boolean>
  /** One renewal per claim, in one round trip; null when the server is out of reach now. */
  renewMany(
    claims: readonly { fp: string; epoch: number }[],
    leaseMs: number,
  ): Promise<boolean[] | null>
}

// ---------------------------------------------------------------- providers

/** Every role of OpenAI's Chat Completions API; the Anthropic adapter maps them to its own. */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool'

export interface ChatMessage {
  role: ChatRole
  /**
   * Text, or content parts as the task gave them ({type: 'text', text}, {type: 'image_url', ...}),
   * or null (an assistant turn that only called tools).
   */
  content: string | JsonValue[] | null
  /** The message's other fields as given (tool_call_id, tool_calls, name): passed through. */
  fields?: { [key: string]: JsonValue }
}

/**
 * A task's request parameters (a batch line's `params`, over the run's): the contract's schema.
 * `max_tokens` is sent as `max_completion_tokens` where OpenAI requires it.
 */
export type RequestParams = RequestParamsView

export interface Usage {
  /** All input tokens, cached ones included (normalized: OpenAI style). */
  inputTokens: number
  /** The subset of inputTokens read from a prompt cache. */
  cachedInputTokens: number
  /** Input tokens written to a prompt cache (Anthropic cache_creation_input_tokens). */
  cacheWriteTokens: number
  outputTokens: number
}

export interface ProviderRequest {
  model: string
  messages: ChatMessage[]
  maxOutputTokens?: number
  /** The rest of the task's parameters (temperature, top_p, stop, response_format, seed). */
  params?: RequestParams
  /**
   * The conversation is one step of a multi-step task: other steps resend it as their prefix, so
   * a provider with explicit prompt caching (Anthropic) marks its end as a cache breakpoint.
   */
  cacheHistory?: boolean
  signal?: AbortSignal
}

/**
 * Why the model stopped, normalized across providers: `stop` (a natural end or a stop sequence),
 * `length` (the output cap cut the answer: OpenAI `length`, Anthropic `max_tokens`), `tool_calls`,
 * `content_filter`; anything else is the provider's own word, kept as it came.
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | (string & {})

/** What a provider answered, HTTP-like even for the simulated one. */
export interface ProviderResponse {
  status: number
  /** Lower-cased header names. */
  headers: Record<string, string>
  text?: string
  usage?: Usage
  /**
   * A 2xx answer whose body could not be read (not JSON, cut short, no choices): the call may have
   * been billed, so the runner ledgers it with estimated usage. Its status is the one received;
   * `status` above is then 502, a transient failure. `text` is whatever answer text was readable.
   * `oversize`: the body was larger than Pacer reads (http.ts MAX_ANSWER_BYTES), `bytes` of it
   * received or announced: the output is estimated from them, and the failure is not retried
   * (the same request would be billed for the same answer again).
   */
  unreadable?: { status: number; text: string; oversize?: { bytes: number } }
  /** Why the answer ended (2xx only); undefined when the provider did not say. */
  finishReason?: FinishReason
  /**
   * The provider's own answer as it came, for those who want more than the text: OpenAI's
   * `choices[0].message`, Anthropic's `content` blocks (2xx only).
   */
  message?: JsonValue
  /** Provider's error message for non-2xx answers. */
  error?: string
  /**
   * The error body's machine-readable kinds, for the classifier: OpenAI `error.code` and
   * `error.type` (`insufficient_quota`), Anthropic `error.type` (`billing_error`).
   */
  errorCodes?: string[]
}

export interface Provider {
  readonly id: string
  call(request: ProviderRequest): Promise<ProviderResponse>
}

// ---------------------------------------------------------------- scheduler

export type Outcome = 'ok' | 'near_limit' | 'throttled' | 'overloaded' | 'timeout' | 'error'

// The params and the limit changes are the contract's views: one definition, in src/shared.
export type AimdParams = AimdParamsView
export type LimitChange = LimitChangeView

export const SEED_AIMD: Readonly<AimdParams> = Object.freeze({
  min: 1,
  max: 12,
  initial: 2,
  increase: 0.5,
  decrease: 0.5,
  cooldownMs: 8000,
  nearLimitRemaining: 5,
})

/**
 * Pacer's defaults: the seed's, with a ceiling of 64 instead of 12. The adaptive controller finds
 * a provider's capacity from its answers, so the ceiling is only a safety stop; at 12, a provider
 * with 20 s calls could never be sent more than 36 calls a minute, and a local server with 32
 * slots never be filled.
 */
export const PACER_AIMD: Readonly<AimdParams> = Object.freeze({ ...SEED_AIMD, max: 64 })

// ---------------------------------------------------------------- ledger

export type LedgerOutcome =
  'executed' | 'reused' | 'duplicate' | 'throttled' | 'error' | 'abandoned' | 'timeout' | 'replayed'

export interface LedgerEventInput {
  ts: number
  taskId: number | null
  batchId: string | null
  fp: string
  /** The fingerprint's row id, when the caller has it (the runner's task): saves a lookup. */
  fpId?: number
  worker: string
  taskType: string
  provider: string
  model: string
  step: number
  usage: Usage
  outcome: LedgerOutcome
  latencyMs: number | null
  status: number | null
  epoch: number | null
  /** For 'reused' rows: what the original execution cost (what dedup saved); 'replayed': the call's. */
  savedMicros?: number | null
  /** Why a row is what it is, when its outcome alone does not say (a duplicate's 'answer lost'). */
  reason?: string | null
  /** The usage is Pacer's estimate: the provider reported none (or its answer was unreadable). */
  estimated?: boolean
  /** 'batch': answered through the provider's batch API, priced at its batch rate. */
  tier?: 'batch'
}
