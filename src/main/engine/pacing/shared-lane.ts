// One pace for every worker of a partition, kept in the shared budget. Once refusals narrowed the
// announced pace to one call at a time, each process paced its own share of the rate on its own
// clock: their calls met in the enforced window whenever their phases did (three calls at once
// into a window of two or three), each such refusal cut the shared share again, and on the live
// leg's #100004 three processes ended at 0.45 of the rate where one process held 0.8 (four cuts
// against one). The lane is the same bucket as a process's own (send-pace.ts): refilled at the
// rate that is ours, holding one call, every worker's calls taken from it in the store's atomic
// step, so the partition's calls go one at a time at the partition's rate, whichever worker
// sends them, and a worker with nothing to send leaves its share to the others.
import type { BudgetDimension } from './budget-reading'

/** The lane's pace for one dimension, as the asking worker knows it. */
export interface LanePace {
  /** The partition's rate per ms (every worker's share together). */
  ratePerMs: number
  /** What the lane holds at most: one call's least burst (send-pace.ts singleCost). */
  capacity: number
  /** The announced rate per ms the asker's `ratePerMs` is a share of (lane-fresh-rate.ts). */
  announced?: number
  /** The window that rate's limit is announced for (ms): the store's limit over it is as fresh. */
  announcedMs?: number
}

/** One dimension's lane, shared. Short keys: this is written on every admission. */
export interface LaneLevel {
  /** The level as of `t`. */
  v: number
  t: number
  /** The partition's rate per ms as the worker that wrote it knew it (absent: written before). */
  r?: number
}

export type SharedLane = Partial<Record<BudgetDimension, LaneLevel>>

/** The lane's pace per dimension paced. */
export type LanePaces = Partial<Record<BudgetDimension, LanePace>>

type Cost = Readonly<Record<BudgetDimension, number>>

/**
 * The lane's rate: the last admitting worker's. A worker whose calls all waited on the lane hears
 * no answer, so its own reading of the announced limit stays where it was: at its stale rate a
 * rise left it behind every call of the worker that heard it (three processes, one sending).
 */
const rateOf = (l: LaneLevel | undefined, p: LanePace) =>
  l?.r !== undefined && l.r > 0 ? l.r : p.ratePerMs

/** A lane's level now: refilled since it was last written, never above what it holds. */
function levelOf(l: LaneLevel | undefined, p: LanePace, now: number): number {
  if (!l) return p.capacity
  return Math.min(p.capacity, l.v + rateOf(l, p) * Math.max(0, now - l.t))
}

/**
 * Ms until a call of this cost fits the lane in every dimension paced; 0 when it may go now. A
 * call larger than the lane holds goes once it is full and leaves a debt, as a process's own.
 */
export function laneWaitMs(lane: SharedLane | undefined, pace: LanePaces, cost: Cost, now: number) {
  let wait = 0
  for (const [dim, p] of Object.entries(pace) as [BudgetDimension, LanePace][]) {
    if (!(p.ratePerMs > 0) || !(cost[dim] > 0)) continue
    const need = Math.min(cost[dim], p.capacity)
    const level = levelOf(lane?.[dim], p, now)
    if (level < need) wait = Math.max(wait, (need - level) / rateOf(lane?.[dim], p))
  }
  return Math.ceil(wait)
}

/** The lane after a call of this cost was admitted. */
export function takeLane(lane: SharedLane | undefined, pace: LanePaces, cost: Cost, now: number) {
  const next: SharedLane = { ...lane }
  for (const [dim, p] of Object.entries(pace) as [BudgetDimension, LanePace][]) {
    if (!(p.ratePerMs > 0)) continue
    next[dim] = { v: levelOf(lane?.[dim], p, now) - cost[dim], t: now, r: p.ratePerMs }
  }
  return next
}
