import { isLosslessNumber, type LosslessNumber } from 'lossless-json'
import { z } from 'zod'

const jsonObject = z.record(z.string(), z.unknown())

/**
 * Checks a number the way `check` does, also when it came as a LosslessNumber: a number a double
 * cannot hold exactly (0.70000000000000001, 1e-400) is read as its digits (shared/exact-json.ts).
 * Such a number is checked by its nearest double and kept as written.
 */
function exactNumber(check: z.ZodNumber) {
  return z.custom<number | LosslessNumber>().superRefine((v, ctx) => {
    checkNearest(check, v, ctx)
  })
}

function checkNearest(check: z.ZodNumber, v: unknown, ctx: z.RefinementCtx): void {
  const checked = check.safeParse(isLosslessNumber(v) ? Number(v.value) : v)
  if (checked.success) return
  for (const issue of checked.error.issues) ctx.addIssue({ code: 'custom', message: issue.message })
}

/**
 * An integer checked by `check`. One given as a LosslessNumber is not a small integer written
 * plainly (1.0000000000000001, 9007199254740993): refused, never rounded into range.
 */
function exactInteger(check: z.ZodNumber) {
  return z
    .custom<number>()
    .superRefine((v, ctx) => {
      if (isLosslessNumber(v) && !/^-?\d+$/.test(v.value)) {
        ctx.addIssue({ code: 'custom', message: `must be an integer, got ${v.value}` })
        return
      }
      checkNearest(check, v, ctx)
    })
    .transform((v) => (isLosslessNumber(v) ? Number((v as LosslessNumber).value) : v))
}

/**
 * What a request may set besides its messages, per task (a batch line's `params`) or per run
 * (`pacer run --max-tokens`, `--temperature`, `--params`). Part of the task's identity: the same
 * payload with other params is another task.
 */
export const RequestParams = z.strictObject({
  max_tokens: exactInteger(z.number().int('must be an integer').min(1).max(10_000_000)).optional(),
  temperature: exactNumber(z.number().min(0).max(2)).optional(),
  top_p: exactNumber(z.number().min(0).max(1)).optional(),
  stop: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(16)], {
      error: 'must be a string or an array of strings',
    })
    .optional(),
  // OpenAI's: {type: 'text' | 'json_object'} or {type: 'json_schema', json_schema: {...}}.
  response_format: z
    .looseObject({ type: z.enum(['text', 'json_object', 'json_schema']) })
    .refine((f) => f.type !== 'json_schema' || jsonObject.safeParse(f['json_schema']).success, {
      message: 'json_schema: required (an object) when type is "json_schema"',
    })
    .optional(),
  seed: exactInteger(z.number().int('must be an integer')).optional(),
})
export type RequestParamsView = z.infer<typeof RequestParams>

/** One task as queued by the operator or read from a batch file. */
export const TaskInput = z.strictObject({
  type: z
    .string({
      error: (issue) => (issue.input === undefined ? 'required' : 'must be a string'),
    })
    .trim()
    .min(1, 'must be a non-empty string')
    .max(200),
  // Any JSON; the engine's canonical JSON check names the exact bad path (payload.items[3].price).
  payload: z.unknown().refine((v) => v !== undefined, 'required'),
  steps: exactInteger(z.number().int().min(1).max(1000)).optional(),
  key: z.string().min(1).max(500).optional(),
  model: z.string().min(1).max(200).optional(),
  provider: z.string().min(1).max(100).optional(),
  params: RequestParams.optional(),
})
export type TaskInput = z.infer<typeof TaskInput>

export const TaskStatus = z.enum([
  'queued',
  'running',
  'succeeded',
  'reused',
  'failed',
  'cancelled',
])
export type TaskStatus = z.infer<typeof TaskStatus>

export const BatchState = z.enum(['running', 'paused', 'interrupted', 'cancelled', 'done'])
export type BatchState = z.infer<typeof BatchState>

export const BatchFormat = z.enum(['jsonl', 'csv'])
export type BatchFormat = z.infer<typeof BatchFormat>

/** A problem with one line of a batch file (1-based line numbers, as an editor shows them). */
export interface LineError {
  line: number
  field?: string
  message: string
}

export interface TaskRow {
  id: number
  batchId: string
  seq: number
  type: string
  fp: string
  steps: number
  provider: string
  model: string
  status: TaskStatus
  attempts: number
  error: string | null
  createdAt: number
  startedAt: number | null
  finishedAt: number | null
}

export type StatusCounts = Record<TaskStatus, number>

export interface BatchSummary {
  id: string
  name: string
  source: string | null
  state: BatchState
  audit: boolean
  createdAt: number
  updatedAt: number
  total: number
  counts: StatusCounts
  /**
   * Why its run stopped with tasks left queued: a setup failure (key, model, credit, server) named
   * with what to do. Absent once it runs again.
   */
  stopReason?: string
  /**
   * The `pacer run` process driving it (absent for console batches): its host and pid, and
   * whether it still runs. A running batch whose driver is gone is listed as interrupted, for the
   * next run of its file (or the console) to resume.
   */
  owner?: BatchOwner
  /** Its calls go through the vendors' batch APIs (`pacer run --batch-api`, the import's choice). */
  batchApi?: true
  /** The provider batches that carried its calls, oldest first (absent: none). */
  providerBatches?: ProviderBatchSummary[]
}

/**
 * A submission to a vendor's batch API (OpenAI's Batch API, Anthropic's Message Batches) as
 * journaled: its remote id once accepted, the vendor's last word and counts.
 */
export interface ProviderBatchSummary {
  /** Pacer's number for it (`pacer provider-batches cancel N`). */
  id: number
  vendor: 'openai' | 'anthropic'
  model: string
  /** The vendor's batch id; null while being submitted (or when it was refused). */
  remoteId: string | null
  /**
   * The vendor's status: OpenAI validating, in_progress, finalizing, completed, failed, expired,
   * cancelling, cancelled; Anthropic in_progress, canceling, ended; Pacer's own 'submitting',
   * 'refused', 'abandoned'.
   */
  status: string
  /** Its results are in (delivered to the run polling it). */
  ended: boolean
  requests: number
  /** The vendor's request counts as last polled (Anthropic's stay 0 until it ends). */
  counts: Record<string, number> | null
  createdAt: number
  endedAt: number | null
  error: string | null
}

export interface BatchOwner {
  /** Its worker id: the claims' owner and the ledger's worker too. */
  worker: string
  host: string | null
  pid: number | null
  alive: boolean
  /** Why it is known to be gone (its pid is not running, no heartbeat); absent while alive. */
  gone?: string
}
