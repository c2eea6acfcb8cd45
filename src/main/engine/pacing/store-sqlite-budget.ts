// The shared announced budget's row in the SQLite file (pacing_partitions.budget, migration 13):
// read, parsed once per text, and written inside the pacing store's transactions.
import type Database from 'better-sqlite3'
import type { BudgetCost, BudgetTicket, SharedBudget } from './shared-budget'
import { budgetWaitMs, chargeBudget, parseBudget, releaseBudget } from './shared-budget'
import type { ReleaseRequest } from './store'

/** The shared announced budget's statements: read and written on every costed admission. */
export const BUDGET_SQL = {
  get: 'SELECT budget FROM pacing_partitions WHERE partition = ?',
  set: 'UPDATE pacing_partitions SET budget = @budget WHERE partition = @partition',
} as const

/** Every partition's shared announced budget in one database. */
export class SqliteBudgets {
  readonly #get: Database.Statement<[string], { budget: string | null }>
  readonly #set: Database.Statement<[{ partition: string; budget: string }]>
  // The text this process last read or wrote, parsed: the next admission reuses it. A rolled-back
  // write leaves its text here, but the text is the key: the row's own, read again, never matches
  // it by mistake.
  readonly #parsed = new Map<string, { text: string | null; budget: SharedBudget }>()

  constructor(db: Database.Database) {
    this.#get = db.prepare(BUDGET_SQL.get)
    this.#set = db.prepare(BUDGET_SQL.set)
  }

  /** The partition's budget as its row holds it now. */
  read(partition: string): SharedBudget {
    return this.of(partition, this.#get.get(partition)?.budget ?? null)
  }

  /** The budget a row's text holds, parsed once per text. */
  of(partition: string, text: string | null): SharedBudget {
    const known = this.#parsed.get(partition)
    if (known && known.text === text) return known.budget
    const budget = parseBudget(text)
    this.#parsed.set(partition, { text, budget })
    return budget
  }

  /** Writes the budget, inside the caller's transaction. */
  write(partition: string, budget: SharedBudget): void {
    this.set(partition, this.text(partition, budget))
  }

  /** Writes a budget's text (from text()), inside the caller's transaction. */
  set(partition: string, text: string): void {
    this.#set.run({ partition, budget: text })
  }

  /** The budget's text for the caller's own write, inside its transaction (kept as read). */
  text(partition: string, budget: SharedBudget): string {
    const text = JSON.stringify(budget)
    this.#parsed.set(partition, { text, budget })
    return text
  }

  /**
   * The costed take, inside the caller's IMMEDIATE transaction: the budget is read again under the
   * write lock, so the check, the slot's take and the charge are one step for every process on
   * the file. 'budget': the budget refused; 'slots': the slot's take did.
   */
  take(
    partition: string,
    now: number,
    cost: BudgetCost,
    takeSlot: () => boolean,
  ): BudgetTicket | 'budget' | 'slots' {
    const budget = this.read(partition)
    if (budgetWaitMs(budget, now, cost) > 0) return 'budget'
    if (!takeSlot()) return 'slots'
    const { next, ticket } = chargeBudget(budget, now, cost)
    if (next !== budget) this.write(partition, next)
    return ticket
  }

  /**
   * A release's part (shared-budget.ts releaseBudget), inside its transaction, on the row's budget
   * `text` as the transaction read it. `next`: the budget's new text, for the caller to write with
   * the record in one statement (null: unchanged).
   */
  release(
    partition: string,
    text: string | null,
    request: ReleaseRequest,
    slotsAllow: boolean,
  ): { handedOff: boolean; ticket?: BudgetTicket; next: string | null } {
    const { now, handoffCost: cost } = request
    if (!request.budget && !(slotsAllow && cost)) return { handedOff: slotsAllow, next: null }
    const r = releaseBudget(this.of(partition, text), now, request.budget, slotsAllow, cost)
    const next = r.next ? this.text(partition, r.next) : null
    return r.ticket
      ? { handedOff: r.handedOff, ticket: r.ticket, next }
      : { handedOff: r.handedOff, next }
  }
}
