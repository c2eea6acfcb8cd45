// A requests-per-minute budget, refilled continuously (as Anthropic refills its buckets) and
// announced in OpenAI's x-ratelimit-* headers on every answer and refusal. Its limit can change by
// phase (capacity.ts), and it can start part used, as when someone else spent from it.
import { valueAt, type Limit, type Progress } from './capacity'

export interface BudgetOptions {
  /** Requests per minute. @default none */
  rpm?: Limit
  /** What the bucket holds at start. @default the first limit */
  initialRemaining?: number
}

export interface Budget {
  /** How long until a call may be made (ms); undefined when one may be made now. */
  wait(now: number, at: Progress): number | undefined
  /** Spends one request. */
  take(): void
  headers(now: number, at: Progress): Record<string, string>
}

export function rpmBudget(options: BudgetOptions): Budget | undefined {
  const { rpm } = options
  if (rpm === undefined) return undefined
  const bucket = {
    level: options.initialRemaining ?? valueAt(rpm, { accepted: 0, sinceFirstMs: 0 }),
    at: Date.now(),
  }
  const refill = (now: number, at: Progress) => {
    const limit = valueAt(rpm, at)
    const perMs = limit / 60_000
    bucket.level = Math.min(limit, bucket.level + perMs * (now - bucket.at))
    bucket.at = now
    return { limit, perMs }
  }
  return {
    wait: (now, at) => {
      const { perMs } = refill(now, at)
      return bucket.level < 1 ? (1 - bucket.level) / perMs : undefined
    },
    take: () => {
      bucket.level -= 1
    },
    headers: (now, at) => {
      const { limit, perMs } = refill(now, at)
      const level = Math.max(0, bucket.level)
      return {
        'x-ratelimit-limit-requests': String(limit),
        'x-ratelimit-remaining-requests': String(Math.floor(level)),
        'x-ratelimit-reset-requests': `${Math.ceil((limit - level) / perMs)}ms`,
      }
    },
  }
}
