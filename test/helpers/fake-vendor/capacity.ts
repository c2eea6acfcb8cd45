// A hidden concurrency capacity: a call beyond it is refused with a 429 and a retry-after, as a
// provider's overloaded endpoint does. The capacity (and the per-minute budget, budget.ts) can
// change after a number of accepted calls, so a test sees a client follow a limit that moves.
import type { ServerResponse } from 'node:http'
import { json } from './server'

/** A value that holds from the `after`-th accepted call on. */
export interface Phase {
  after: number
  value: number
}

/** One value throughout, or values by phase. */
export type Limit = number | Phase[]

export function valueAt(limit: Limit | undefined, accepted: number): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY
  if (typeof limit === 'number') return limit
  let value = limit[0]!.value
  for (const p of limit) if (accepted >= p.after) value = p.value
  return value
}

/** Which phase the vendor is in: how many distinct phase starts the accepted calls have passed. */
export function phaseIndex(limits: (Limit | undefined)[], accepted: number): number {
  const all = limits.flatMap((l) => (Array.isArray(l) ? l : []))
  return new Set(all.filter((p) => p.after > 0 && accepted >= p.after).map((p) => p.after)).size
}

export interface PhaseStats {
  accepted: number
  refused: number
  /** The most requests open at once (accepted in flight, refused, and the one arriving). */
  maxOpen: number
}

export interface CapacityOptions {
  /** Calls held at once; beyond it a 429. @default unlimited */
  capacity?: Limit
  /** How long a refusal takes: while it is being refused a call holds capacity too. @default 0 */
  refuseAfterMs?: number
  /** The retry-after a refusal for capacity names. @default until the earliest call held ends */
  retryAfterMs?: number
}

export interface CapacityGate {
  /** Whether a call arriving now, after `accepted` accepted calls, finds the capacity full. */
  full(accepted: number): boolean
  /** The retry-after (ms) for a call refused for capacity at `now`. */
  retryAfter(now: number): number
  /** Holds capacity for `res` until release() or its connection closes; `end`: when it should. */
  hold(res: ServerResponse, end?: number): () => void
}

export function capacityGate(options: CapacityOptions): CapacityGate {
  let held = 0
  const ends: number[] = []
  return {
    full: (accepted) => held >= valueAt(options.capacity, accepted),
    retryAfter: (now) => {
      if (options.retryAfterMs !== undefined) return options.retryAfterMs
      const earliest = Math.min(...ends)
      return Number.isFinite(earliest) ? earliest - now : 50
    },
    hold: (res, end) => {
      held++
      if (end !== undefined) ends.push(end)
      let released = false
      const release = () => {
        if (released) return
        released = true
        held--
        if (end !== undefined) ends.splice(ends.indexOf(end), 1)
      }
      res.on('close', release)
      return release
    },
  }
}

/** A 429 as OpenAI sends it for a rate limit: retry-after in ms and in whole seconds. */
export function rateLimited(res: ServerResponse, waitMs: number, headers: Record<string, string>) {
  const wait = Math.max(1, Math.ceil(waitMs))
  json(
    res,
    429,
    {
      error: {
        message: 'Rate limit reached for requests. Please try again later.',
        type: 'requests',
        code: 'rate_limit_exceeded',
      },
    },
    { ...headers, 'retry-after-ms': String(wait), 'retry-after': String(Math.ceil(wait / 1000)) },
  )
}
