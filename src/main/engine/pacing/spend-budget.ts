// Spend caps (issue 21), the per-run one: a call's worst case is reserved before it is sent, in one
// write transaction that reads the spend and the reservations and inserts its own, so two processes
// on one database cannot both take the last dollar; the answer settles it to the ledger row's cost
// in the row's own transaction. Invariant: spent + reserved ≤ cap, at every commit.
import type Database from 'better-sqlite3'
import { formatUsd } from '../../../shared/format'
import { TASK_STATUS_CODES } from '../db/codes'
import { directWrites, scopedDataVersion, type WriteScope } from '../db/step-writes'
import type { ChatMessage, Clock } from '../core/types'
import type { Prices } from '../pricing/prices'
import type { SpendCapView } from '../../../shared/contract/spend'
import {
  SpendCaps,
  covers,
  type CallScope,
  type CapAlert,
  type CapScope,
  type SpendCap,
} from './spend-caps'

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

/**
 * The caps as a connection last read them: the kept ones, and each batch's own (null: none).
 * Valid while `PRAGMA data_version` is unchanged (no other connection committed since) and no
 * SpendBudget on the connection changed a cap or lost a transaction to a rollback; shared by
 * every SpendBudget on the connection.
 */
interface CapsSeen {
  version: unknown
  caps: SpendCap[]
  batchCaps: Map<string, number | null>
}
const capsSeen = new WeakMap<Database.Database, CapsSeen>()

// A reservation whose task is no longer running under the worker that made it is stale: that
// worker died (its task was requeued by the lease sweep) or ended the call without settling.
const STALE = `NOT EXISTS (SELECT 1 FROM task_queue t WHERE t.id = r.task_id
  AND t.status = ${RUNNING} AND t.worker = r.worker)`

