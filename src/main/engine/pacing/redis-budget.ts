// The shared announced budget's rules (shared-budget.ts) run in Lua, in the Redis scripts that
// admit and release (redis/lua/pacing/budget.lua, prepended to admit.lua and release.lua): so a
// call is admitted only when the slots and the budget both allow it. What the scripts take and
// give back of it is written and read here.
import type { BudgetSettle, BudgetTicket } from './shared-budget'

/** A script's ticket (seq, cumulative cost as JSON) from `at` on, if it charged the call. */
export function ticketOf(r: (string | number)[], at: number): BudgetTicket | undefined {
  if (r[at] === undefined) return undefined
  return { seq: Number(r[at]), spent: JSON.parse(String(r[at + 1])) as BudgetTicket['spent'] }
}

/** A call's budget account as the release script reads it (budget.lua bsettle). */
export function settleText(s: BudgetSettle): string {
  return JSON.stringify({ q: s.ticket.seq, sp: s.ticket.spent, r: s.reading, f: s.correction })
}
