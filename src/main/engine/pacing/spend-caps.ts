// The spend caps kept in the database (issue 21): per task type, provider + model, or all spend,
// for all time or per calendar day / month. SpendBudget (spend-budget.ts) calls these inside its
// own write transactions: a call's reservation is checked against every cap that applies and holds
// its worst case under each (budget_holds), its ledger row's cost is charged to each in the row's
// transaction, and a dead worker's holds go with its reservations. Tables: migration 17.
import type Database from 'better-sqlite3'
import { formatUsd } from '../../../shared/format'
import type { CapPeriod, SpendCapView } from '../../../shared/contract/spend'
import { periodKey, periodRange } from './spend-periods'

/** What a cap covers and over which period. */
export interface CapScope {
  taskType: string | null
  provider: string | null
  model: string | null
  period: CapPeriod
  zone: string
}

/** A cap as stored. */
export interface SpendCap extends CapScope {
  id: number
  capMicros: number
}

/** The call a reservation or a ledger row is for. */
export interface CallScope {
  batchId: string
  taskType: string
  provider: string
  model: string
}

/** A cap a call falls under, in the period it falls in. */
export interface CapHold {
  cap: SpendCap
  key: string
}

/** The warning thresholds, in percent of a cap: each said once per cap and period. */
export const CAP_WARNINGS = [50, 80, 100] as const

/** A threshold a ledger row's cost crossed, first in its cap and period across all processes. */
export interface CapAlert {
  cap: SpendCap
  periodKey: string
  percent: number
  spentMicros: number
  at: number
}

/** Whether a call's worst case fits under the caps that apply, and what it would hold. */
export type CapCheck =
  | { kind: 'fit'; holds: CapHold[] }
  | { kind: 'wait' }
  /** `alert`: the cap's 100 % threshold, said now for the first time in its period. */
  | { kind: 'stop'; reason: string; cap: SpendCap; alert: CapAlert | null }

