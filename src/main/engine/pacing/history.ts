// The concurrency history the console's chart opens with (migration 15): the scheduler's samples
// folded to one row per partition per second while it is busy, and every pause with its reason.
// Written by the process that runs the calls (a `pacer run`, a console), read by any: a chart
// opened after the run, or in a fresh `pacer serve`, shows the partition's last hour.
//
// Bounded both ways: rows older than RETAIN_MS are pruned as new ones are written, and a read is
// one range of the primary key (partition, ts) per partition with a LIMIT, whatever the table holds.
import type Database from 'better-sqlite3'
import type { PauseView, SchedulerHistoryView, SchedulerSample } from '../../../shared/contract'
import type { PartitionSnapshot } from './scheduler-types'

/** What the chart can show: its widest window. */
export const HISTORY_WINDOW_MS = 60 * 60_000
/** Kept a while past the window, so a chart opened at the edge still draws its left end. */
export const RETAIN_MS = 2 * HISTORY_WINDOW_MS
/** One row a second: an hour of a partition, and a minute of slack. */
export const HISTORY_ROWS = 3660
/** Partitions read at most (the busiest come first in the console; a database has a few). */
export const HISTORY_PARTITIONS = 64
const PAUSE_ROWS = 200
const SECOND = 1000
const PRUNE_EVERY_MS = 60_000

export const HISTORY_SQL = {
  // Two processes on one partition in the same second: what each holds adds up.
  write: `
    INSERT INTO pacing_samples
      (partition, ts, limit_value, concurrency, inflight, waiting, throttles)
    VALUES (@partition, @ts, @limit, @concurrency, @inflight, @waiting, @throttles)
    ON CONFLICT (partition, ts) DO UPDATE SET
      limit_value = excluded.limit_value, concurrency = excluded.concurrency,
      inflight = inflight + excluded.inflight, waiting = waiting + excluded.waiting,
      throttles = throttles + excluded.throttles`,
  pause: `INSERT OR IGNORE INTO pacing_pauses (partition, ts, until, reason)
    VALUES (@partition, @ts, @until, @reason)`,
  prune: 'DELETE FROM pacing_samples WHERE partition = ? AND ts < ?',
  prunePauses: 'DELETE FROM pacing_pauses WHERE partition = ? AND ts < ?',
  // The partitions the table holds, one seek each past the last (a skip scan of the key's
  // prefix): as many steps as partitions, however many rows each has.
  nextPartition: `SELECT partition FROM pacing_samples WHERE partition > ? ORDER BY partition LIMIT 1`,
  // The newest rows of the window, oldest first: a range of the primary key, read backwards.
  samples: `
    SELECT ts, limit_value AS "limit", concurrency, inflight, waiting, throttles FROM (
      SELECT * FROM pacing_samples WHERE partition = ? AND ts >= ? ORDER BY ts DESC LIMIT ${HISTORY_ROWS}
    ) ORDER BY ts`,
  pauses: `
    SELECT ts, until, reason FROM pacing_pauses WHERE partition = ? AND ts >= ?
    ORDER BY ts DESC LIMIT ${PAUSE_ROWS}`,
} as const

/** `scheduler:history`: the samples and pauses of every partition since a time. */
export type PacingHistoryView = SchedulerHistoryView

/** A partition's second: its samples folded (throttles: during the second). */
interface Second extends SchedulerSample {
  /** The second's last sample had nothing in flight or waiting (the scheduler went idle). */
  endsIdle: boolean
}

/** Folds samples to seconds and writes them; reads a window back. */
export class PacingHistory {
  readonly #db: Database.Database
  #stmts: { [K in keyof typeof HISTORY_SQL]: Database.Statement } | undefined
  /** The second being folded, per partition. */
  readonly #open = new Map<string, Second>()
  /** Each partition's throttle counter at its last sample (counters are cumulative). */
  readonly #throttles = new Map<string, number>()
  readonly #prunedAt = new Map<string, number>()
  readonly #warn: (message: string) => void
  #failed = false

  constructor(db: Database.Database, warn: (message: string) => void = () => {}) {
    this.#db = db
    this.#warn = warn
  }

  get #sql() {
    // Prepared when first used: an engine that never samples never touches the tables.
    return (this.#stmts ??= Object.fromEntries(
      Object.entries(HISTORY_SQL).map(([name, sql]) => [name, this.#db.prepare(sql)]),
    ) as { [K in keyof typeof HISTORY_SQL]: Database.Statement })
  }