function prepare(db: Database.Database) {
  return {
    batch: db.prepare<[string], { key: number; cap: number | null; spent: number }>(
      'SELECT key, budget_micros AS cap, budget_spent_micros AS spent FROM batches WHERE id = ?',
    ),
    // A stale reservation whose request went out may have been billed: under the caps it held,
    // its worst case stays counted (in doubt) instead of coming back.
    presume: db.prepare(
      `INSERT INTO spend_cap_periods(cap, period_key, presumed_micros)
       SELECT h.cap, h.period_key, SUM(h.micros) FROM budget_holds h
       JOIN budget_reservations r ON r.id = h.reservation
       WHERE r.sent = 1 AND ${STALE} GROUP BY h.cap, h.period_key
       ON CONFLICT(cap, period_key) DO UPDATE
         SET presumed_micros = presumed_micros + excluded.presumed_micros`,
    ),
    sweepAll: db.prepare(`DELETE FROM budget_reservations AS r WHERE ${STALE}`),
    anyStale: db.prepare<[], { n: number }>(
      `SELECT COUNT(*) AS n FROM budget_reservations r WHERE ${STALE}`,
    ),
    sent: db.prepare<[number]>('UPDATE budget_reservations SET sent = 1 WHERE id = ?'),
    // What live reservations hold under a cap in a period (a dead worker's, not swept yet, left
    // out: they are read as in doubt or returned at the next sweep).
    liveHeld: db.prepare<[number, string], { micros: number }>(
      `SELECT COALESCE(SUM(h.micros), 0) AS micros FROM budget_holds h
       JOIN budget_reservations r ON r.id = h.reservation
       WHERE h.cap = ? AND h.period_key = ? AND NOT ${STALE}`,
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

/** The spend caps of one database (per run, and kept ones): reservations, settlement, what is left. */
export class SpendBudget {
  readonly #db: Database.Database
  readonly #prices: Prices
  readonly #writes: WriteScope
  readonly #clock: Clock
  readonly #s: ReturnType<typeof prepare>
  readonly #caps: SpendCaps
  readonly #alertListeners = new Set<(alert: CapAlert) => void>()

  readonly #dataVersion: Database.Statement<[], unknown>

  constructor(opts: { db: Database.Database; prices: Prices; clock: Clock; writes?: WriteScope }) {
    this.#db = opts.db
    this.#prices = opts.prices
    this.#clock = opts.clock
    this.#writes = opts.writes ?? directWrites
    this.#s = prepare(opts.db)
    this.#caps = new SpendCaps(opts.db)
    this.#dataVersion = opts.db.prepare<[], unknown>('PRAGMA data_version').pluck()
    // A cap written in a transaction that was then lost may have been read meanwhile.
    this.#writes.onRollback?.(() => capsSeen.delete(this.#db))
  }

  /** The batch's cap in micro-dollars, null when it has none (or no such batch). */
  capOf(batchId: string): number | null {
    const seen = this.#seen()
    let cap = seen.batchCaps.get(batchId)
    if (cap === undefined) {
      cap = this.#s.batch.get(batchId)?.cap ?? null
      seen.batchCaps.set(batchId, cap)
    }
    return cap
  }

  /**
   * True when some cap applies to the call: its batch's, or a kept one that covers it. Asked
   * before every call: read from the caps as last seen, one `PRAGMA data_version` instead of
   * two queries when nothing changed them (a cap another process sets applies to the next call).
   */
  applies(call: CallScope): boolean {
    return this.capOf(call.batchId) !== null || this.#seen().caps.some((c) => covers(c, call))
  }

  /**
   * Sets (or clears) the batch's cap, its spend refolded from the ledger: a batch first run
   * without a cap kept no running total.
   */
  setCap(batchId: string, capMicros: number | null): void {
    if (capMicros !== null) checkMicros(capMicros)
    this.#writeCaps(() => this.#s.setCap.run(capMicros, batchId, batchId))
  }

  /** Adds a kept cap, or changes the amount of the one of the same scope; returns its id. */
  setScopedCap(scope: CapScope, capMicros: number): number {
    checkMicros(capMicros)
    return this.#writeCaps(() => this.#caps.set(scope, capMicros, this.#clock.now()))
  }

  /** Removes a kept cap; false when there was none. */
  removeScopedCap(id: number): boolean {
    return this.#writeCaps(() => this.#caps.remove(id))
  }

  /** The caps as last read on this connection, read again if anything may have changed them. */
  #seen(): CapsSeen {
    const version = scopedDataVersion(this.#db) ?? this.#dataVersion.get()
    let seen = capsSeen.get(this.#db)
    if (seen === undefined || seen.version !== version) {
      seen = { version, caps: this.#caps.all(), batchCaps: new Map() }
      capsSeen.set(this.#db, seen)
    }
    return seen
  }

  /** A write that changes a cap: what was seen is read again, whether it commits or not. */
  #writeCaps<T>(fn: () => T): T {
    capsSeen.delete(this.#db)
    try {
      return this.#write(fn)
    } finally {
      capsSeen.delete(this.#db)
    }
  }

  /** One kept cap, or null. */
  scopedCap(id: number): SpendCap | null {
    return this.#caps.get(id)
  }

  /** The kept caps with their current period's spend, in doubt, reserved and left. */
  capViews(): SpendCapView[] {
    return this.#caps.views(this.#clock.now(), (cap, key) => this.#s.liveHeld.get(cap, key)!.micros)
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
   * Reserves `micros` for one call, atomically across processes, under its batch's cap and every
   * kept cap that covers it: one write transaction (BEGIN IMMEDIATE, or a savepoint of the scope's
   * open one) sweeps stale reservations, reads the spend and the reservations and inserts this
   * one. The caller commits before sending (the runner's send gate).
   */
  reserve(call: CallScope & { taskId: number; worker: string; micros: number }): Reservation {
    return this.#write(() => {
      const b = this.#s.batch.get(call.batchId)
      const caps = this.#caps.applying(call)
      if (!b || (b.cap === null && caps.length === 0)) return { kind: 'uncapped' }
      // A look first: the sweep's joins cost more than the reservation, and rarely find a row.
      if (this.#s.anyStale.get()!.n > 0) this.#sweep()
      let wait = false
      if (b.cap !== null) {
        const held = this.#s.reserved.get(b.key)!
        if (b.spent + call.micros > b.cap) {
          return { kind: 'stop', reason: stopLine(b.cap, b.spent, call.micros) }
        }
        if (b.spent + held.micros + call.micros > b.cap) {
          // Calls in flight hold the rest; each settles at or below what it holds.
          if (held.n === 0) return { kind: 'stop', reason: stopLine(b.cap, b.spent, call.micros) }
          wait = true
        }
      }
      const fit = this.#caps.check(caps, call.micros, this.#clock.now())
      if (fit.kind === 'stop') {
        if (fit.alert) this.#tell([fit.alert])
        return { kind: 'stop', reason: fit.reason }
      }
      if (wait || fit.kind === 'wait') return { kind: 'wait' }
      const id = Number(
        this.#s.insert.run(b.key, call.taskId, call.worker, call.micros, this.#clock.now())
          .lastInsertRowid,
      )
      this.#caps.hold(id, fit.holds, call.micros)
      return { kind: 'reserved', id, micros: call.micros }
    })
  }

  /**
   * The call's request is going out: if its worker dies before the answer is ledgered, its worst
   * case stays counted under the kept caps. Call it in the write of the call's journal intent.
   */
  markSent(reservationId: number): void {
    this.#s.sent.run(reservationId)
  }

  /**
   * The call's ledger row was written: its reservation goes and its real cost is spent, under its
   * batch's cap and every kept cap that covers it. Call it inside the row's transaction. A row
   * counts even if its reservation was swept, or it had none (a cap set while it was in flight).
   */
  settle(call: CallScope, reservationId: number | null, costMicros: number | null): void {
    if (reservationId !== null) this.#s.remove.run(reservationId)
    const spent = costMicros !== null && costMicros !== 0
    // A batch without a cap keeps no running total (the update would match no row).
    if (spent && this.capOf(call.batchId) !== null) this.#s.spend.run(costMicros, call.batchId)
    // Nothing held and nothing spent, or no kept cap: nothing to settle under the kept caps.
    if (reservationId === null && (!spent || this.#seen().caps.length === 0)) return
    this.#tell(this.#caps.settle(reservationId, call, costMicros, this.#clock.now()))
  }

  /** Says the thresholds once the transaction that crossed them is done, never from inside it. */
  #tell(alerts: CapAlert[]): void {
    if (alerts.length === 0 || this.#alertListeners.size === 0) return
    setImmediate(() => {
      for (const a of alerts) for (const l of this.#alertListeners) l(a)
    })
  }

  /** Hears each warning threshold a ledger row crosses (once per cap and period, all processes). */
  onAlert(listener: (alert: CapAlert) => void): () => void {
    this.#alertListeners.add(listener)
    return () => this.#alertListeners.delete(listener)
  }

  /** Nothing was sent (or nothing will be ledgered): the reservation goes back whole. */
  release(reservationId: number): void {
    this.#writes.run(() => {
      this.#s.remove.run(reservationId)
      this.#caps.release(reservationId)
    })
  }

  /** Reservations of tasks no longer running under their worker (a dead process's): swept. */
  sweep(): number {
    if (this.#s.anyStale.get()!.n === 0) return 0
    return this.#write(() => this.#sweep())
  }

  #sweep(): number {
    this.#s.presume.run()
    const swept = this.#s.sweepAll.run().changes
    this.#caps.sweepOrphans()
    return swept
  }

  #write<T>(fn: () => T): T {
    return this.#writes.run(() => this.#db.transaction(fn).immediate())
  }
}

function checkMicros(capMicros: number): void {
  if (!(Number.isSafeInteger(capMicros) && capMicros >= 0)) {
    throw new TypeError(`a budget must be integer micro-dollars ≥ 0, got ${String(capMicros)}`)
  }
}

/**
 * The one line that refuses an unpriced model under a cap; `cap` names the cap when it is a kept
 * one ("the daily cap (UTC) on all spend, id 2"), else the run's --budget is meant.
 */
export function unpricedLine(provider: string, model: string, cap?: string): string {
  const without =
    cap === undefined
      ? 'or run without --budget'
      : `or take it out of ${cap} (pacer budgets remove)`
  return (
    `${provider}/${model} has no price, so a budget cannot bound its calls: nothing was sent. ` +
    `Price it with an override (console: Settings > Price overrides; \`pacer prices ${model}\` ` +
    `says what matches), ${without}`
  )
}

function stopLine(cap: number, spent: number, next: number): string {
  return (
    `held by budget: the run's cap is ${formatUsd(cap)}, ${formatUsd(spent)} spent; the next ` +
    `call may cost up to ${formatUsd(next)} (raise it with --budget)`
  )
}
