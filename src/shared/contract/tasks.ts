import { z } from 'zod'

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
  steps: z.number().int().min(1).max(1000).optional(),
  key: z.string().min(1).max(500).optional(),
  model: z.string().min(1).max(200).optional(),
  provider: z.string().min(1).max(100).optional(),
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
}
