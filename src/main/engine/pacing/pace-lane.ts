// A dimension's lane of the send pace (send-pace.ts), and what the pace shows of itself.
import type { BudgetDimension } from './budget-reading'
import type { LaneBook } from './lane-book'
import type { OthersLane } from './others-estimate'

/** A dimension's pace, with what others spend of it (others-estimate.ts). */
export interface Lane extends OthersLane {
  level: number
  at: number
  /** The share of a mean call the lane holds one call at a time (SINGLE_CALL_TOKENS of tokens). */
  held: number
  /** What a lane of tokens took, call by call, to replay it as answers come (lane-book.ts). */
  book: LaneBook | null
}

/** What the pace knows, for the console and tests. */
export interface PaceView {
  /** The burst admissions may take: ms of the rate (0: one call at a time). */
  burstMs: number
  /** Per dimension, the rate that is ours per minute. */
  perMinute: Partial<Record<BudgetDimension, number>>
  /** Learned from refusals, no budget announced (floor-pace.ts). */
  learned?: boolean
}