  /** One scheduler sample: each partition's second is written once the next one begins. */
  record(ts: number, partitions: readonly PartitionSnapshot[]): void {
    const done: Second[] = []
    const second = ts - (ts % SECOND)
    for (const p of partitions) {
      const before = this.#throttles.get(p.partition) ?? p.throttles
      this.#throttles.set(p.partition, p.throttles)
      // A counter that dropped restarted with a new session: no throttle in that.
      const throttles = Math.max(0, p.throttles - before)
      const open = this.#open.get(p.partition)
      const idle = p.inflight === 0 && p.waiting === 0
      if (open && open.ts === second) {
        open.endsIdle = idle
        open.limit = p.limit
        open.concurrency = p.concurrency
        open.inflight = Math.max(open.inflight, p.inflight)
        open.waiting = Math.max(open.waiting, p.waiting)
        open.throttles += throttles
        continue
      }
      if (open) done.push(open)
      this.#open.set(p.partition, {
        partition: p.partition,
        ts: second,
        limit: p.limit,
        concurrency: p.concurrency,
        inflight: p.inflight,
        waiting: p.waiting,
        throttles,
        endsIdle: idle,
      })
    }
    if (done.length > 0) this.#write(done, ts)
  }

  /** A pause of this process's scheduler, with its reason. */
  recordPause(pause: PauseView): void {
    this.#guard(() => this.#sql.pause.run(pause))
  }

  /** Writes the seconds still open (the run ends, the engine closes). */
  flush(now: number): void {
    const open = [...this.#open.values()]
    this.#open.clear()
    if (open.length > 0) this.#write(open, now)
  }

  /**
   * Every partition's samples and pauses from `since` on, oldest first; bounded per partition.
   * `known`: partitions the scheduler lists (team mode keeps them in its store, not this file).
   */
  read(since: number, known: readonly string[] = []): PacingHistoryView {
    let sql: { [K in keyof typeof HISTORY_SQL]: Database.Statement }
    try {
      sql = this.#sql
    } catch (err) {
      // A read-only look at a file of an older schema: it kept no history.
      if (/no such table/.test((err as Error).message)) return { samples: [], pauses: [] }
      throw err
    }
    const samples: SchedulerSample[] = []
    const pauses: PauseView[] = []
    const names = new Set(known)
    for (let after = ''; names.size < HISTORY_PARTITIONS;) {
      const next = sql.nextPartition.pluck().get(after) as string | undefined
      if (next === undefined) break
      names.add(next)
      after = next
    }
    for (const partition of [...names].slice(0, HISTORY_PARTITIONS)) {
      for (const row of sql.samples.all(partition, since) as Omit<SchedulerSample, 'partition'>[]) {
        samples.push({ partition, ...row })
      }
      // A pause that began before the window may reach into it.
      const rows = sql.pauses.all(partition, since - HISTORY_WINDOW_MS) as Omit<
        PauseView,
        'partition'
      >[]
      for (const row of rows) if (row.until >= since) pauses.push({ partition, ...row })
    }
    return { samples, pauses }
  }

  #write(rows: readonly Second[], now: number): void {
    this.#guard(() => {
      const sql = this.#sql
      this.#db.transaction(() => {
        for (const { endsIdle, ...row } of rows) {
          sql.write.run(row)
          // A second is its busiest moment: the run's end would not show if the idle sample
          // that followed in the same second were not its own point.
          if (endsIdle && (row.inflight > 0 || row.waiting > 0)) {
            sql.write.run({ ...row, ts: row.ts + SECOND, inflight: 0, waiting: 0, throttles: 0 })
          }
          const pruned = this.#prunedAt.get(row.partition) ?? 0
          if (now - pruned >= PRUNE_EVERY_MS) {
            this.#prunedAt.set(row.partition, now)
            sql.prune.run(row.partition, now - RETAIN_MS)
            sql.prunePauses.run(row.partition, now - RETAIN_MS)
          }
        }
      })()
    })
  }

  /** The chart's history is no reason to fail a run: a busy or full database costs a warning. */
  #guard(write: () => void): void {
    try {
      write()
      this.#failed = false
    } catch (err) {
      if (!this.#failed) this.#warn(`concurrency history not written: ${(err as Error).message}`)
      this.#failed = true
    }
  }
}
