// Spend caps (issue 21), the per-run one: a call's worst case is reserved before it is sent, in one
// write transaction that reads the spend and the reservations and inserts its own, so two processes
// on one database cannot both take the last dollar; the answer settles it to the ledger row's cost
// in the row's own transaction. Invariant: spent + reserved ≤ cap, at every commit.
import type Database from 'better-sqlite3'
import { formatUsd } from '../../../shared/format'
import { TASK_STATUS_CODES } from '../db/codes'
import { directWrites, type WriteScope } from '../db/step-writes'
import type { ChatMessage, Clock } from '../core/types'
import type { Prices } from '../pricing/prices'

/**
 * The output reserved (and sent as the call's max tokens) when a call under a cap sets none: the
 * price table knows no output caps, and reserving a model's whole window (64k-128k tokens) would
 * stop a batch long before its money runs out. Sent, it makes the reservation a true bound.
 */
export const DEFAULT_BUDGET_OUTPUT_TOKENS = 4096

/** A call's worst case under a cap, or why it cannot have one. */
export type WorstCase =
  { micros: number; outputTokens: number; defaultedOutput: boolean } | { unpriced: string }

/** What a reservation attempt found. */
export type Reservation =
  /** The batch has no cap: nothing was reserved. */
  | { kind: 'uncapped' }
  | { kind: 'reserved'; id: number; micros: number }
  /** It does not fit now, but other calls in flight hold reservations that may come back. */
  | { kind: 'wait' }
  /** It cannot fit: the settled spend alone leaves too little. */
  | { kind: 'stop'; reason: string }

export interface BudgetState {
  capMicros: number | null
  spentMicros: number
  reservedMicros: number
  /** Calls holding a reservation now. */
  reservations: number
}

/** A call refused by its batch's cap: its task is held (queued, with this reason), not failed. */
export class BudgetStopError extends Error {
  constructor(
    readonly batchId: string,
    readonly reason: string,
  ) {
    super(reason)
    this.name = 'BudgetStopError'
  }
}

const RUNNING = TASK_STATUS_CODES.running

function prepare(db: Database.Database) {
  return {
    batch: db.prepare<[string], { key: number; cap: number | null; spent: number }>(
      'SELECT key, budget_micros AS cap, budget_spent_micros AS spent FROM batches WHERE id = ?',
    ),
    // A reservation whose task is no longer running under the worker that made it is stale: that
    // worker died (its task was requeued by the lease sweep) or ended the call without settling.
    sweep: db.prepare<[number]>(
      `DELETE FROM budget_reservations WHERE batch = ? AND NOT EXISTS (
         SELECT 1 FROM task_queue t WHERE t.id = budget_reservations.task_id
           AND t.status = ${RUNNING} AND t.worker = budget_reservations.worker)`,
    ),
    sweepAll: db.prepare(
      `DELETE FROM budget_reservations WHERE NOT EXISTS (
         SELECT 1 FROM task_queue t WHERE t.id = budget_reservations.task_id
           AND t.status = ${RUNNING} AND t.worker = budget_reservations.worker)`,
    ),
    reserved: db.prepare<[number], { micros: number; n: number }>(
      'SELECT COALESCE(SUM(micros), 0) AS micros, COUNT(*) AS n FROM budget_reservations WHERE batch = ?',
    ),
    insert: db.prepare<[number, number, string, number, number]>(
      'INSERT INTO budget_reservations(batch, task_id, worker, micros, at) VALUES (?, ?, ?, ?, ?)',
    ),
    remove: db.prepare<[number]>('DELETE FROM budget_reservations WHERE id = ?'),
    spend: db.prepare<[number, string]>(
      `UPDATE batches SET budget_spent_micros = budget_spent_micros + ?
       WHERE id = ? AND budget_micros IS NOT NULL`,
    ),
    setCap: db.prepare<[number | null, string, string]>(
      `UPDATE batches SET budget_micros = ?, budget_spent_micros = (
         SELECT COALESCE(SUM(l.cost_micros), 0) FROM ledger_rows l
         WHERE l.batch = (SELECT id FROM names WHERE name = ?))
       WHERE id = ?`,
    ),
  }
}

/** The per-run caps of one database: reservations, settlement, and what is left. */
export class SpendBudget {
  readonly #db: Database.Database
  readonly #prices: Prices
  readonly #writes: WriteScope
  readonly #clock: Clock
  readonly #s: ReturnType<typeof prepare>

  constructor(opts: { db: Database.Database; prices: Prices; clock: Clock; writes?: WriteScope }) {
    this.#db = opts.db
    this.#prices = opts.prices
    this.#clock = opts.clock
    this.#writes = opts.writes ?? directWrites
    this.#s = prepare(opts.db)
  }

  /** The batch's cap in micro-dollars, null when it has none (or no such batch). */
  capOf(batchId: string): number | null {
    return this.#s.batch.get(batchId)?.cap ?? null
  }

