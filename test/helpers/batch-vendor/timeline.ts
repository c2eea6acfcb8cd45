// The life of one remote batch on the double's clock, shared by both vendors' doubles: lines
// finish one by one in a shuffled order while it runs; at the 24-hour window it expires with what
// finished kept; a cancel keeps what finished before it. Everything is a function of the clock's
// time, read when asked: a test moves the clock and the next poll sees the new state.
import type { Clock } from '../../../src/main/engine/core/types'
import { answerFor, erroredLine, shuffled, type DoubleAnswer } from './answers'

export interface TimelineOptions {
  /** Time spent validating before lines start to run. @default 1_000 */
  validateMs?: number
  /** Time from the start of the run to the last line finished. @default 60_000 */
  processMs?: number
  /** Time from the last line to the batch's end (OpenAI's finalizing). @default 1_000 */
  finalizeMs?: number
  /** Time a cancel takes to take effect (cancelling / canceling). @default 1_000 */
  cancelMs?: number
  /** The completion window; unfinished lines expire at its end. @default 24 h */
  windowMs?: number
  /** Share of lines the vendor answers with an error. @default 0.03 */
  errorShare?: number
  /** Seeds the order lines finish in and which ones error. @default 1 */
  seed?: number
}

export interface TimelineLine {
  customId: string
  body: Record<string, unknown>
  /** When it finishes, if nothing stops the batch first. */
  finishAt: number
  errored: boolean
  answer: DoubleAnswer
}

export type LineEnd = 'succeeded' | 'errored' | 'expired' | 'canceled' | 'pending'

export type Phase = 'validating' | 'in_progress' | 'finalizing' | 'cancelling' | 'ended'

export interface Snapshot {
  phase: Phase
  /** How it ended (when phase is 'ended'). */
  end: 'completed' | 'expired' | 'cancelled' | null
  endedAt: number | null
  finished: number
  errored: number
  succeeded: number
  /** Lines still to run (0 once ended). */
  unfinished: number
}

const HOUR = 3_600_000

export class Timeline {
  readonly createdAt: number
  readonly lines: TimelineLine[]
  readonly #o: Required<TimelineOptions>
  readonly #clock: Clock
  cancelAt: number | null = null

  constructor(
    clock: Clock,
    requests: { customId: string; body: Record<string, unknown> }[],
    options: TimelineOptions = {},
  ) {
    this.#clock = clock
    this.#o = {
      validateMs: 1_000,
      processMs: 60_000,
      finalizeMs: 1_000,
      cancelMs: 1_000,
      windowMs: 24 * HOUR,
      errorShare: 0.03,
      seed: 1,
      ...options,
    }
    this.createdAt = clock.now()
    const start = this.createdAt + this.#o.validateMs
    const order = shuffled(requests, this.#o.seed)
    const n = order.length
    this.lines = order.map((r, rank) => ({
      customId: r.customId,
      body: r.body,
      finishAt: start + Math.ceil((this.#o.processMs * (rank + 1)) / n),
      errored: erroredLine(r.customId, this.#o.errorShare, this.#o.seed),
      answer: answerFor(r.body),
    }))
  }

  get expiresAt(): number {
    return this.createdAt + this.#o.windowMs
  }

  /** When a line's outcome is fixed: its end, or the moment the batch was stopped. */
  #stoppedAt(): { at: number; why: 'expired' | 'canceled' } | null {
    const cancel = this.cancelAt
    const expiry = this.expiresAt
    if (cancel !== null && cancel < expiry) return { at: cancel, why: 'canceled' }
    return { at: expiry, why: 'expired' }
  }

  /** How a line stands at the clock's time. */
  lineEnd(line: TimelineLine, now = this.#clock.now()): LineEnd {
    const stop = this.#stoppedAt()
    if (line.finishAt <= now && (stop === null || line.finishAt <= stop.at)) {
      return line.errored ? 'errored' : 'succeeded'
    }
    if (stop !== null && now >= stop.at) return stop.why === 'canceled' ? 'canceled' : 'expired'
    return 'pending'
  }

  snapshot(now = this.#clock.now()): Snapshot {
    const lastFinish = this.lines.reduce((m, l) => Math.max(m, l.finishAt), this.createdAt)
    const completesAt = lastFinish + this.#o.finalizeMs
    let finished = 0
    let errored = 0
    for (const l of this.lines) {
      const end = this.lineEnd(l, now)
      if (end === 'succeeded' || end === 'errored') finished++
      if (end === 'errored') errored++
    }
    const base = { finished, errored, succeeded: finished - errored }
    const unfinished = this.lines.length - finished
    if (this.cancelAt !== null && this.cancelAt < completesAt && this.cancelAt < this.expiresAt) {
      const endedAt = this.cancelAt + this.#o.cancelMs
      if (now >= endedAt)
        return { ...base, phase: 'ended', end: 'cancelled', endedAt, unfinished: 0 }
      return { ...base, phase: 'cancelling', end: null, endedAt: null, unfinished }
    }
    if (completesAt <= this.expiresAt && now >= completesAt) {
      return { ...base, phase: 'ended', end: 'completed', endedAt: completesAt, unfinished: 0 }
    }
    if (now >= this.expiresAt) {
      return { ...base, phase: 'ended', end: 'expired', endedAt: this.expiresAt, unfinished: 0 }
    }
    if (now < this.createdAt + this.#o.validateMs) {
      return { ...base, phase: 'validating', end: null, endedAt: null, unfinished }
    }
    const phase = now >= lastFinish ? 'finalizing' : 'in_progress'
    return { ...base, phase, end: null, endedAt: null, unfinished }
  }

  /** Asks for a cancel now; false once the batch has ended (nothing to cancel). */
  cancel(now = this.#clock.now()): boolean {
    if (this.snapshot(now).phase === 'ended') return false
    this.cancelAt ??= now
    return true
  }
}
