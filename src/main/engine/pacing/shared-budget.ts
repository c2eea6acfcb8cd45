// The header-announced rate budget as every worker of a partition shares it: the provider's
// buckets as the latest answer announced them, and what every worker admitted against them since.
// The same model as the per-process RateBudget (rate-budget.ts: both vendors refill continuously
// up to the limit), kept in the store so that processes on one database, or machines on one
// Redis, spend the announced remainder once between them instead of once each. Pure: the memory
// and SQLite stores run these functions inside their atomic step; Redis runs the same rules in Lua
// (redis-budget.ts), and the same tests hold for all three (store-suite.ts).
import type { BudgetDimension } from './budget-reading'
import { BUDGET_DIMENSIONS } from './budget-reading'
import type { LanePaces, SharedLane } from './shared-lane'
import { laneWaitMs, takeLane } from './shared-lane'
import { freshLanePaces } from './lane-fresh-rate'

/**
 * What one call costs per dimension (a request; its estimated tokens). `lane`: the call goes by
 * the partition's one pace, shared by every worker (shared-lane.ts), at this pace.
 */
export type BudgetCost = Record<BudgetDimension, number> & {
  lane?: LanePaces
}

/** One announced bucket, shared. Short keys: this is written on every admission. */
export interface SharedBucket {
  /** The announced limit. */
  l: number
  /** Refill per ms. */
  p: number
  /** What the provider would accept, as of `t`. */
  v: number
  t: number
  /** The admission whose answer it was last read from: a newer reading is from a later one. */
  q: number
}

/** A partition's shared announced budget. */
export interface SharedBudget {
  /** Admissions counted (the sequence of the latest). */
  s: number
  /** Cumulative cost admitted, per dimension: what was spent after a reading is the difference. */
  c: Partial<BudgetCost>
  d: Partial<Record<BudgetDimension, SharedBucket>>
  /** The partition's one pace, while its workers send one call at a time (shared-lane.ts). */
  g?: SharedLane
}

/** What an admission against the shared budget hands the call: settle it with its answer. */
export interface BudgetTicket {
  seq: number
  /** Cumulative cost admitted up to and including this call. */
  spent: Partial<BudgetCost>
}

/** One dimension of an answer's reading, as the store applies it. */
export interface SharedReading {
  limit: number
  ratePerMs: number
  /** What was left when the provider counted the call, refilled up to the answer's arrival. */
  refilled: number
}

/** A finished call's account, written with the release of its slot. */
export interface BudgetSettle {
  ticket: BudgetTicket
  /** The answer's budget headers (newer than the shared reading: it replaces it). */
  reading?: Partial<Record<BudgetDimension, SharedReading>>
  /** Real cost minus what was charged (a refusal gives its cost back), where no reading covers it. */
  correction?: Partial<BudgetCost>
}

export const EMPTY_BUDGET: SharedBudget = Object.freeze({ s: 0, c: {}, d: {} }) as SharedBudget

/** A bucket's level now: refilled since it was last written, never above the limit. */
export function levelOf(b: SharedBucket, now: number): number {
  return Math.min(b.l, b.v + b.p * Math.max(0, now - b.t))
}

/**
 * Ms until a call of this cost fits every shared bucket; 0 when it may go now. A call bigger than
 * a whole bucket goes when the bucket is full, or it would never go.
 */
export function budgetWaitMs(budget: SharedBudget, now: number, cost: BudgetCost): number {
  let wait = 0
  for (const dim of BUDGET_DIMENSIONS) {
    const b = budget.d[dim]
    if (!b) continue
    const need = Math.min(b.l, cost[dim])
    const level = levelOf(b, now)
    if (level < need) wait = Math.max(wait, b.p > 0 ? (need - level) / b.p : 60_000)
  }
  if (cost.lane) {
    wait = Math.max(wait, laneWaitMs(budget.g, freshLanePaces(cost.lane, budget.d), cost, now))
  }
  return Math.ceil(wait)
}

/** A call admitted before any budget was announced: its answer's reading may be the first. */
export const FIRST_TICKET: BudgetTicket = Object.freeze({ seq: 0, spent: Object.freeze({}) })

/** True once an answer announced a budget: admissions are charged from then on. */
export function announced(budget: SharedBudget): boolean {
  for (const dim of BUDGET_DIMENSIONS) if (budget.d[dim]) return true
  return false
}

/**
 * Charges an admitted call: the next budget and the call's ticket. Before anything is announced
 * nothing is counted (`next` is `budget`, the ticket FIRST_TICKET): providers that announce no
 * budget cost admission nothing more.
 */
export function chargeBudget(
  budget: SharedBudget,
  now: number,
  cost: BudgetCost,
): { next: SharedBudget; ticket: BudgetTicket } {
  if (!announced(budget)) return { next: budget, ticket: FIRST_TICKET }
  const next: SharedBudget = { s: budget.s + 1, c: {}, d: {} }
  const lane = cost.lane
    ? takeLane(budget.g, freshLanePaces(cost.lane, budget.d), cost, now)
    : budget.g
  if (lane) next.g = lane
  for (const dim of BUDGET_DIMENSIONS) {
    next.c[dim] = (budget.c[dim] ?? 0) + cost[dim]
    const b = budget.d[dim]
    if (b) next.d[dim] = { ...b, v: levelOf(b, now) - cost[dim], t: now }
  }
  return { next, ticket: { seq: next.s, spent: next.c } }
}