  /**
   * Sets (or clears) the batch's cap, its spend refolded from the ledger: a batch first run
   * without a cap kept no running total.
   */
  setCap(batchId: string, capMicros: number | null): void {
    if (capMicros !== null && !(Number.isSafeInteger(capMicros) && capMicros >= 0)) {
      throw new TypeError(`a budget must be integer micro-dollars ≥ 0, got ${String(capMicros)}`)
    }
    this.#write(() => this.#s.setCap.run(capMicros, batchId, batchId))
  }

  /** Cap, settled spend and what calls in flight hold, as committed (stale rows left out). */
  state(batchId: string): BudgetState {
    const b = this.#s.batch.get(batchId)
    if (!b) return { capMicros: null, spentMicros: 0, reservedMicros: 0, reservations: 0 }
    const r = this.#s.reserved.get(b.key)!
    return { capMicros: b.cap, spentMicros: b.spent, reservedMicros: r.micros, reservations: r.n }
  }

  /**
   * The most a call can cost: every input token at the dearer of the input and cache-write prices,
   * counted as one token per byte of the request's JSON (a byte-level BPE token is at least one
   * byte, and the JSON framing outweighs the few tokens a message's framing takes), plus the
   * output cap at the output price.
   */
  worstCase(
    provider: string,
    model: string,
    messages: readonly ChatMessage[],
    maxOutputTokens: number | undefined,
  ): WorstCase {
    const price = this.#prices.priceFor(provider, model)
    if (price === null) return { unpriced: unpricedLine(provider, model) }
    const inputTokens = Buffer.byteLength(JSON.stringify(messages), 'utf8')
    const outputTokens = maxOutputTokens ?? DEFAULT_BUDGET_OUTPUT_TOKENS
    const input = Math.max(price.input, price.cacheWrite)
    const usage = { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens }
    // Priced by the same integer math as the ledger, then rounded up by a micro-dollar: the row's
    // own rounding never lands above its reservation.
    const micros = this.#prices.costMicros(usage, { ...price, input, cachedInput: input })! + 1
    return { micros, outputTokens, defaultedOutput: maxOutputTokens === undefined }
  }

  /**
   * Reserves `micros` for one call of the batch's task, atomically across processes: one write
   * transaction (BEGIN IMMEDIATE, or a savepoint of the scope's open one) reads the spend and the
   * reservations and inserts this one. The caller commits before sending (the runner's send gate).
   */
  reserve(call: { batchId: string; taskId: number; worker: string; micros: number }): Reservation {
    return this.#write(() => {
      const b = this.#s.batch.get(call.batchId)
      if (!b || b.cap === null) return { kind: 'uncapped' }
      this.#s.sweep.run(b.key)
      const held = this.#s.reserved.get(b.key)!
      if (b.spent + call.micros > b.cap) {
        return { kind: 'stop', reason: stopLine(b.cap, b.spent, call.micros) }
      }
      if (b.spent + held.micros + call.micros > b.cap) {
        // Calls in flight hold the rest; each settles at or below what it holds.
        return held.n > 0
          ? { kind: 'wait' }
          : { kind: 'stop', reason: stopLine(b.cap, b.spent, call.micros) }
      }
      const id = Number(
        this.#s.insert.run(b.key, call.taskId, call.worker, call.micros, this.#clock.now())
          .lastInsertRowid,
      )
      return { kind: 'reserved', id, micros: call.micros }
    })
  }

  /**
   * The call's ledger row was written: its reservation goes and its real cost is spent. Call it
   * inside the row's transaction. A row of a capped batch counts even if its reservation was swept.
   */
  settle(batchId: string, reservationId: number | null, costMicros: number | null): void {
    if (reservationId !== null) this.#s.remove.run(reservationId)
    if (costMicros !== null && costMicros !== 0) this.#s.spend.run(costMicros, batchId)
  }

  /** Nothing was sent (or nothing will be ledgered): the reservation goes back whole. */
  release(reservationId: number): void {
    this.#writes.run(() => this.#s.remove.run(reservationId))
  }

  /** Reservations of tasks no longer running under their worker (a dead process's): deleted. */
  sweep(): number {
    return this.#writes.run(() => this.#s.sweepAll.run().changes)
  }

  #write<T>(fn: () => T): T {
    return this.#writes.run(() => this.#db.transaction(fn).immediate())
  }
}

/** The one line that refuses an unpriced model under a cap. */
export function unpricedLine(provider: string, model: string): string {
  return (
    `${provider}/${model} has no price, so a budget cannot bound its calls: nothing was sent. ` +
    `Price it with an override (console: Settings > Price overrides; \`pacer prices ${model}\` ` +
    `says what matches), or run without --budget`
  )
}

function stopLine(cap: number, spent: number, next: number): string {
  return (
    `held by budget: the run's cap is ${formatUsd(cap)}, ${formatUsd(spent)} spent; the next ` +
    `call may cost up to ${formatUsd(next)} (raise it with --budget)`
  )
}