function prepare(db: Database.Database) {
  const cols = `id, task_type AS taskType, provider, model, period, zone, cap_micros AS capMicros`
  return {
    all: db.prepare<[], SpendCap>(`SELECT ${cols} FROM spend_caps ORDER BY id`),
    one: db.prepare<[number], SpendCap>(`SELECT ${cols} FROM spend_caps WHERE id = ?`),
    same: db.prepare<[string | null, string | null, string | null, string, string], SpendCap>(
      `SELECT ${cols} FROM spend_caps WHERE task_type IS ? AND provider IS ? AND model IS ?
         AND period = ? AND zone = ?`,
    ),
    insert: db.prepare<
      [string | null, string | null, string | null, string, string, number, number, number]
    >(
      `INSERT INTO spend_caps(task_type, provider, model, period, zone, cap_micros, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    update: db.prepare<[number, number, number]>(
      'UPDATE spend_caps SET cap_micros = ?, updated_at = ? WHERE id = ?',
    ),
    remove: db.prepare<[number]>('DELETE FROM spend_caps WHERE id = ?'),
    removePeriods: db.prepare<[number]>('DELETE FROM spend_cap_periods WHERE cap = ?'),
    removeHoldsOf: db.prepare<[number]>('DELETE FROM budget_holds WHERE cap = ?'),
    removeAlerts: db.prepare<[number]>('DELETE FROM spend_cap_alerts WHERE cap = ?'),
    removeAlertsOf: db.prepare<[number, string]>(
      'DELETE FROM spend_cap_alerts WHERE cap = ? AND period_key = ?',
    ),
    spent: db.prepare<[number, string], { spent: number; presumed: number }>(
      `SELECT spent_micros AS spent, presumed_micros AS presumed FROM spend_cap_periods
       WHERE cap = ? AND period_key = ?`,
    ),
    charge: db.prepare<[number, string, number]>(
      `INSERT INTO spend_cap_periods(cap, period_key, spent_micros) VALUES (?, ?, ?)
       ON CONFLICT(cap, period_key) DO UPDATE SET spent_micros = spent_micros + excluded.spent_micros`,
    ),
    refold: db.prepare<[number, string, number]>(
      `INSERT INTO spend_cap_periods(cap, period_key, spent_micros) VALUES (?, ?, ?)
       ON CONFLICT(cap, period_key) DO UPDATE SET spent_micros = excluded.spent_micros`,
    ),
    // The ledger's own sum over the cap's scope and period (a cap set mid-period counts what the
    // period has spent already). The ts index bounds a day's or a month's scan.
    ledgerSum: db.prepare<
      [
        {
          start: number
          end: number
          taskType: string | null
          provider: string | null
          model: string | null
        },
      ],
      { spent: number }
    >(
      `SELECT COALESCE(SUM(r.cost_micros), 0) AS spent FROM ledger_rows r
       JOIN ledger_labels l ON l.id = r.label
       WHERE r.ts >= @start AND r.ts < @end AND (@taskType IS NULL OR l.task_type = @taskType)
         AND (@provider IS NULL OR l.provider = @provider) AND (@model IS NULL OR l.model = @model)`,
    ),
    held: db.prepare<[number, string], { micros: number; n: number }>(
      `SELECT COALESCE(SUM(micros), 0) AS micros, COUNT(*) AS n FROM budget_holds
       WHERE cap = ? AND period_key = ?`,
    ),
    hold: db.prepare<[number, number, string, number]>(
      'INSERT INTO budget_holds(reservation, cap, period_key, micros) VALUES (?, ?, ?, ?)',
    ),
    holdsOf: db.prepare<[number], { cap: number; key: string }>(
      'SELECT cap, period_key AS key FROM budget_holds WHERE reservation = ?',
    ),
    release: db.prepare<[number]>('DELETE FROM budget_holds WHERE reservation = ?'),
    alert: db.prepare<[number, string, number, number]>(
      'INSERT OR IGNORE INTO spend_cap_alerts(cap, period_key, percent, at) VALUES (?, ?, ?, ?)',
    ),
    warned: db.prepare<[number, string], { percent: number | null }>(
      'SELECT MAX(percent) AS percent FROM spend_cap_alerts WHERE cap = ? AND period_key = ?',
    ),
    orphans: db.prepare(
      `DELETE FROM budget_holds WHERE NOT EXISTS (
         SELECT 1 FROM budget_reservations r WHERE r.id = budget_holds.reservation)`,
    ),
  }
}

/** True when the cap covers calls of this task type, provider and model. */
export function covers(cap: CapScope, call: Omit<CallScope, 'batchId'>): boolean {
  return (
    (cap.taskType === null || cap.taskType === call.taskType) &&
    (cap.provider === null || cap.provider === call.provider) &&
    (cap.model === null || cap.model === call.model)
  )
}

/** What a cap covers, in words. */
export function scopeText(cap: CapScope): string {
  const parts: string[] = []
  if (cap.provider !== null)
    parts.push(cap.model === null ? cap.provider : `${cap.provider}/${cap.model}`)
  else if (cap.model !== null) parts.push(`model ${cap.model}`)
  if (cap.taskType !== null) parts.push(`task type ${cap.taskType}`)
  return parts.length === 0 ? 'all spend' : parts.join(', ')
}

/** The cap's name in a sentence: "the daily cap (UTC) on task type x". */
export function capName(cap: CapScope): string {
  const when =
    cap.period === 'total'
      ? 'cap'
      : `${cap.period === 'day' ? 'daily' : 'monthly'} cap (${cap.zone})`
  return `the ${when} on ${scopeText(cap)}`
}

/** The caps of one database, read and charged inside SpendBudget's transactions. */
export class SpendCaps {
  readonly #s: ReturnType<typeof prepare>

  constructor(db: Database.Database) {
    this.#s = prepare(db)
  }

  /** Every cap, oldest first. A handful of rows: read afresh on each reservation; the check before
   * each call (SpendBudget.applies) keeps them until `PRAGMA data_version` says another connection
   * committed, so a cap another process sets applies to the next call. */
  all(): SpendCap[] {
    return this.#s.all.all()
  }

  /** The caps that apply to a call. */
  applying(call: Omit<CallScope, 'batchId'>): SpendCap[] {
    return this.all().filter((c) => covers(c, call))
  }

  /**
   * Whether `micros` more fits under each cap that applies, in the period `now` falls in. Stale
   * holds must be swept first (SpendBudget.reserve does, in the same transaction).
   */
  check(caps: readonly SpendCap[], micros: number, now: number): CapCheck {
    const holds: CapHold[] = []
    let wait = false
    for (const cap of caps) {
      const key = periodKey(now, cap.period, cap.zone)
      const row = this.#s.spent.get(cap.id, key)
      const spent = row ? row.spent + row.presumed : 0
      if (spent + micros > cap.capMicros) return this.#stop(cap, key, spent, micros, now)
      const held = this.#s.held.get(cap.id, key)!
      if (spent + held.micros + micros > cap.capMicros) {
        // Calls in flight hold the rest; each settles at or below what it holds.
        if (held.n === 0) return this.#stop(cap, key, spent, micros, now)
        wait = true
      }
      holds.push({ cap, key })
    }
    return wait ? { kind: 'wait' } : { kind: 'fit', holds }
  }

  /**
   * The cap holds work: a call does not fit. That is its 100 % threshold, whatever the spend's
   * exact share (a reservation never lets the spend reach the cap to the micro-dollar).
   */
  #stop(cap: SpendCap, key: string, spent: number, micros: number, now: number): CapCheck {
    const first = this.#s.alert.run(cap.id, key, 100, now).changes === 1
    const alert = first ? { cap, periodKey: key, percent: 100, spentMicros: spent, at: now } : null
    return { kind: 'stop', reason: stopLine(cap, key, spent, micros), cap, alert }
  }

  /** Records the reservation's worst case under each cap it fits. */
  hold(reservation: number, holds: readonly CapHold[], micros: number): void {
    for (const h of holds) this.#s.hold.run(reservation, h.cap.id, h.key, micros)
  }

  /**
   * The call's ledger row was written (in this transaction): its holds go, its cost is charged to
   * every cap that covers it, in the period its reservation held (else the period now).
   */
  settle(
    reservation: number | null,
    call: CallScope,
    costMicros: number | null,
    now: number,
  ): CapAlert[] {
    const held = reservation === null ? [] : this.#s.holdsOf.all(reservation)
    if (reservation !== null && held.length > 0) this.#s.release.run(reservation)
    if (costMicros === null || costMicros === 0) return []
    const alerts: CapAlert[] = []
    for (const cap of this.all()) {
      if (!covers(cap, call)) continue
      const key = held.find((h) => h.cap === cap.id)?.key ?? periodKey(now, cap.period, cap.zone)
      const row = this.#s.spent.get(cap.id, key)
      const before = row ? row.spent + row.presumed : 0
      this.#s.charge.run(cap.id, key, costMicros)
      const after = before + costMicros
      for (const percent of CAP_WARNINGS) {
        const line = (cap.capMicros * percent) / 100
        // Crossed by this row, and first to say so (the row's transaction holds the lock).
        if (
          before < line &&
          after >= line &&
          this.#s.alert.run(cap.id, key, percent, now).changes
        ) {
          alerts.push({ cap, periodKey: key, percent, spentMicros: after, at: now })
        }
      }
    }
    return alerts
  }

  /** The reservation was given back whole. */
  release(reservation: number): void {
    this.#s.release.run(reservation)
  }

  /** Holds whose reservation is gone (a dead worker's, swept with its reservations). */
  sweepOrphans(): number {
    return this.#s.orphans.run().changes
  }

  /**
   * Adds a cap, or changes the amount of the one with the same scope, period and zone; the
   * current period's spend is refolded from the ledger. Returns its id.
   */
  set(scope: CapScope, capMicros: number, now: number): number {
    const { taskType, provider, model, period, zone } = scope
    const same = this.#s.same.get(taskType, provider, model, period, zone)
    const id =
      same?.id ??
      Number(
        this.#s.insert.run(taskType, provider, model, period, zone, capMicros, now, now)
          .lastInsertRowid,
      )
    if (same) this.#s.update.run(capMicros, now, id)
    const { key, start, end } = periodRange(now, period, zone)
    const spent = this.#s.ledgerSum.get({ start, end, taskType, provider, model })!.spent
    this.#s.refold.run(id, key, spent)
    // The thresholds are shares of the amount: a new amount starts them again, those the period's
    // spend already passes counted as said (a raised cap does not warn of what it just allowed).
    this.#s.removeAlertsOf.run(id, key)
    const presumed = this.#s.spent.get(id, key)?.presumed ?? 0
    for (const percent of CAP_WARNINGS) {
      if ((spent + presumed) * 100 >= capMicros * percent) this.#s.alert.run(id, key, percent, now)
    }
    return id
  }

  /** Removes a cap with its spend, holds and warnings; false when there was none. */
  remove(id: number): boolean {
    this.#s.removeHoldsOf.run(id)
    this.#s.removePeriods.run(id)
    this.#s.removeAlerts.run(id)
    return this.#s.remove.run(id).changes === 1
  }

  /** One cap by id, or null. */
  get(id: number): SpendCap | null {
    return this.#s.one.get(id) ?? null
  }

  /**
   * Each cap with its current period's spend and what calls in flight hold; `live` says which
   * reservations are not stale (their worker still runs the task).
   */
  views(now: number, liveHeld: (cap: number, key: string) => number): SpendCapView[] {
    return this.all().map((cap) => {
      const key = periodKey(now, cap.period, cap.zone)
      const row = this.#s.spent.get(cap.id, key)
      const spent = row?.spent ?? 0
      const inDoubt = row?.presumed ?? 0
      const reserved = liveHeld(cap.id, key)
      return {
        warnedPercent: this.#s.warned.get(cap.id, key)?.percent ?? null,
        ...cap,
        periodKey: key,
        scope: scopeText(cap),
        spentMicros: spent,
        inDoubtMicros: inDoubt,
        reservedMicros: reserved,
        leftMicros: Math.max(0, cap.capMicros - spent - inDoubt - reserved),
        percent: percentOf(spent + inDoubt, cap.capMicros),
      }
    })
  }
}

/** spent / cap in whole percent, floored (100 for a cap of 0). */
export function percentOf(spent: number, cap: number): number {
  return cap === 0 ? 100 : Math.floor((spent * 100) / cap)
}

/** The line a threshold says: on the CLI, in the console's banner, in the webhook's text. */
export function alertLine(a: CapAlert): string {
  const period = a.cap.period === 'total' ? '' : ` for ${a.periodKey}`
  return (
    `budget: ${a.percent}% of ${capName(a.cap)} reached${period}: ` +
    `${formatUsd(a.spentMicros)} of ${formatUsd(a.cap.capMicros)}`
  )
}

function stopLine(cap: SpendCap, key: string, spent: number, next: number): string {
  const period = cap.period === 'total' ? '' : ` for ${key}`
  return (
    `held by budget: ${capName(cap)} is ${formatUsd(cap.capMicros)}${period}, ` +
    `${formatUsd(spent)} spent; the next call may cost up to ${formatUsd(next)} ` +
    `(raise it with pacer budgets set, or in the console's Spend view)`
  )
}