/**
 * Applies a finished call's account: a reading from a call admitted after the one the bucket was
 * read from replaces it (the answers' order as the provider counted them, not as they arrived),
 * minus everything every worker admitted after that call; otherwise a correction of the estimate
 * for a call the reading has not counted yet. null when nothing changes.
 */
export function settleBudget(
  budget: SharedBudget,
  settle: BudgetSettle,
  now: number,
): SharedBudget | null {
  const { ticket, reading, correction } = settle
  // Copied once a bucket changes (no closure for it: this runs on every answer).
  let next: SharedBudget | null = null
  for (const dim of BUDGET_DIMENSIONS) {
    const b = budget.d[dim]
    const r = reading?.[dim]
    let bucket: SharedBucket | undefined
    if (r) {
      if (b && ticket.seq <= b.q) continue
      const since = (budget.c[dim] ?? 0) - (ticket.spent[dim] ?? budget.c[dim] ?? 0)
      bucket = { l: r.limit, p: r.ratePerMs, v: r.refilled - since, t: now, q: ticket.seq }
    } else {
      const fix = correction?.[dim]
      if (b && fix && ticket.seq > b.q) bucket = { ...b, v: levelOf(b, now) - fix, t: now }
    }
    if (!bucket) continue
    // Every field kept (the shared lane's `g` with them), the buckets copied.
    next ??= { ...budget, d: { ...budget.d } }
    next.d[dim] = bucket
  }
  return next
}

/**
 * The costed take's budget part: 'budget' when the call does not fit it yet; otherwise the next
 * budget (the same object when nothing is announced) and the call's ticket. The slot is the
 * caller's to take between the check and the charge.
 */
export function takeBudget(
  budget: SharedBudget,
  now: number,
  cost: BudgetCost,
): 'budget' | { next: SharedBudget; ticket: BudgetTicket } {
  return budgetWaitMs(budget, now, cost) > 0 ? 'budget' : chargeBudget(budget, now, cost)
}

/** What a release does to the shared budget: `next` null when it is unchanged. */
export interface ReleasedBudget {
  next: SharedBudget | null
  handedOff: boolean
  ticket?: BudgetTicket
}

/**
 * A release's budget part: the finished call's account, and for a handoff the slots allow, the
 * next call's charge if the budget allows it too.
 */
export function releaseBudget(
  current: SharedBudget,
  now: number,
  account: BudgetSettle | undefined,
  slotsAllow: boolean,
  cost: BudgetCost | undefined,
): ReleasedBudget {
  if (!account && !(slotsAllow && cost)) return { next: null, handedOff: slotsAllow }
  const settled = account ? settleBudget(current, account, now) : null
  const budget = settled ?? current
  if (!slotsAllow || !cost) return { next: settled, handedOff: slotsAllow }
  const taken = takeBudget(budget, now, cost)
  if (taken === 'budget') return { next: settled, handedOff: false }
  return {
    next: taken.next !== current ? taken.next : null,
    handedOff: true,
    ticket: taken.ticket,
  }
}

/**
 * Folds into `mine` (a budget kept in one process's memory since it read `base`) what other
 * workers charged in the row meanwhile (`theirs`): their admissions count once more, against every
 * bucket. Only a lessee that lost its exclusivity unnoticed for a moment ever needs it.
 */
export function mergeBudget(
  base: SharedBudget,
  mine: SharedBudget,
  theirs: SharedBudget,
): SharedBudget {
  const out: SharedBudget = { s: mine.s + Math.max(0, theirs.s - base.s), c: {}, d: {} }
  if (mine.g) out.g = mine.g
  for (const dim of BUDGET_DIMENSIONS) {
    const spent = (theirs.c[dim] ?? 0) - (base.c[dim] ?? 0)
    if (mine.c[dim] !== undefined || spent !== 0) out.c[dim] = (mine.c[dim] ?? 0) + spent
    const b = mine.d[dim] ?? theirs.d[dim]
    if (b) out.d[dim] = mine.d[dim] ? { ...b, v: b.v - spent } : b
  }
  return out
}

/** The budget as a store keeps it (JSON text; '' or null: nothing announced or spent yet). */
export function parseBudget(text: string | null | undefined): SharedBudget {
  if (!text) return EMPTY_BUDGET
  return JSON.parse(text) as SharedBudget
}

/** A cost with every dimension negated: the refund of a charge never sent. */
export function negatedCost(cost: BudgetCost): BudgetCost {
  const out = { ...cost }
  // A refund is no call: it goes by no pace.
  delete out.lane
  for (const dim of Object.keys(out) as BudgetDimension[]) out[dim] = -out[dim]
  return out
}
