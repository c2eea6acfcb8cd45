// A hidden concurrency capacity: a call beyond it is refused with a 429 and a retry-after, as a
// provider's overloaded endpoint does. The capacity (and the per-minute budget, budget.ts) can
// change after a number of accepted calls, or after a time, so a test sees a client follow a limit
// that moves. Time counts from the vendor's first request, not its start: a `pacer` process takes
// a second or more to start on a loaded machine, which would eat into a first phase by time.
import type { ServerResponse } from 'node:http'
import { json } from './server'

/**
 * A value that holds from the `after`-th accepted call on, or from `afterMs` after the vendor's
 * first request. One limit's phases are all of one kind, in order.
 */
export type Phase = { after: number; value: number } | { afterMs: number; value: number }

/** One value throughout, or values by phase. */
export type Limit = number | Phase[]

/** Where the vendor is: what phases start after. */
export interface Progress {
  accepted: number
  /** Ms since the first request arrived (0 before it). */
  sinceFirstMs: number
}

/** Where a phase starts, as [kind, offset]: calls accepted, or ms since the first request. */
const startOf = (p: Phase): [string, number] =>
  'afterMs' in p ? ['ms', p.afterMs] : ['calls', p.after]

const reached = (p: Phase, at: Progress) =>
  'afterMs' in p ? at.sinceFirstMs >= p.afterMs : at.accepted >= p.after

export function valueAt(limit: Limit | undefined, at: Progress): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY
  if (typeof limit === 'number') return limit
  let value = limit[0]!.value
  for (const p of limit) if (reached(p, at)) value = p.value
  return value
}

/** Which phase the vendor is in: how many distinct phase starts it has passed. */
export function phaseIndex(limits: (Limit | undefined)[], at: Progress): number {
  const all = limits.flatMap((l) => (Array.isArray(l) ? l : []))
  const passed = all.filter((p) => startOf(p)[1] > 0 && reached(p, at))
  return new Set(passed.map((p) => startOf(p).join(':'))).size
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
  /** Whether a call arriving now, with the vendor `at` this point, finds the capacity full. */
  full(at: Progress): boolean
  /** The retry-after (ms) for a call refused for capacity at `now`. */
  retryAfter(now: number): number
  /** Holds capacity for `res` until release() or its connection closes; `end`: when it should. */
  hold(res: ServerResponse, end?: number): () => void
  /** Calls holding capacity, at each change: what a test reads the time to regain from. */
  timeline: Held[]
}

export interface Held {
  /** Date.now() of the change. */
  at: number
  held: number
}

export function capacityGate(options: CapacityOptions): CapacityGate {
  let held = 0
  const ends: number[] = []
  const timeline: Held[] = []
  const note = () => timeline.push({ at: Date.now(), held })
  return {
    timeline,
    full: (at) => held >= valueAt(options.capacity, at),
    retryAfter: (now) => {
      if (options.retryAfterMs !== undefined) return options.retryAfterMs
      const earliest = Math.min(...ends)
      return Number.isFinite(earliest) ? earliest - now : 50
    },
    hold: (res, end) => {
      held++
      note()
      if (end !== undefined) ends.push(end)
      let released = false
      const release = () => {
        if (released) return
        released = true
        held--
        note()
        if (end !== undefined) ends.splice(ends.indexOf(end), 1)
      }
      // Free once the answer is sent, as a server frees its slot (or when the client went away).
      res.once('finish', release)
      res.once('close', release)
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
