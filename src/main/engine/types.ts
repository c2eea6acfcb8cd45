/**
 * Shared engine types. Plain Node, no electron. Every time is integer epoch milliseconds;
 * every amount of money is integer micro-dollars (1 USD = 1_000_000).
 */
import type { AimdParamsView, LimitChangeView } from '../../shared/contract'

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

export interface StoredResult {
  /** JSON text of the task's result (what the last step returned plus usage). */
  result: string
  /** 'succeeded' results are reused; 'failed' ones are deterministic failures cached as results. */
  status: 'succeeded' | 'failed'
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

/**
 * The idempotency store. SQLite implements it (claims.ts); a Redis backend for teams on several
 * machines is a later issue, so nothing outside claims.ts may depend on SQL.
 */
export interface ClaimStore {
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
    status: 'succeeded' | 'failed',
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

// ---------------------------------------------------------------- providers

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

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
  /**
   * The conversation is one step of a multi-step task: other steps resend it as their prefix, so
   * a provider with explicit prompt caching (Anthropic) marks its end as a cache breakpoint.
   */
  cacheHistory?: boolean
  signal?: AbortSignal
}

/** What a provider answered, HTTP-like even for the simulated one. */
export interface ProviderResponse {
  status: number
  /** Lower-cased header names. */
  headers: Record<string, string>
  text?: string
  usage?: Usage
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

// ---------------------------------------------------------------- ledger

export type LedgerOutcome =
  'executed' | 'reused' | 'duplicate' | 'throttled' | 'error' | 'abandoned'

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
  /** For 'reused' rows: what the original execution cost (what dedup saved). */
  savedMicros?: number | null
}
